"""Does the citation resolver name the right act? Precision and recall of its act identification on the
SAOS judgments, for acts the corpus holds and acts it does not hold, dev pages vs test pages.

**Gold.** A judgment's SAOS ``referencedRegulations``: per act (its journal year and entry, turned
into the same ids as the text's by :func:`pipelines.citations.pl_acts.by_title`) the units cited. It
names acts lexpipe does not hold too (the k.p.k., the pension acts, regulations). SAOS is not a
gold standard (:mod:`pipelines.citations.pl_evaluation`): it omits acts a judgment cites, and its
lists are empty for some judgments (they are not annotated, not free of citations).

**Prediction.** Every citation the resolver returns with an act id (``pl:kc``, ``pl:upk``,
``pl:du:1982:268``, ``pl:ustawa:2006-07-22``), with the article numbers of its units; the judgment's
date is ``as_of`` (it picks among acts sharing a short form). A citation without an act id (no act
named, or one named by a title no table knows) identifies no act.

**Two measures** (micro-averaged over judgments), each for held and for not-held acts:

* *identity* — act identification where the article is known to be cited, so SAOS's omissions do not
  count as errors: a predicted (act, article) is *comparable* when SAOS lists that article number
  for the judgment under any act, and *correct* when SAOS lists it under that act; precision =
  correct / comparable (held or not by the predicted act). Recall: of SAOS's (act, article) whose
  article number the resolver found in the judgment (under any act or none), the share it gave the
  right act (held or not by the gold act). This is the target figure (≥ 0.95 precision on test).
* *acts* — the set of acts per judgment, over the judgments SAOS annotated (a non-empty list): P/R
  of the resolver's acts against SAOS's. It counts SAOS's omissions as false positives.

An act identified only by its date (``pl:ustawa:1998-12-17``, "ustawy z dnia 17 grudnia 1998 r."
with no title or address) names the act of that kind and date: it matches a SAOS act whose journal
title is that kind of act of that date (``Ustawa z dnia 17 grudnia 1998 r. o emeryturach …``).

**Splits** (:func:`saos_split`): the dump pages in ascending page number alternate dev, test, dev, …
— page 347 dev and 355 test as before, then 924 dev, 995 test, 1117 dev, 1287 test, 1324 dev, 1338
test. Rules and the table of known acts were chosen reading dev pages only; test is run to report.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pipelines.citations import pl_acts as PA
from pipelines.citations.saos_regulations import judgment_references

__all__ = ["saos_split", "split_pages", "IdentityRow", "evaluate_identity", "identity_rows", "saos_date_ids"]

SPLITS = ("dev", "test")
_PAGE = re.compile(r"judgments-page-(\d+)\.json$")
_TITLE_DATE = re.compile(r"^(?P<kind>Ustawa|Rozporządzenie|Dekret)\b[^()]*?\s" + PA.DATE_RX)
_INNER_DATE = re.compile(r"jednolitego\s+tekstu\s+(?P<kind>ustawy|rozporządzenia|dekretu)\s+" + PA.DATE_RX, re.I)


def split_pages(pages: Iterable[int]) -> dict[int, str]:
    """Page number → ``dev``/``test``: ascending page numbers alternate dev, test, dev, test, …"""
    return {p: SPLITS[i % 2] for i, p in enumerate(sorted(set(pages)))}


def saos_split(path: Path | str, pages: Iterable[int]) -> str:
    """The split of the dump page ``path`` among ``pages`` (all the page numbers of the collection)."""
    m = _PAGE.search(str(path))
    if not m:
        raise ValueError(f"{path}: not a SAOS dump page (judgments-page-<n>.json)")
    return split_pages(pages)[int(m.group(1))]


def page_files(directory: Path) -> dict[str, list[Path]]:
    """The dump pages of ``directory`` by split."""
    files = sorted(Path(directory).glob("judgments-page-*.json"), key=lambda p: int(_PAGE.search(p.name).group(1)))
    if not files:
        raise FileNotFoundError(f"{directory}: no judgments-page-<n>.json")
    splits = split_pages(int(_PAGE.search(p.name).group(1)) for p in files)
    out: dict[str, list[Path]] = {s: [] for s in SPLITS}
    for p in files:
        out[splits[int(_PAGE.search(p.name).group(1))]].append(p)
    return out


def _date_id(kind: str, m: re.Match) -> str:
    k = "rozporzadzenie" if kind.lower().startswith("rozp") else "ustawa"
    return f"pl:{k}:{PA.iso_date(m)}"


def saos_date_ids(entry: Mapping[str, Any]) -> set[str]:
    """The date ids (``pl:ustawa:1998-12-17``) a ``referencedRegulations`` entry's act answers to: the
    date of a statute or regulation its title names (the republished act's, for an *Obwieszczenie …
    jednolitego tekstu ustawy z dnia …*)."""
    title = re.sub(r"\s+", " ", entry.get("journalTitle") or "")
    out = set()
    m = _TITLE_DATE.match(title)
    if m:
        out.add(_date_id(m.group("kind"), m))
    m = _INNER_DATE.search(title)
    if m:
        out.add(_date_id(m.group("kind"), m))
    return out


@dataclass
class IdentityRow:
    """One split and scope (held / not held)."""

    split: str
    scope: str  # held | not held
    comparable: int = 0  # predicted (act, article) whose article SAOS lists
    correct: int = 0  # of those, with SAOS's act
    gold_found: int = 0  # SAOS (act, article) whose article the resolver found
    gold_identified: int = 0  # of those, found with SAOS's act
    act_tp: int = 0
    act_fp: int = 0
    act_fn: int = 0
    judgments: int = 0
    annotated: int = 0  # judgments with a non-empty SAOS list
    wrong: list[dict] = field(default_factory=list)  # comparable predictions with another act than SAOS's

    @property
    def precision(self) -> float:
        return self.correct / self.comparable if self.comparable else 0.0

    @property
    def recall(self) -> float:
        return self.gold_identified / self.gold_found if self.gold_found else 0.0

    @property
    def act_precision(self) -> float:
        return self.act_tp / (self.act_tp + self.act_fp) if self.act_tp + self.act_fp else 0.0

    @property
    def act_recall(self) -> float:
        return self.act_tp / (self.act_tp + self.act_fn) if self.act_tp + self.act_fn else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"split": self.split, "scope": self.scope, "comparable": self.comparable, "correct": self.correct,
                "precision": round(self.precision, 4), "gold_found": self.gold_found,
                "gold_identified": self.gold_identified, "recall": round(self.recall, 4),
                "act_tp": self.act_tp, "act_fp": self.act_fp, "act_fn": self.act_fn,
                "act_precision": round(self.act_precision, 4), "act_recall": round(self.act_recall, 4),
                "judgments": self.judgments, "annotated": self.annotated, "wrong": len(self.wrong)}


def _article(rel: str) -> str | None:
    """``art:415:par:1`` → ``415``; a regulation's ``par:5`` → ``§5`` (SAOS's pair form)."""
    parts = rel.split(":")
    if len(parts) < 2:
        return None
    return parts[1] if parts[0] == "art" else f"§{parts[1]}" if parts[0] == "par" else None


def predicted_pairs(resolution: Any) -> tuple[set[tuple[str, str]], set[str], set[str]]:
    """(act id, article) pairs of a resolution's citations that name an act, the acts named, and every
    article number found (also in citations without an act)."""
    pairs: set[tuple[str, str]] = set()
    acts: set[str] = set()
    found: set[str] = set()
    for c in resolution.citations:
        arts = {a for u in c.units if (a := _article(u.relative_id))}
        found |= arts
        if c.act_id:
            acts.add(c.act_id)
            pairs |= {(c.act_id, a) for a in arts}
    return pairs, acts, found


def evaluate_identity(resolver: Any, items: Sequence[Mapping[str, Any]], texts: Mapping[int, str], split: str,
                      held: frozenset[str]) -> tuple[IdentityRow, IdentityRow]:
    """(held row, not-held row) of one split: ``items`` are SAOS judgment objects, ``texts`` their
    clean texts by judgment id."""
    rows = {"held": IdentityRow(split, "held"), "not held": IdentityRow(split, "not held")}

    def scope(act: str) -> IdentityRow:
        return rows["held" if act in held else "not held"]

    for it in items:
        jid = it["id"]
        text = texts.get(jid) or ""
        refs = judgment_references(it)
        gold_pairs = {r.pair for r in refs if not (r.pair[1].startswith("§") and PA.top_unit(r.act_id) not in (None, "§"))}
        aliases: dict[str, set[str]] = defaultdict(set)  # gold act → its date ids
        for e in it.get("referencedRegulations") or []:
            ref = PA.by_title(e.get("journalTitle") or e.get("text") or "", e.get("journalYear"), e.get("journalEntry"))
            if ref is not None:
                aliases[ref.id] |= saos_date_ids(e)
        alias_of = {d: g for g, ds in aliases.items() for d in ds}
        gold_acts = {a for a, _ in gold_pairs}
        by_article: dict[str, set[str]] = defaultdict(set)
        for a, n in gold_pairs:
            by_article[n].add(a)
            by_article[n] |= aliases.get(a, set())
        res = resolver.resolve(text, as_of=it.get("judgmentDate"), language="pl")
        pred, pred_acts, found = predicted_pairs(res)
        pred_by_article: dict[str, set[str]] = defaultdict(set)
        for a, n in pred:
            pred_by_article[n].add(alias_of.get(a, a))
        for a, n in sorted(pred):
            if n in by_article:
                row = scope(alias_of.get(a, a))
                row.comparable += 1
                if a in by_article[n]:
                    row.correct += 1
                else:
                    row.wrong.append({"judgment_id": jid, "article": n, "resolved": a, "saos": sorted(by_article[n])})
        for a, n in sorted(gold_pairs):
            if n in found:
                row = scope(a)
                row.gold_found += 1
                row.gold_identified += a in pred_by_article[n]
        for r in rows.values():
            r.judgments += 1
        if gold_acts:
            for r in rows.values():
                r.annotated += 1
            named = {alias_of.get(a, a) for a in pred_acts}
            for a in named | gold_acts:
                row = scope(a)
                row.act_tp += a in named and a in gold_acts
                row.act_fp += a in named and a not in gold_acts
                row.act_fn += a in gold_acts and a not in named
    return rows["held"], rows["not held"]


def identity_rows(resolver: Any, saos_dir: Path, held: frozenset[str], *, limit: int | None = None) -> list[IdentityRow]:
    """Rows for dev and test (held, not held each) over every dump page of ``saos_dir``."""
    from pipelines.citations.pl_evaluation import load_page

    out: list[IdentityRow] = []
    for split, files in page_files(Path(saos_dir)).items():
        items: list[dict] = []
        texts: dict[int, str] = {}
        for path in files:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            page_items = data["items"][:limit] if limit else data["items"]
            wanted = {it["id"] for it in page_items}
            items += page_items
            texts.update({j.judgment_id: j.text for j in load_page(path) if j.judgment_id in wanted})
        out.extend(evaluate_identity(resolver, items, texts, split, held))
    return out
