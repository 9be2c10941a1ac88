"""The in-memory record every benchmark loader produces, and the text normalisation used to
compare and de-duplicate questions across sources.

One record type for all sources (exam JSONL, exam PDFs, GerLayQA) so that the table builder,
the dedup and the tests never special-case a source: a source without options (GerLayQA) simply
leaves ``options`` and ``gold_option`` empty.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pipelines.benchmarks.legal_basis import UnitRef

_UNIFY = {"\u2013": "-", "\u2014": "-", "\u2011": "-", "\u2212": "-", "\u201e": '"', "\u201d": '"',
          "\u201c": '"', "\u00bb": '"', "\u00ab": '"', "\u2019": "'", "\u2018": "'", "\u00ad": ""}
_UNIFY_RE = re.compile("[" + "".join(_UNIFY) + "]")
_SPACE_RE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Comparison form: NFC, soft hyphens dropped, dashes/quotes unified, whitespace collapsed,
    case-folded. Not NFKC: that would turn a printed superscript ``¹`` into a plain ``1`` and
    make ``385¹`` equal ``3851``."""
    text = _UNIFY_RE.sub(lambda m: _UNIFY[m.group()], unicodedata.normalize("NFC", text))
    return _SPACE_RE.sub(" ", text).strip().casefold()


def relative_source(path: Path, root: Path | None) -> str:
    """``path`` relative to the sample dir (POSIX), the ``source`` column; the full path when the
    file lies elsewhere (tests), so ids stay unique either way."""
    path = Path(path)
    if root is not None:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


@dataclass(frozen=True)
class Option:
    letter: str  # "A"
    text: str


@dataclass
class BenchmarkQuestion:
    """One question of one source. ``source`` is the file path relative to the sample dir (POSIX),
    so ``id`` says where to look when a row is wrong."""

    benchmark: str  # pl_exams | gerlayqa
    source: str  # e.g. pl/exams/2025/adwokacki_radcowy.jsonl
    source_format: str  # jsonl | pdf | json
    question_id: str  # as numbered by the source ("12"); row index for GerLayQA
    language: str  # pl | de
    question: str
    legal_basis: str  # raw, as printed by the source
    gold_refs: list[UnitRef]
    options: list[Option] | None = None
    gold_option: str | None = None
    year: int | None = None
    exam: str | None = None  # adwokacki_radcowy | komorniczy | notarialny
    exam_date: dt.date | None = None
    also_in: list[str] = field(default_factory=list)  # ids of dropped duplicates (filled by dedup)

    @property
    def id(self) -> str:
        return f"{self.benchmark}:{self.source}#{self.question_id}"

    @cached_property
    def text_hash(self) -> str:
        """sha256 of the normalised question plus options: the dedup key. Options are part of it
        because exams re-use a stem with different options (171 stems in 2012–2025) — those are
        different items with different gold answers."""
        parts = [normalize_text(self.question)]
        for o in self.options or []:
            parts.append(f"{o.letter}) {normalize_text(o.text)}")
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def to_row(self) -> dict:
        return {
            "id": self.id,
            "benchmark": self.benchmark,
            "source": self.source,
            "source_format": self.source_format,
            "year": self.year,
            "exam": self.exam,
            "exam_date": self.exam_date,
            "question_id": self.question_id,
            "language": self.language,
            "question": self.question,
            "options": None if self.options is None else [{"letter": o.letter, "text": o.text} for o in self.options],
            "gold_option": self.gold_option,
            "legal_basis": self.legal_basis,
            "gold_refs": [r.to_dict() for r in self.gold_refs],
            "text_hash": self.text_hash,
            "also_in": list(self.also_in),
        }
