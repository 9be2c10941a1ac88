"""Retrieval chunks of court decisions: token-bounded, never crossing a section, with metadata.

Why these rules: a search hit on a decision must say *where* it is — which decision (court, date,
file number, ECLI), which part (a sentence in the Tatbestand reports a party's claim, the same
sentence in the Entscheidungsgründe is the court's holding) and which Randnummern, so the hit can
be cited ("BGH, VIII ZR 127/17, Rn. 4"). So chunks are packed from whole paragraphs (blocks) of
one section at a time, split at sentences only when one paragraph alone is too long, and cut by
tokens only when one sentence is. Every chunk's ``text`` is exactly ``clean_text[char_start:char_end]``
of the decision's clean text (:mod:`pipelines.case_law.html_text`), so a consumer can re-derive
and highlight it. Heading lines ("Tenor") are not chunk text; the section name is metadata.

Bad records never crash the build: a case whose content yields no text, or whose row misses a
required field, is returned in ``rejected`` with the case id and the reason, and produces no chunk.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import pyarrow as pa

from pipelines.case_law.html_text import CLEANER_VERSION, CleanText, clean_legal_html
from pipelines.case_law.sections import Section, split_sections
from schemas.arrow import from_rows
from schemas.expectations import DEFAULT_TOKEN_MARGIN
from schemas.cases import CASE_CHUNKS

log = logging.getLogger(__name__)

CHUNKER_VERSION = "case-chunks-1"
DEFAULT_MAX_TOKENS = 256
REQUIRED_CASE_COLUMNS = ("source", "case_id", "court_id", "file_number", "date", "content",
                         "content_sha256")
_SENT_END = frozenset({".", "!", "?"})
# per language: what may start a sentence, and words the tokenizer splits from their period although
# they abbreviate (German; Polish: "art.", "ust.", "Dz. U.", "k.c" — spaCy's blank "pl" splits them all)
_SENT_START = {
    "de": re.compile(r"[A-ZÄÖÜ\[(„\"§0-9]"),
    "pl": re.compile(r"[A-ZĄĆĘŁŃÓŚŹŻ\[(„\"»§0-9]"),
}
_ABBREVIATIONS = {
    "de": frozenset("""rn rdnr rdn rz tz abs nr nrn s art artt bd aufl vgl ff f lit buchst ziff az
zb ua ggf bzw etc dr prof mwn aao hs halbs alt var anm fn urt beschl entsch gem ca vs bzgl insb
jew sog str kap abschn anl tab u v i m""".split()),
    # code citations ("k.c.", "k.p.c.") are left out: a sentence often ends with one
    "pl": frozenset("""art ust pkt poz nr dz zm tj t.j np tzw por zob m.in sygn godz ok wyd
