"""GerLayQA (``de/gerlayqa/bgb_dev.json``) → benchmark questions.

The file is one JSON array of ``{"Question_text": str, "Paragraphs": ["§ 816", "§ 573b", …]}``:
German lay questions with the BGB sections a lawyer's answer cited. No options and no gold option,
so those stay null; the gold references are BGB sections ``de:bgb:par:573b`` (in German statutes
the § is the article-level unit, hence ``unit_id == article_id``). They are ``in_corpus=False``
until German statutes are part of the corpus (pass ``corpus_acts={"de:bgb"}`` then).
``question_id`` is the 0-based position in the array: the file has no ids of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

from pipelines.benchmarks.legal_basis import exam_corpus_acts, UnitRef
from pipelines.benchmarks.records import BenchmarkQuestion, relative_source

BENCHMARK = "gerlayqa"
ACT_ID = "de:bgb"
SECTION_RE = re.compile(r"^§+\s*(?P<num>\d+[a-z]?)\s*(?:BGB)?$", re.I)


class GerLayQAError(ValueError):
    """The GerLayQA file does not have the expected structure."""


def bgb_ref(raw: str, corpus_acts: Iterable[str] | None = None) -> UnitRef:
    """``§ 573b`` → ``de:bgb:par:573b``; an unreadable citation keeps its raw text with null ids."""
    m = SECTION_RE.match(raw.strip())
    if not m:
        return UnitRef(None, None, None, False, raw.strip())
    unit = f"{ACT_ID}:par:{m.group('num').lower()}"
    corpus = exam_corpus_acts() if corpus_acts is None else frozenset(corpus_acts)
    return UnitRef(ACT_ID, unit, unit, ACT_ID in corpus, raw.strip())


def load_gerlayqa(path: Path, *, sample_dir: Path | None = None,
                  corpus_acts: Iterable[str] | None = None) -> list[BenchmarkQuestion]:
    """All questions of one GerLayQA split, in file order."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise GerLayQAError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, list):
        raise GerLayQAError(f"{path}: expected a JSON array of questions, got {type(data).__name__}")
    corpus = exam_corpus_acts() if corpus_acts is None else frozenset(corpus_acts)
    source = relative_source(path, sample_dir)
    out: list[BenchmarkQuestion] = []
    for i, r in enumerate(data):
        if not isinstance(r, dict) or not str(r.get("Question_text") or "").strip() \
                or not isinstance(r.get("Paragraphs"), list):
            raise GerLayQAError(f"{path}: item {i} lacks 'Question_text' or a 'Paragraphs' list")
        sections = [str(p).strip() for p in r["Paragraphs"] if str(p).strip()]
        refs = list({ref.unit_id or ref.raw: ref for ref in (bgb_ref(p, corpus) for p in sections)}.values())
        out.append(BenchmarkQuestion(
            benchmark=BENCHMARK, source=source, source_format="json", question_id=str(i),
            language="de", question=re.sub(r"\s+", " ", r["Question_text"]).strip(),
            legal_basis="; ".join(sections), gold_refs=refs,
        ))
    return out
