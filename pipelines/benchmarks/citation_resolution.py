"""How well the citation resolver resolves real citations: precision and recall of its ``exact``
units against two gold sets, for the acts the corpus holds.

**Dates.** A unit is ``exact`` only in the version in force at the date asked. The gold decisions
are old (refex 1966–2019, SAOS all 2011), mostly before the oldest held version of their act (BGB
2012-12-02, HGB 2021-08-10, k.c. 2024-12-19, k.p.c. 2023-08-16, k.p. 2016-09-22, k.k. 2026-07-28),
where the resolver rightly answers ``not_covered``. So each held act is read on the decision date
or, when that is before its oldest held version, on that version — the nearest text the corpus
holds (:func:`exact_units_nearest`). For SAOS the literal judgment-date rows are reported too:
they measure that the resolver refuses to guess (predicted 0).

**German — refex** (``<sample_dir>/de/refex``, the openlegaldata gold of law citations with spans;
documents and dev/test split from :mod:`pipelines.citations.evaluation`; decision date from the
doc id): a gold reference counts when its act (``book``, normalised by
:func:`~pipelines.citations.evaluation.gold_act_key`) is held and its span does not print another
act (``§ 26 Abs. 1 SGB X`` labelled ``bgb``: :func:`~pipelines.citations.evaluation.label_contradicts_span`,
the project's rule for gold labelling errors). Its gold units are the § / Art. (``de:bgb:par:823``,
``de:gg:art:80``) and, where the gold gives an Absatz, that Absatz (``de:gg:art:80:abs:1``). The
resolver runs on the whole decision text; its prediction is the set of units it marks ``exact`` in
held acts. Per document, sets compared (summed over documents):

* §/Art. level — P = predicted articles that are gold / predicted articles (the articles of the
  resolver's exact units), R = gold articles resolved exact / gold articles;
* Absatz level — the same over Absatz ids (the resolver's exact units cut to their Absatz; only gold
  references that name an Absatz count; predictions without an Absatz are not Absatz predictions).

**Polish — SAOS** (``<sample_dir>/pl/saos/judgments-page-N.json``; page 347 is dev, 355 test —
the split of :mod:`pipelines.citations.pl_evaluation`): gold is the judgment's SAOS
``referencedRegulations`` as (act id, article) pairs of held acts (regulation ``§`` units left out:
no held act has them); the prediction is the (act, article) pairs of the resolver's ``exact`` units
on the judgment's clean text. SAOS is not a gold standard (see pl_evaluation): it lists articles
that were in the 2011 text and are gone since, and restores lost superscripts wrongly (``art.
1016 k.c.`` — inheritance — listed as ``101^6``; ``art. 1148^1 k.p.c.`` as ``114^81``).

``not_in_corpus`` counts gold units no held version contains (a resolver must say ``not_found`` /
``partial`` there, never ``exact``; ``neighbour_exact`` counts an exact unit on the span of such a
gold unit — must be 0). ``confusions`` are § 823 / § 1823 style errors (:func:`number_confusion`):
for refex an exact unit on a span overlapping a gold span of the same act whose base number begins
or ends the gold's (or the reverse); for SAOS, without spans, a missed gold article and an extra
article of the same judgment and act in that relation, after pairing the ones with the same digits
(``superscript_readings``, reported apart). Both must be 0.

Measured (``.venv/bin/python bench/resolver_quality.py --home .lexpipe``; the full corpus of
``make run``; 2 cores, ~10 s German, ~17 s Polish):

=====================  =====  =====  =====  =====  =====  ======  ======
split                  gold   pred   P      R      F1     not in  confus.
=====================  =====  =====  =====  =====  =====  ======  ======
refex dev §/Art.       21     21     0.952  0.952  0.952  0       0
refex dev Abs.         12     12     1.000  1.000  1.000  0       0
refex test §/Art.      19     22     0.864  1.000  0.927  0       0
refex test Abs.        8      10     0.800  1.000  0.889  0       0
SAOS dev, judg. date   535    0      0      0      0      32      0
SAOS dev, held text    535    523    0.937  0.916  0.926  32      0
SAOS test, judg. date  382    0      0      0      0      14      0
SAOS test, held text   382    376    0.923  0.908  0.916  14      0
=====================  =====  =====  =====  =====  =====  ======  ======

Read on dev: the one refex dev error is the gold's (``§ 75 d HGB`` annotated as number 75; the
resolver's ``de:hgb:par:75d`` is right). On test, the extras are citations the gold leaves out
(``§§ 511, 513, 517, 519, 520 ZPO``: gold has 511 and 520 only) and ``§ 1908i Abs. 1`` (gold without
Absatz). 12 of the SAOS dev disagreements are superscript readings where SAOS is wrong. All figures
come from the resolver's current rules: nothing is tuned here, and nothing on the test rows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pipelines.citations.evaluation import (PRF, RefexDoc, Span, gold_act_key, label_contradicts_span, load_refex,
                                           split_dev_test)

__all__ = ["GoldUnit", "QualityRow", "refex_gold", "held_acts", "evaluate_refex", "evaluate_saos",
           "refex_rows", "saos_rows", "number_confusion", "superscript_reading", "nearest_held_dates",
           "exact_units_nearest",
           "decision_date"]

EXACT = "exact"
# a printed number read with its lost superscript (SAOS texts are PDF extractions: "art. 4491" for 449^1)
RESOLVED = frozenset({EXACT, "read_as"})
_NUM = re.compile(r"\d+")
_DOC_DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})_")


def _field(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


@dataclass(frozen=True)
class GoldUnit:
    """One refex law reference of a held act, as corpus ids."""

    doc_id: str
    start: int
    end: int
    text: str
    act_id: str
    article_id: str  # de:bgb:par:823
    absatz_id: str | None  # de:bgb:par:823:abs:1 when the gold names an Absatz
    number: str  # the gold § / Art. number, as printed ("74a")


@dataclass
class QualityRow:
    """One table row: a split (or a split and a level)."""

    split: str
    prf: PRF = field(default_factory=PRF)
    gold: int = 0  # gold units (sets per document/judgment, summed)
    predicted: int = 0  # predicted units (same)
    not_in_corpus: int = 0  # gold units no held version contains
    neighbour_exact: int = 0  # of those, resolved exact to another unit on the same span (must be 0)
    confusions: list[dict] = field(default_factory=list)  # § 823 vs § 1823 errors (must be none)
    superscript_readings: list[dict] = field(default_factory=list)  # same digits, read differently (SAOS)
    docs: int = 0
    missed: list[dict] = field(default_factory=list)  # gold units not resolved exact (for reading)
    extra: list[dict] = field(default_factory=list)  # exact units that are not gold (for reading)

    def add(self, pred: set, gold: set) -> None:
        self.prf += PRF(len(pred & gold), len(pred - gold), len(gold - pred))
        self.gold += len(gold)
        self.predicted += len(pred)

    def to_dict(self) -> dict[str, Any]:
        return {"split": self.split, "gold": self.gold, "predicted": self.predicted,
                "tp": self.prf.tp, "precision": round(self.prf.precision, 4), "recall": round(self.prf.recall, 4),
                "f1": round(self.prf.f1, 4), "not_in_corpus": self.not_in_corpus,
                "neighbour_exact": self.neighbour_exact, "confusions": len(self.confusions),
                "superscript_readings": len(self.superscript_readings), "docs": self.docs}


# ------------------------------------------------------------------------------------------ helpers

def held_acts(reads: Any) -> frozenset[str]:
    """Act ids with at least one published version in the read service's corpus."""
    out = set()
    for a in reads.acts():
        act_id = a if isinstance(a, str) else _field(a, "act_id") or _field(a, "id")
        if act_id and reads.reader.versions(act_id):
            out.add(act_id)
    return frozenset(out)