ssn ssa sso ssr ul al św prof dr hab mgr inż lit zd tys mln mld jw ww w/w wg del spr sekr prok adw
r.pr tzn itd itp pt""".split()),
}


def _tokenizer(lang: str = "de"):
    from pipelines.chunking import spacy_pipeline  # the project's spaCy blank pipelines, cached per language

    return spacy_pipeline(lang).tokenizer


def count_tokens(text: str, lang: str = "de") -> int:
    """spaCy ``blank(lang)`` tokens: the unit of ``token_count`` and of the chunk bound (German
    decisions ``blank("de")``, Polish judgments ``blank("pl")``)."""
    return len(_tokenizer(lang)(text))


@dataclass(frozen=True)
class Piece:
    start: int  # offsets in the clean text
    end: int
    tokens: int


def _sentence_pieces(text: str, offset: int, max_tokens: int, lang: str = "de") -> list[Piece]:
    """Split one over-long paragraph at sentence ends, then over-long sentences at token bounds.

    A sentence ends at a free-standing ``.``/``!``/``?`` token followed by an upper-case letter,
    a digit, a bracket or ``§``: spaCy's German tokenizer keeps abbreviations (``Abs.``, ``vgl.``,
    ``Nr.``, ordinals ``4.``) whole, so their periods never end a sentence here.
    """
    doc = _tokenizer(lang)(text)
    starts, abbreviations = _SENT_START[lang], _ABBREVIATIONS[lang]
    bounds: list[tuple[int, int]] = []  # token index ranges
    first = 0
    for i, tok in enumerate(doc):
        nxt = doc[i + 1] if i + 1 < len(doc) else None
        prev = doc[i - 1].text.lower().rstrip(".") if i else ""
        if (tok.text in _SENT_END and tok.whitespace_ and nxt is not None and starts.match(nxt.text)
                and prev not in abbreviations and not (tok.text == "." and len(prev) == 1)):
            bounds.append((first, i + 1))
            first = i + 1
    if first < len(doc):
        bounds.append((first, len(doc)))
    pieces: list[Piece] = []
    for a, b in bounds:
        for k in range(a, b, max_tokens):  # a sentence longer than max_tokens is cut by tokens
            last = min(k + max_tokens, b) - 1
            s = doc[k].idx
            e = doc[last].idx + len(doc[last].text)
            pieces.append(Piece(offset + s, offset + e, min(k + max_tokens, b) - k))
    return pieces


def section_pieces(clean: CleanText, section: Section, max_tokens: int) -> list[Piece]:
    """The paragraphs of a section (heading line excluded), long ones split into sentences."""
    pieces: list[Piece] = []
    for b in clean.blocks:
        if b.start < section.body_start or b.end > section.end or b.start >= section.end:
            continue  # other sections, and this section's heading line (before body_start)
        text = clean.text[b.start:b.end]
        n = count_tokens(text)
        if n <= max_tokens:
            pieces.append(Piece(b.start, b.end, n))
        else:
            pieces.extend(_sentence_pieces(text, b.start, max_tokens))
    return pieces


def pack(clean: CleanText, pieces: list[Piece], max_tokens: int, lang: str = "de") -> list[tuple[int, int, int]]:
    """Greedy packing of consecutive pieces into (start, end, tokens) spans of ≤ max_tokens."""
    spans: list[tuple[int, int, int]] = []
    cur: list[Piece] = []
    total = 0
    for p in pieces:
        if cur and total + p.tokens > max_tokens:
            spans.append((cur[0].start, cur[-1].end, total))
            cur, total = [], 0
        cur.append(p)
        total += p.tokens
    if cur:
        spans.append((cur[0].start, cur[-1].end, total))
    out = []
    for s, e, _ in spans:  # joined text may tokenize a little differently: recount, re-split if over
        n = count_tokens(clean.text[s:e], lang)
        if n <= max_tokens + max(1, math.ceil(max_tokens * DEFAULT_TOKEN_MARGIN)):  # the checks' allowance
            out.append((s, e, n))
            continue
        # a list of "-" or "1." lines is one sentence to the splitter and tokenizes longer joined (3 of
        # 15,119 chunks of the 800 SAOS judgments: 283-292 tokens at 256, over the checks' 282): cut it
        # at token bounds
        doc = _tokenizer(lang)(clean.text[s:e])
        for k in range(0, len(doc), max_tokens):
            last = doc[min(k + max_tokens, len(doc)) - 1]
            a, b = s + doc[k].idx, s + last.idx + len(last.text)
            out.append((a, b, count_tokens(clean.text[a:b], lang)))
    return out


def _randnummern(clean: CleanText, start: int, end: int) -> tuple[str | None, str | None]:
    rns = [b.rn for b in clean.blocks if b.rn and b.end > start and b.start < end]
    if not rns:
        blk = clean.block_at(start)  # a piece of a long numbered paragraph
        rns = [blk.rn] if blk is not None and blk.rn else []
    return (rns[0], rns[-1]) if rns else (None, None)


@dataclass
class CaseChunkResult:
    chunks: pa.Table
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {case_id, source, reasons}
    texts: dict[tuple[str, int, str], CleanText] = field(default_factory=dict)  # (source, case_id, sha) → clean


def _check_columns(cases: pa.Table) -> None:
    missing = [c for c in REQUIRED_CASE_COLUMNS if c not in cases.column_names]
    if missing:
        raise ValueError(f"cases table lacks columns {missing} (expected schemas.cases.CASES, "
                         f"got {cases.column_names})")


def _row_problems(row: dict[str, Any]) -> list[str]:
    problems = []
    for col in ("case_id", "court_id", "file_number", "date", "content_sha256"):
        if row.get(col) in (None, ""):
            problems.append(f"{col}: missing")
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        problems.append("content: empty")
    return problems


def chunk_case(row: dict[str, Any], *, max_tokens: int) -> tuple[list[dict[str, Any]], CleanText]:
    """Chunk rows (``CASE_CHUNKS`` fields) of one CASES row; raises ValueError on unusable content."""
    clean = clean_legal_html(row["content"])
    if not clean.text.strip():
        raise ValueError(f"content has no text after cleaning ({len(row['content'])} characters of markup)")
    sections = split_sections(clean)
    rows: list[dict[str, Any]] = []
    for sec in sections:
        spans = pack(clean, section_pieces(clean, sec, max_tokens), max_tokens)
        for k, (s, e, n) in enumerate(spans):
            text = clean.text[s:e]
            rn_first, rn_last = _randnummern(clean, s, e)
            rows.append({
                "chunk_id": f"{row['source']}:{row['case_id']}:{row['content_sha256'][:12]}:{len(rows):04d}",
                "source": row["source"], "case_id": row["case_id"], "case_sha256": row["content_sha256"],
                "slug": row.get("slug"), "court_id": row["court_id"], "court_name": row.get("court_name"),
                "date": row["date"], "file_number": row["file_number"], "ecli": row.get("ecli"),
                "decision_type": row.get("type"),
                "section": sec.name, "section_label": sec.label, "section_index": sec.index,
                "chunk_index": len(rows), "section_chunk_index": k,
                "char_start": s, "char_end": e, "rn_first": rn_first, "rn_last": rn_last,
                "text": text, "token_count": n,
                "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "chunker_version": f"{CHUNKER_VERSION}/{CLEANER_VERSION}",
            })
    if not rows:
        raise ValueError("content has only headings, no paragraph text to chunk")
    for r in rows:
        r["chunk_count"] = len(rows)
    return rows, clean


def build_case_chunks(cases: pa.Table, *, max_tokens: int | None = None,
                      keep_texts: bool = False) -> CaseChunkResult:
    """All chunks of a CASES table, plus the cases refused with their reasons."""
    _check_columns(cases)
    if max_tokens is None:
        from core.settings import get_settings

        max_tokens = get_settings().chunk_max_tokens
    if max_tokens < 8:
        raise ValueError(f"max_tokens must be at least 8, got {max_tokens}")
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    texts: dict[tuple[str, int, str], CleanText] = {}
    for row in cases.to_pylist():
        problems = _row_problems(row)
        if not problems:
            try:
                case_rows, clean = chunk_case(row, max_tokens=max_tokens)
            except ValueError as exc:
                problems = [str(exc)]
            else:
                rows.extend(case_rows)
                if keep_texts:
                    texts[(row["source"], row["case_id"], row["content_sha256"])] = clean
        if problems:
            log.warning("case %s:%s not chunked: %s", row.get("source"), row.get("case_id"), "; ".join(problems))
            rejected.append({"source": row.get("source"), "case_id": row.get("case_id"),
                             "content_sha256": row.get("content_sha256"), "reasons": problems})
    return CaseChunkResult(from_rows(rows, CASE_CHUNKS), rejected, texts)


def case_chunks(cases: pa.Table, *, max_tokens: int | None = None) -> pa.Table:
    """``CASE_CHUNKS`` table of a ``CASES`` table (the connector's output). Cases that cannot be
    chunked are logged and left out; use :func:`build_case_chunks` to get them with reasons."""
    return build_case_chunks(cases, max_tokens=max_tokens).chunks


def iter_case_texts(cases: pa.Table) -> Iterable[tuple[dict[str, Any], CleanText]]:
    """(row without content, clean text) per usable case: what citation counting reads."""
    _check_columns(cases)
    for row in cases.to_pylist():
        if _row_problems(row):
            continue
        clean = clean_legal_html(row["content"])
        if clean.text.strip():
            meta = {k: v for k, v in row.items() if k != "content"}
            yield meta, clean


def prepare_case_chunks_frame(table: pa.Table):
    """Frame for ``schemas.expectations.case_chunks_suite``: adds ``span_length`` and
    ``span_matches_text``; rows in case/chunk order so reports follow the decisions."""
    import pyarrow.compute as pc

    from pipelines.validation import prepare_frame

    length = pc.subtract(table["char_end"], table["char_start"])
    matches = pc.equal(pc.utf8_length(table["text"]), length)
    table = table.append_column("span_length", length).append_column("span_matches_text", matches)
    table = table.sort_by([("case_id", "ascending"), ("case_sha256", "ascending"), ("chunk_index", "ascending")])
    return prepare_frame(table)


def validate_case_chunks(chunks: pa.Table, *, max_tokens: int):
    """Run the case-chunks GX suite; returns a ``pipelines.validation.ValidationReport``."""
    from pipelines.validation import validate_table
    from schemas.expectations import case_chunks_suite

    return validate_table(chunks, case_chunks_suite(max_tokens), name="case_chunks",
                          id_column="chunk_id", prepare=prepare_case_chunks_frame)
