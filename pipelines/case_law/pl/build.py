"""Polish judgments (SAOS) as ``CASE_CHUNKS`` rows, staged, validated and promoted like the German ones.

Why the German schema and steps: a Polish judgment is searched, cited and checked like a German
decision — court, type, date, file number (sygnatura), section, offsets into a clean text — so its
chunks are rows of the same ``schemas.cases.CASE_CHUNKS`` table, checked by the same case-chunks
Great Expectations suite (:func:`pipelines.case_law.chunks.validate_case_chunks`, whose section
vocabulary includes the Polish names) and staged → promoted under ``$LEXPIPE_HOME/caselaw/pl/chunks``
by the jurisdiction-aware functions of :mod:`pipelines.case_law.case_build`.

How a ``SAOS_JUDGMENTS`` row maps onto ``CASE_CHUNKS``:

* ``source`` "saos", ``case_id`` = ``judgment_id``, ``case_sha256`` = ``content_sha256``, ``slug`` null;
* ``court_id`` = ``division_id``; SAOS sends a division only for common courts and the Supreme
  Court (numbered separately per court type), none for the Constitutional Tribunal and KIO: those
  get ``0`` (the column is not nullable; 0 is no SAOS id);
* ``court_name``: the court the judgment's header names ("Sąd Apelacyjny we Wrocławiu", "Sąd
  Najwyższy", "Trybunał Konstytucyjny", "Krajowa Izba Odwoławcza"), found in its komparycja; else
  by court type (:data:`COURT_TYPE_NAMES`; a common court's REASONS document, whose text opens
  with "Sygn. akt … / UZASADNIENIE", is "Sąd powszechny");
* ``file_number`` = the first case number (sygnatura), ``date`` = ``judgment_date``, ``ecli`` null;
* ``decision_type``: the Polish word of ``judgment_type`` (:data:`DECISION_TYPES`: Wyrok,
  Postanowienie, Uchwała, Uzasadnienie, Zarządzenie);
* ``section`` / ``section_label``: :mod:`pipelines.case_law.pl.sections` (komparycja, teza,
  sentencja, pouczenie, uzasadnienie, rozwazania, zdanie_odrebne, body);
* ``text`` = ``clean[char_start:char_end]`` of :func:`pipelines.case_law.pl.text.clean_judgment_text`;
  ``token_count``: spaCy ``blank("pl")`` tokens; no Randnummern (``rn_*`` null).

Chunks never cross a section (paragraphs are packed per section, clipped to it where the
sentencja begins inside a paragraph), and are bounded by ``max_tokens`` like the German ones. A
judgment that yields no text or misses a required field is returned in ``rejected`` with its
reasons and gives no chunk.

On the 200 judgments of the two real dump pages at 256 tokens: 3,645 chunks (uzasadnienie 1,538,
rozważania 1,526, komparycja 214, sentencja 203, pouczenie 79, zdanie odrębne 77, teza 8), none
rejected, 195 court names from the text and 5 by court type; ~10 s on one core
(``tests/pipelines/case_law/test_pl_judgments.py``).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import Counter
from typing import Any

import pyarrow as pa

from core.atomic import atomic_write_json
from core.layout import Layout
from pipelines.case_law.case_build import (CaseChunkOutcome, CaseBuildError, promote_staged, read_current,
                                           read_staged, staged_path, write_parquet)
from pipelines.case_law.chunks import CaseChunkResult, Piece, _sentence_pieces, count_tokens, pack
from pipelines.case_law.html_text import CleanText
from pipelines.case_law.pl.sections import KOMPARYCJA, Section, split_pl_sections
from pipelines.case_law.pl.text import PL_CLEANER_VERSION, clean_judgment_text
from schemas.arrow import from_rows
from schemas.cases import CASE_CHUNKS

log = logging.getLogger(__name__)

JURISDICTION = "pl"
LANG = "pl"
PL_CHUNKER_VERSION = "pl-case-chunks-1"
SOURCE = "saos"
NO_DIVISION = 0  # court_id of a judgment SAOS sends without a division (TK, KIO)
REQUIRED_JUDGMENT_COLUMNS = ("source", "judgment_id", "court_type", "judgment_type", "case_numbers",
                             "judgment_date", "text_content", "content_sha256")
DECISION_TYPES = {"SENTENCE": "Wyrok", "DECISION": "Postanowienie", "RESOLUTION": "Uchwała",
                  "REASONS": "Uzasadnienie", "REGULATION": "Zarządzenie"}
COURT_TYPE_NAMES = {"SUPREME": "Sąd Najwyższy", "CONSTITUTIONAL_TRIBUNAL": "Trybunał Konstytucyjny",
                    "NATIONAL_APPEAL_CHAMBER": "Krajowa Izba Odwoławcza", "COMMON": "Sąd powszechny",
                    "ADMINISTRATIVE": "Sąd administracyjny"}
COURT_NAME_SOURCES = ("text", "court_type")

_UPPER = "A-ZĄĆĘŁŃÓŚŹŻ"
# "Sąd Apelacyjny we Wrocławiu", "Sąd Okręgowy w Warszawie", "Sąd Rejonowy dla Wrocławia-Fabrycznej
# we Wrocławiu": nominative "Sąd …" (a judgment appealed against is "Sądu …", never matched)
_COMMON_COURT = re.compile(rf"\bSąd (?:Apelacyjny|Okręgowy|Rejonowy)"
                           rf"(?:\s+dla\s+[{_UPPER}][\w-]*(?:\s+[{_UPPER}][\w-]*)?)?"
                           rf"(?:\s+(?:we?|dla)\s+[{_UPPER}][\w-]*(?:-[{_UPPER}][\w-]*)?)?")
_NAMED_COURTS = (("Sąd Najwyższy", re.compile(r"\bS\s?ą\s?d\s+N\s?a\s?j\s?w\s?y\s?ż\s?s\s?z\s?y\b")),
                 ("Trybunał Konstytucyjny", re.compile(r"\bTrybunał Konstytucyjny\b")),
                 ("Krajowa Izba Odwoławcza", re.compile(r"\bKrajowa Izba Odwoławcza\b")))


def court_name(clean: CleanText, sections: list[Section], court_type: str) -> tuple[str, str]:
    """(court name, where it came from: "text" | "court_type") for one judgment."""
    header = "\n".join(clean.text[s.start:s.end] for s in sections if s.name == KOMPARYCJA)
    if court_type == "COMMON":
        m = _COMMON_COURT.search(header)
        if m:
            return m.group(0), "text"
    else:
        for name, pattern in _NAMED_COURTS:
            if pattern.search(header):
                return name, "text"
    return COURT_TYPE_NAMES.get(court_type, court_type), "court_type"


def section_pieces(clean: CleanText, section: Section, max_tokens: int) -> list[Piece]:
    """The paragraphs of a section (heading line excluded), each clipped to the section (the
    sentencja may begin inside a paragraph: "… z dnia 11 lutego 2010 r., oddala …"), long ones
    split into sentences, then by tokens."""
    text = clean.text
    pieces: list[Piece] = []
    for b in clean.blocks:
        s, e = max(b.start, section.body_start), min(b.end, section.end)
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s >= e:
            continue
        n = count_tokens(text[s:e], LANG)
        if n <= max_tokens:
            pieces.append(Piece(s, e, n))
        else:
            pieces.extend(_sentence_pieces(text[s:e], s, max_tokens, LANG))
    return pieces


def _check_columns(judgments: pa.Table) -> None:
    missing = [c for c in REQUIRED_JUDGMENT_COLUMNS if c not in judgments.column_names]
    if missing:
        raise ValueError(f"judgments table lacks columns {missing} (expected schemas.cases.SAOS_JUDGMENTS, "
                         f"got {judgments.column_names})")


def _row_problems(row: dict[str, Any]) -> list[str]:
    problems = []
    for col in ("judgment_id", "court_type", "judgment_type", "judgment_date", "content_sha256"):
        if row.get(col) in (None, ""):
            problems.append(f"{col}: missing")
    numbers = [n for n in (row.get("case_numbers") or []) if isinstance(n, str) and n.strip()]
    if not numbers:
        problems.append("case_numbers: no case number")
    content = row.get("text_content")
    if not isinstance(content, str) or not content.strip():
        problems.append("text_content: empty")
    return problems


def chunk_judgment(row: dict[str, Any], *, max_tokens: int) -> tuple[list[dict[str, Any]], CleanText, str]:
    """Chunk rows (``CASE_CHUNKS`` fields) of one SAOS_JUDGMENTS row and where its court name came
    from; raises ValueError on unusable content."""
    clean = clean_judgment_text(row["text_content"])
    if not clean.text.strip():
        raise ValueError(f"text_content has no text after cleaning ({len(row['text_content'])} characters)")
    sections = split_pl_sections(clean)
    court, court_source = court_name(clean, sections, row["court_type"])
    file_number = next(n.strip() for n in row["case_numbers"] if isinstance(n, str) and n.strip())
    sha = row["content_sha256"]
    rows: list[dict[str, Any]] = []
    for sec in sections:
        spans = pack(clean, section_pieces(clean, sec, max_tokens), max_tokens, LANG)
        for k, (s, e, n) in enumerate(spans):
            text = clean.text[s:e]
            rows.append({
                "chunk_id": f"{SOURCE}:{row['judgment_id']}:{sha[:12]}:{len(rows):04d}",
                "source": row.get("source") or SOURCE, "case_id": row["judgment_id"], "case_sha256": sha,
                "slug": None, "court_id": row.get("division_id") or NO_DIVISION, "court_name": court,
                "date": row["judgment_date"], "file_number": file_number, "ecli": None,
                "decision_type": DECISION_TYPES.get(row["judgment_type"], row["judgment_type"]),
                "section": sec.name, "section_label": sec.label, "section_index": sec.index,
                "chunk_index": len(rows), "section_chunk_index": k,
                "char_start": s, "char_end": e, "rn_first": None, "rn_last": None,
                "text": text, "token_count": n,
                "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "chunker_version": f"{PL_CHUNKER_VERSION}/{PL_CLEANER_VERSION}",
            })
    if not rows:
        raise ValueError("text_content has only headings, no paragraph text to chunk")
    for r in rows:
        r["chunk_count"] = len(rows)
    return rows, clean, court_source


def _newest_per_judgment(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One row per judgment id (the newest ``fetched_at`` when the table holds several versions)."""
    best: dict[Any, dict[str, Any]] = {}
    for r in rows:
        key = r.get("judgment_id")
        old = best.get(key)
        if old is None or (r.get("fetched_at") is not None and old.get("fetched_at") is not None
                           and r["fetched_at"] >= old["fetched_at"]) or old.get("fetched_at") is None:
            best[key] = r
    return list(best.values()), len(rows) - len(best)


