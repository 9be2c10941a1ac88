"""Precision/recall of statute-citation extraction against the refex gold standard.

The gold (``<sample_dir>/de/refex``, the benchmark of openlegaldata/legal-reference-extraction):
``documents.jsonl`` (+ ``html_documents.jsonl``, ``markdown_documents.jsonl``) hold decisions with
their canonical plain-text projection ``text``; ``annotations.jsonl`` holds, per ``doc_id``,
citations with character spans into that ``text``, of ``type`` ``law`` (statutes, EU acts) or
``case`` (decisions). Law citations carry ``book`` (the act, lower case) and ``number`` (the § /
Art.). Only law citations are evaluated here; case citations are out of scope. Documents without
an annotation line have no gold and are not scored.

Matching rules (both reported):

* **exact** — a prediction is correct iff its ``(start, end)`` equals a gold span;
* **overlap** — predictions and gold spans that share at least one character are paired one to
  one, largest overlap first (ties: earlier gold first); refex's own benchmark reports the same two.
* **target** — on overlap-matched pairs, correct iff the act and the § / Art. number agree:
  our ``act_key`` and ``number`` against the gold ``book`` normalised by the same act table
  (:func:`gold_act_key`) and ``number``. Only citations that have a target on both sides count
  (EU acts and gold entries without book or number are left out of this metric); a prediction
  with a target that matches no gold span is a false positive, a gold entry with a target that no
  prediction with the right target overlaps is a false negative.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from pipelines.citations import acts as A

DOC_FILES = ("documents.jsonl", "html_documents.jsonl", "markdown_documents.jsonl")
ANNOTATION_FILE = "annotations.jsonl"


class RefexFormatError(ValueError):
    """A refex file is not what the schema says (message names file, line and reason)."""


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str = ""
    act: str | None = None  # target act key (normalised)
    number: str | None = None  # target § / Art. number

    @property
    def target(self) -> tuple[str, str] | None:
        return (self.act, self.number) if self.act and self.number else None


@dataclass
class RefexDoc:
    doc_id: str
    text: str
    fmt: str
    source_file: str
    gold: list[Span] | None = None  # law citations; None when the document has no annotation


@dataclass
class PRF:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __iadd__(self, other: "PRF") -> "PRF":
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        return self


def gold_act_key(book: str | None) -> str | None:
    """refex ``book`` → our act key. A bare numeral is a Sozialgesetzbuch book (refex writes the
    SGB V as ``5``); anything our table does not know keeps its lower-case form."""
    if not book:
        return None
    b = book.strip()
    if re.fullmatch(r"\d{1,2}|[ivx]{1,4}", b, re.I):
        try:
            return A.sgb_key(b.upper())
        except (KeyError, ValueError):
            return None
    return A.act_key(b) or b.lower()


def printed_act_keys(text: str) -> set[str]:
    """Act keys of every act name/abbreviation printed in ``text`` (our act table only)."""
    from pipelines.citations.german import ABBR, FULL_NAME

    keys = set()
    for rx, group in ((ABBR, "abbr"), (FULL_NAME, "full")):
        for m in rx.finditer(text):
            k = A.act_key(m.group(group))
            if k:
                keys.add(k)
    return keys


def label_contradicts_span(g: Span) -> bool:
    """True when the gold span prints an act and the gold ``book`` is none of the printed acts
    (e.g. span "§ 13 Abs 3a S 1 SGB V" labelled book "sgg"): a labelling error of the gold."""
    printed = printed_act_keys(g.text)
    return bool(printed) and g.act is not None and g.act not in printed


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RefexFormatError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise RefexFormatError(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            yield n, obj


def load_refex(directory: Path) -> list[RefexDoc]:
    """Every refex document, with its law gold spans (verified against the text) when annotated."""
    directory = Path(directory)
    docs: dict[str, RefexDoc] = {}
    for name in DOC_FILES:
        path = directory / name
        if not path.exists():
            continue
        for n, obj in _read_jsonl(path):
            for key in ("doc_id", "text", "format"):
                if not isinstance(obj.get(key), str):
                    raise RefexFormatError(f"{path}:{n}: field {key!r} missing or not a string")
            if obj["doc_id"] in docs:
                raise RefexFormatError(f"{path}:{n}: duplicate doc_id {obj['doc_id']!r}")
            docs[obj["doc_id"]] = RefexDoc(obj["doc_id"], obj["text"], obj["format"], name)
    if not docs:
        raise RefexFormatError(f"{directory}: none of {DOC_FILES} found")
    ann_path = directory / ANNOTATION_FILE
    if not ann_path.exists():
        raise RefexFormatError(f"{ann_path}: annotation file missing")
    for n, obj in _read_jsonl(ann_path):
        doc = docs.get(obj.get("doc_id"))
        if doc is None:
            raise RefexFormatError(f"{ann_path}:{n}: doc_id {obj.get('doc_id')!r} is in no document file")
        if not isinstance(obj.get("citations"), list):
            raise RefexFormatError(f"{ann_path}:{n}: 'citations' missing or not a list")
        gold = []
        for c in obj["citations"]:
            if c.get("type") != "law":
                continue
            sp = c.get("span") or {}
            s, e = sp.get("start"), sp.get("end")
            if not (isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(doc.text)):
                raise RefexFormatError(f"{ann_path}:{n}: citation {c.get('id')!r} has a bad span {sp!r}")
            if doc.text[s:e] != sp.get("text"):
                raise RefexFormatError(f"{ann_path}:{n}: citation {c.get('id')!r}: span text {sp.get('text')!r} "
                                       f"!= document text {doc.text[s:e]!r}")
            gold.append(Span(s, e, sp["text"], gold_act_key(c.get("book")), c.get("number") or None))
        doc.gold = sorted(gold, key=lambda x: (x.start, x.end))
    return sorted(docs.values(), key=lambda d: d.doc_id)


def split_dev_test(docs: Sequence[RefexDoc]) -> tuple[list[RefexDoc], list[RefexDoc]]:
    """Annotated documents sorted by doc_id, alternately dev (even positions) and test (odd)."""
    annotated = sorted((d for d in docs if d.gold is not None), key=lambda d: d.doc_id)
    return annotated[0::2], annotated[1::2]


# ------------------------------------------------------------------------------------------ matching


def match_exact(gold: Sequence[Span], pred: Sequence[Span]) -> list[tuple[int, int]]:
    index = {}
    for gi, g in enumerate(gold):
        index.setdefault((g.start, g.end), []).append(gi)
    pairs = []
    for pi, p in enumerate(pred):
        cands = index.get((p.start, p.end))
        if cands:
            pairs.append((cands.pop(0), pi))
    return pairs


def match_overlap(gold: Sequence[Span], pred: Sequence[Span]) -> list[tuple[int, int]]:
    """One-to-one pairs of overlapping spans, largest overlap first, then earliest gold."""
    cand = []
    for gi, g in enumerate(gold):
        for pi, p in enumerate(pred):
            ov = min(g.end, p.end) - max(g.start, p.start)
            if ov > 0:
                cand.append((-ov, gi, pi))
    cand.sort()
    used_g, used_p, pairs = set(), set(), []
    for _, gi, pi in cand:
        if gi in used_g or pi in used_p:
            continue
        used_g.add(gi)
        used_p.add(pi)
        pairs.append((gi, pi))
    return sorted(pairs)


def score_spans(gold: Sequence[Span], pred: Sequence[Span], mode: str) -> PRF:
    pairs = match_exact(gold, pred) if mode == "exact" else match_overlap(gold, pred)
    return PRF(len(pairs), len(pred) - len(pairs), len(gold) - len(pairs))


def score_targets(gold: Sequence[Span], pred: Sequence[Span]) -> PRF:
    pairs = match_overlap(gold, pred)
    g_t = [i for i, g in enumerate(gold) if g.target]
    p_t = [i for i, p in enumerate(pred) if p.target]
    tp = sum(1 for gi, pi in pairs if gold[gi].target and pred[pi].target and gold[gi].target == pred[pi].target)
    # a prediction paired with a gold span that has no target is neither right nor wrong here
    excluded = sum(1 for gi, pi in pairs if pred[pi].target and not gold[gi].target)
    return PRF(tp, len(p_t) - tp - excluded, len(g_t) - tp)


@dataclass
class Scores:
    exact: PRF = field(default_factory=PRF)
    overlap: PRF = field(default_factory=PRF)
    target: PRF = field(default_factory=PRF)
    docs: int = 0

    def add(self, gold: Sequence[Span], pred: Sequence[Span]) -> None:
        self.exact += score_spans(gold, pred, "exact")
        self.overlap += score_spans(gold, pred, "overlap")
        self.target += score_targets(gold, pred)
        self.docs += 1


def evaluate(docs: Sequence[RefexDoc], predictions: dict[str, list[Span]]) -> Scores:
    scores = Scores()
    for d in docs:
        if d.gold is None:
            continue
        scores.add(d.gold, predictions.get(d.doc_id, []))
    return scores