def _in_any_version(reads: Any, unit_id: str, act_id: str, memo: dict) -> bool:
    key = (unit_id, act_id)
    if key not in memo:
        reader = reads.reader
        memo[key] = any(reader.index(act_id, v).has(unit_id) for v in reader.versions(act_id))
    return memo[key]


def _article_of(unit_id: str) -> str:
    """``de:gg:art:80:abs:1:satz:2`` → ``de:gg:art:80`` (the first four id parts)."""
    return ":".join(unit_id.split(":")[:4])


def _absatz_of(unit_id: str) -> str | None:
    parts = unit_id.split(":")
    return ":".join(parts[:6]) if len(parts) >= 6 and parts[4] == "abs" else None


def _digits(number: str) -> str:
    """The digits of an article number as printed: ``101^6`` → ``1016``, ``74a`` → ``74``."""
    return "".join(_NUM.findall(number or ""))


def number_confusion(gold_number: str, predicted_number: str) -> bool:
    """True for a § 823 / § 1823 style error: the base numbers (digits before any ``^``) differ and
    one begins or ends the other (``823``/``1823``, ``80``/``8``). The same digits read differently
    (``1016`` vs ``101^6``: where a lost superscript goes) are a superscript reading
    (:func:`superscript_reading`), not this; ``2`` vs ``385^2`` is neither (base ``385``)."""
    if superscript_reading(gold_number, predicted_number):
        return False
    g, p = _NUM.match(gold_number or ""), _NUM.match(predicted_number or "")
    if not g or not p or g.group(0) == p.group(0):
        return False
    short, long_ = sorted((g.group(0), p.group(0)), key=len)
    return long_.startswith(short) or long_.endswith(short)