def build_pl_case_chunks(judgments: pa.Table, *, max_tokens: int | None = None,
                         keep_texts: bool = False) -> tuple[CaseChunkResult, dict[str, int]]:
    """All chunks of a SAOS_JUDGMENTS table, the judgments refused with their reasons, and how many
    judgments got their court name from each of :data:`COURT_NAME_SOURCES`."""
    _check_columns(judgments)
    if max_tokens is None:
        from core.settings import get_settings

        max_tokens = get_settings().chunk_max_tokens
    if max_tokens < 8:
        raise ValueError(f"max_tokens must be at least 8, got {max_tokens}")
    cols = [c for c in (*REQUIRED_JUDGMENT_COLUMNS, "division_id", "fetched_at") if c in judgments.column_names]
    rows_in, duplicates = _newest_per_judgment(judgments.select(cols).to_pylist())
    if duplicates:
        log.info("%d older judgment version(s) left out (newest fetch per judgment_id)", duplicates)
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    texts: dict[tuple[str, int, str], CleanText] = {}
    sources: Counter[str] = Counter({s: 0 for s in COURT_NAME_SOURCES})
    for row in rows_in:
        problems = _row_problems(row)
        if not problems:
            try:
                judgment_rows, clean, source = chunk_judgment(row, max_tokens=max_tokens)
            except ValueError as exc:
                problems = [str(exc)]
            else:
                rows.extend(judgment_rows)
                sources[source] += 1
                if keep_texts:
                    texts[(SOURCE, row["judgment_id"], row["content_sha256"])] = clean
        if problems:
            log.warning("judgment saos:%s not chunked: %s", row.get("judgment_id"), "; ".join(problems))
            rejected.append({"source": row.get("source") or SOURCE, "case_id": row.get("judgment_id"),
                             "content_sha256": row.get("content_sha256"), "reasons": problems})
    return CaseChunkResult(from_rows(rows, CASE_CHUNKS), rejected, texts), dict(sources)


