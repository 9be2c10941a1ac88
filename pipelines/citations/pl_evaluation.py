"""Polish citation extraction measured against SAOS's ``referencedRegulations``.

Unit of comparison: per judgment, the set of (act id, article) pairs — the extractor's
(:func:`pipelines.citations.polish.article_pairs` of the judgment's clean text, a range counting
every article) against SAOS's (:func:`pipelines.citations.saos_regulations.saos_pairs`).
Precision / recall / F1 are micro-averaged over judgments (true positives, false positives and
false negatives summed), in two scopes: **held** — pairs whose act the corpus holds (the Polish acts
of the act registry, read at call time) — and **all** acts. Citations without an act
(``act_id=None``) are no pairs. Every judgment of a page counts, also one whose SAOS list is empty.

Why pairs and not spans: SAOS gives no offsets, only the units per act, and (act, article) is what
citation counts, links and retrieval priors use.

SAOS is not a gold standard: it is SAOS's own extraction. It misses citations (the Supreme
Court's lists often give a few of the articles the reasons discuss), lists acts the text names
only in passing and sometimes files an article under the wrong act (an amending act for the
amended one). ``bench/data/pl_citation_disagreements.jsonl`` classifies a sample of the
disagreements by reading the judgments.

Measured (``.venv/bin/python bench/pl_citations.py``, 2 cores, Python 3.11; page 347 is dev —
every rule was chosen by reading its judgments —, page 355 test, run only to report):

==========  ========  ========  ========  ========  ========  ========
page        held P    held R    held F1   all P     all R     all F1
==========  ========  ========  ========  ========  ========  ========
347 dev     0.940     0.950     0.945     0.803     0.924     0.859
355 test    0.917     0.948     0.932     0.835     0.852     0.843
==========  ========  ========  ========  ========  ========  ========

The goal (F1 ≥ 0.90 on (act, article) for the held acts) is met on both pages. Of 30 disagreements
read against the judgments (15 per page, ``bench/data/pl_citation_disagreements.jsonl``), SAOS was
wrong in 22 (omitted citations, misread lost superscripts and ranges, articles of other acts filed
under the Civil Code) and the extractor in 8 — so the figures understate the extractor. On the
dev page, resolving a bare ``ustawy`` to the statute named last lowered all-acts F1 (0.849 →
0.839: more recall, less precision), so an article with no act named stays ``act_id=None``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from pipelines.case_law.html_text import clean_legal_html
from pipelines.citations import pl_acts as PA
from pipelines.citations.evaluation import PRF
from pipelines.citations.polish import Citation, article_pairs, extract_citations
from pipelines.citations.saos_regulations import saos_pairs

Pair = tuple[str, str]


class SaosFormatError(ValueError):
    """A SAOS dump page is not what the API returns (message names the file and the reason)."""


@dataclass
class Judgment:
    judgment_id: int
    date: str | None
    court_type: str
    text: str
    saos: set[Pair]


def load_page(path: Path) -> list[Judgment]:
    """A SAOS dump page (``{"items": [...], "links": [...]}``) → judgments with clean text and
    SAOS's pairs."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SaosFormatError(f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise SaosFormatError(f"{path}: expected an object with an 'items' list")
    out = []
    for n, it in enumerate(data["items"]):
        if not isinstance(it, dict) or "id" not in it:
            raise SaosFormatError(f"{path}: item {n} is not a judgment object with an 'id'")
        html = it.get("textContent") or ""
        out.append(Judgment(it["id"], it.get("judgmentDate"), it.get("courtType") or "",
                            clean_legal_html(html).text if html else "", saos_pairs(it)))
    return out


@dataclass
class Disagreement:
    judgment_id: int
    act_id: str
    article: str
    side: str  # extractor_missed | extractor_extra
    held: bool


@dataclass
class Report:
    held: PRF = field(default_factory=PRF)
    all: PRF = field(default_factory=PRF)
    judgments: int = 0
    citations: int = 0  # citations the extractor returned (with or without an act)
    unresolved: int = 0  # of those, without an act
    extracted_pairs: int = 0
    saos_pairs: int = 0
    seconds: float = 0.0
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def citations_per_second(self) -> float:
        return self.citations / self.seconds if self.seconds else 0.0


def score(pred: set[Pair], gold: set[Pair], held: frozenset[str]) -> tuple[PRF, PRF]:
    """(held-acts PRF, all-acts PRF) of one judgment."""
    def prf(p: set[Pair], g: set[Pair]) -> PRF:
        return PRF(len(p & g), len(p - g), len(g - p))
    hp = {x for x in pred if x[0] in held}
    hg = {x for x in gold if x[0] in held}
    return prf(hp, hg), prf(pred, gold)


Extractor = Callable[[str, str | None], list[Citation]]


def _default_extract(text: str, date: str | None) -> list[Citation]:
    return extract_citations(text, date=date)


def evaluate(judgments: Sequence[Judgment], extract: Extractor = _default_extract) -> Report:
    """Extract every judgment's citations and score its pairs against SAOS's."""
    held = PA.held_ids()
    rep = Report()
    for j in judgments:
        t = time.perf_counter()
        cits = extract(j.text, j.date)
        rep.seconds += time.perf_counter() - t
        pred = article_pairs(cits)
        rep.citations += len(cits)
        rep.unresolved += sum(1 for c in cits if c.act_id is None and c.article is not None)
        rep.extracted_pairs += len(pred)
        rep.saos_pairs += len(j.saos)
        h, a = score(pred, j.saos, held)
        rep.held += h
        rep.all += a
        rep.judgments += 1
        for act, art in sorted(j.saos - pred):
            rep.disagreements.append(Disagreement(j.judgment_id, act, art, "extractor_missed", act in held))
        for act, art in sorted(pred - j.saos):
            rep.disagreements.append(Disagreement(j.judgment_id, act, art, "extractor_extra", act in held))
    return rep


def evaluate_page(path: Path, extract: Extractor = _default_extract) -> Report:
    return evaluate(load_page(path), extract)


def format_prf(p: PRF) -> str:
    return f"{p.precision:.3f} / {p.recall:.3f} / {p.f1:.3f}"


def disagreements_of(report: Report, *, held_only: bool = False) -> Iterable[dict[str, Any]]:
    for d in report.disagreements:
        if held_only and not d.held:
            continue
        yield {"judgment_id": d.judgment_id, "act_id": d.act_id, "article": d.article, "side": d.side, "held": d.held}