def superscript_reading(gold_number: str, predicted_number: str) -> bool:
    """Different numbers printed with the same digits: ``101^6`` vs ``1016``, ``114^81`` vs ``1148^1``."""
    return (gold_number != predicted_number and "^" in gold_number + predicted_number
            and _digits(gold_number) == _digits(predicted_number) != "")


def _exact_units(resolution: Any, held: frozenset[str]) -> list[tuple[int, int, str]]:
    """(start, end, unit id) of every unit of a held act a resolution resolved (exact, or exact under the
    reading of a lost superscript)."""
    out = []
    for c in _field(resolution, "citations", []) or []:
        for u in _field(c, "units", []) or []:
            uid = _field(u, "unit_id")
            if _field(u, "match") in RESOLVED and uid and ":".join(uid.split(":")[:2]) in held:
                out.append((_field(c, "start"), _field(c, "end"), uid))
    return out


def nearest_held_dates(reads: Any, day: str | None, acts: Iterable[str]) -> dict[str, str]:
    """Per act, the date to read it on: ``day``, or the act's oldest held version when ``day`` is
    before it (or unknown) — the nearest text the corpus holds."""
    out = {}
    for a in sorted(acts):
        versions = reads.reader.versions(a)
        if versions:
            out[a] = max(day, versions[0]) if day else versions[0]
    return out


def exact_units_nearest(resolver: Any, reads: Any, text: str, day: str | None, acts: Iterable[str],
                        language: str) -> list[tuple[int, int, str]]:
    """Exact units of ``acts`` with each act read on its :func:`nearest_held_dates` date (one
    resolve call per distinct date, keeping that date's acts' units)."""
    by_date: dict[str, set[str]] = {}
    for a, d in nearest_held_dates(reads, day, acts).items():
        by_date.setdefault(d, set()).add(a)
    out: list[tuple[int, int, str]] = []
    for d, group in sorted(by_date.items()):
        out += _exact_units(resolver.resolve(text, as_of=d, language=language), frozenset(group))
    return sorted(out)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return min(a[1], b[1]) > max(a[0], b[0])


# ------------------------------------------------------------------------------------------ German