def pl_case_chunks(judgments: pa.Table, *, max_tokens: int | None = None) -> pa.Table:
    """``CASE_CHUNKS`` table of a ``SAOS_JUDGMENTS`` table; refused judgments are logged and left out."""
    return build_pl_case_chunks(judgments, max_tokens=max_tokens)[0].chunks


def chunk_pl_judgments_step(layout: Layout, judgments_table: pa.Table, *, max_tokens: int) -> CaseChunkOutcome:
    """Chunk the judgments into ``$LEXPIPE_HOME/caselaw/pl/chunks/staging/`` (replacing any earlier
    stage), with a manifest beside it. Validate with :func:`validate_staged_pl_chunks`, then
    :func:`promote_pl_chunks`; :func:`pipelines.retrieval.case_index.pl_case_index_step` indexes
    :func:`read_current_pl_chunks`."""
    if judgments_table.num_rows == 0:
        raise CaseBuildError("no SAOS judgments to chunk: run the SAOS sync first")
    t0 = time.perf_counter()
    result, name_sources = build_pl_case_chunks(judgments_table, max_tokens=max_tokens)
    path = staged_path(layout, JURISDICTION)
    write_parquet(path, result.chunks)
    sections = dict(Counter(result.chunks["section"].to_pylist()))
    judgments = len(set(judgments_table["judgment_id"].to_pylist()))
    outcome = CaseChunkOutcome(path, judgments, result.chunks.num_rows, result.rejected, sections,
                               round(time.perf_counter() - t0, 2), name_sources)
    atomic_write_json(path.with_suffix(".json"), {
        "chunker_version": f"{PL_CHUNKER_VERSION}/{PL_CLEANER_VERSION}", "max_tokens": max_tokens,
        "judgments": judgments, "chunks": outcome.chunks, "sections": sections, "rejected": result.rejected,
        "court_name_sources": name_sources})
    return outcome


def read_staged_pl_chunks(layout: Layout) -> pa.Table:
    return read_staged(layout, JURISDICTION)


def validate_staged_pl_chunks(layout: Layout, *, max_tokens: int):
    """The case-chunks GX suite on the staged Polish chunks (a ``pipelines.validation.ValidationReport``)."""
    from pipelines.case_law.chunks import validate_case_chunks

    return validate_case_chunks(read_staged(layout, JURISDICTION), max_tokens=max_tokens)


def promote_pl_chunks(layout: Layout):
    """Staged Polish chunks become current (one rename), as :func:`case_build.promote_staged`."""
    return promote_staged(layout, JURISDICTION)


def read_current_pl_chunks(layout: Layout) -> pa.Table:
    return read_current(layout, JURISDICTION)