def refex_gold(directory: Path, docs: Sequence[RefexDoc], held: frozenset[str]) -> dict[str, list[GoldUnit]]:
    """doc id → gold units of held acts, from ``annotations.jsonl`` (``unit``/``delimiter``,
    ``number`` and ``structure.absatz``, which :func:`load_refex` does not keep)."""
    wanted = {d.doc_id for d in docs}
    path = Path(directory) / "annotations.jsonl"
    out: dict[str, list[GoldUnit]] = {d: [] for d in wanted}
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            if obj.get("doc_id") not in wanted:
                continue
            for c in obj.get("citations") or []:
                if c.get("type") != "law" or not c.get("number"):
                    continue
                key = gold_act_key(c.get("book"))
                act_id = f"de:{key}" if key else None
                if act_id not in held:
                    continue
                sp = c.get("span") or {}
                if label_contradicts_span(Span(0, 1, sp.get("text", ""), key, c.get("number"))):
                    continue  # "§ 26 Abs. 1 SGB X" labelled bgb: a labelling error of the gold, not a BGB unit
                kind = "art" if (c.get("unit") == "article" or str(c.get("delimiter", "")).startswith("Art")) else "par"
                number = str(c["number"]).strip().lower().replace(" ", "")
                article = f"{act_id}:{kind}:{number}"
                absatz = (c.get("structure") or {}).get("absatz")
                if not isinstance(sp.get("start"), int) or not isinstance(sp.get("end"), int):
                    raise ValueError(f"{path}:{n}: citation {c.get('id')!r} has no integer span")
                out[obj["doc_id"]].append(GoldUnit(obj["doc_id"], sp["start"], sp["end"], sp.get("text", ""), act_id,
                                                   article,
                                                   f"{article}:abs:{str(absatz).strip().lower()}" if absatz else None,
                                                   number))
    return out


def decision_date(doc_id: str) -> str | None:
    """The date refex ids carry (``bgh_2019-08-29_3baf23320887`` → ``2019-08-29``), else None."""
    m = _DOC_DATE.search(doc_id)
    return m.group(1) if m else None


def evaluate_refex(resolver: Any, reads: Any, docs: Sequence[RefexDoc], gold: Mapping[str, list[GoldUnit]],
                   split: str) -> tuple[QualityRow, QualityRow]:
    """(article-level row, Absatz-level row) of one split; each held German act read on the
    decision date or, before its oldest held version, on that version (module docstring)."""
    held = held_acts(reads)
    german = frozenset(a for a in held if a.startswith("de:"))
    art, ab = QualityRow(f"{split} §/Art."), QualityRow(f"{split} Abs.")
    memo: dict = {}
    for d in docs:
        units = gold.get(d.doc_id, [])
        exact = exact_units_nearest(resolver, reads, d.text, decision_date(d.doc_id), german, "de")
        pred_art = {_article_of(u) for _, _, u in exact}
        pred_abs = {a for _, _, u in exact if (a := _absatz_of(u))}
        gold_art = {g.article_id for g in units}
        gold_abs = {g.absatz_id for g in units if g.absatz_id}
        art.add(pred_art, gold_art)
        ab.add(pred_abs, gold_abs)
        art.docs += 1
        ab.docs += 1
        for row, wanted, kind in ((art, gold_art, "article_id"), (ab, gold_abs, "absatz_id")):
            for uid in sorted(wanted):
                if not _in_any_version(reads, uid, ":".join(uid.split(":")[:2]), memo):
                    row.not_in_corpus += 1
                    spans = [(g.start, g.end) for g in units if getattr(g, kind) == uid]
                    wrong = sorted({u for s, e, u in exact if any(_overlaps((s, e), sp) for sp in spans)
                                    and (_article_of(u) if kind == "article_id" else _absatz_of(u)) != uid})
                    if wrong:
                        row.neighbour_exact += 1
                        row.extra.extend({"doc_id": d.doc_id, "gold_not_in_corpus": uid, "resolved": w} for w in wrong)
            found = pred_art if kind == "article_id" else pred_abs
            row.missed.extend({"doc_id": d.doc_id, "gold": u} for u in sorted(wanted - found))
        art.extra.extend({"doc_id": d.doc_id, "resolved": u} for u in sorted(pred_art - gold_art))
        ab.extra.extend({"doc_id": d.doc_id, "resolved": u} for u in sorted(pred_abs - gold_abs))
        for g in units:
            for s, e, u in exact:
                if ":".join(u.split(":")[:2]) != g.act_id or not _overlaps((s, e), (g.start, g.end)):
                    continue
                got = _article_of(u).split(":")[3]
                if number_confusion(g.number, got):
                    art.confusions.append({"doc_id": d.doc_id, "span": g.text, "gold": g.article_id, "resolved": u})
    return art, ab


def refex_rows(resolver: Any, reads: Any, directory: Path, *, limit_docs: int | None = None) -> list[QualityRow]:
    """Article and Absatz rows for dev and test."""
    docs = load_refex(Path(directory))
    dev, test = split_dev_test(docs)
    held = held_acts(reads)
    rows: list[QualityRow] = []
    for name, part in (("dev", dev), ("test", test)):
        part = part[:limit_docs] if limit_docs else part
        gold = refex_gold(Path(directory), part, held)
        rows.extend(evaluate_refex(resolver, reads, part, gold, name))
    return rows


# ------------------------------------------------------------------------------------------ Polish

def _article_number(unit_id: str) -> str | None:
    parts = unit_id.split(":")
    return parts[3] if len(parts) >= 4 and parts[2] == "art" else None


def evaluate_saos(resolver: Any, reads: Any, judgments: Sequence[Any], split: str, *,
                  mode: str = "judgment_date") -> QualityRow:
    """One row: the resolver's exact (act, article) pairs against SAOS's, held acts only.

    ``mode``: ``judgment_date`` resolves on the judgment's date; ``held_text`` reads each held act
    on the judgment date or, before its oldest held version, on that version
    (:func:`exact_units_nearest`)."""
    if mode not in ("judgment_date", "held_text"):
        raise ValueError(f"mode must be 'judgment_date' or 'held_text', not {mode!r}")
    held = held_acts(reads)
    polish = frozenset(a for a in held if a.startswith("pl:"))
    row = QualityRow(f"{split} ({mode.replace('_', ' ')})")
    memo: dict = {}
    for j in judgments:
        gold = {(a, n) for a, n in j.saos if a in polish and not n.startswith("§")}
        if mode == "judgment_date":
            exact = _exact_units(resolver.resolve(j.text, as_of=j.date, language="pl"), polish)
        else:
            exact = exact_units_nearest(resolver, reads, j.text, j.date, polish, "pl")
        pred = {(":".join(u.split(":")[:2]), n) for _, _, u in exact if (n := _article_number(u))}
        row.add(pred, gold)
        row.docs += 1
        for a, n in sorted(gold):
            if not _in_any_version(reads, f"{a}:art:{n}", a, memo):
                row.not_in_corpus += 1
                if (a, n) in pred:  # cannot happen unless exact ignores the corpus
                    row.neighbour_exact += 1
        for a, n in sorted(gold - pred):
            row.missed.append({"judgment_id": j.judgment_id, "gold": f"{a}:art:{n}"})
        for a, n in sorted(pred - gold):
            row.extra.append({"judgment_id": j.judgment_id, "resolved": f"{a}:art:{n}"})
        # Without spans, a missed gold article and an extra one of the same act are paired by number:
        # same digits read differently first (SAOS's superscripts); what neither explains is then
        # checked for § 823 / § 1823 style confusions.
        missed, extra = sorted(gold - pred), sorted(pred - gold)
        sup = [(g, x) for g in missed for x in extra if g[0] == x[0] and superscript_reading(g[1], x[1])]
        explained = {g for g, _ in sup} | {x for _, x in sup}
        row.superscript_readings += [_pair(j.judgment_id, g, x) for g, x in sup]
        row.confusions += [_pair(j.judgment_id, g, x) for g in missed for x in extra
                           if g[0] == x[0] and g not in explained and x not in explained
                           and number_confusion(g[1], x[1])]
    return row


def _pair(judgment_id: int, gold: tuple[str, str], resolved: tuple[str, str]) -> dict:
    return {"judgment_id": judgment_id, "gold": f"{gold[0]}:art:{gold[1]}",
            "resolved": f"{resolved[0]}:art:{resolved[1]}"}


def saos_rows(resolver: Any, reads: Any, pages: Mapping[str, Path], *, limit: int | None = None,
              modes: Sequence[str] = ("judgment_date", "held_text")) -> list[QualityRow]:
    """Rows per page (split name → dump page) and mode."""
    from pipelines.citations.pl_evaluation import load_page

    rows = []
    for split, path in pages.items():
        judgments = load_page(Path(path))
        judgments = judgments[:limit] if limit else judgments
        rows.extend(evaluate_saos(resolver, reads, judgments, split, mode=m) for m in modes)
    return rows
