"""The corpus build as plain steps: parse → chunk → diff → publish, one act version at a time.

Dagster assets and Prefect tasks only call these functions. Each step reads its inputs from and
writes its outputs to the version's staging folder, so steps can be retried independently, and
each is idempotent: a re-run with the same raw PDF and parser version reuses what is there.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from core.layout import Layout
from pipelines.chunking import build_chunks
from pipelines.statutes.store import CorpusStore
from pipelines.pdf_lines import PdfReadError
from pipelines.statutes.pl.parser import PARSER_VERSION, ActSpec, StatuteParseError, parse_statute
from pipelines.statutes.publish import publish_version
from pipelines.statutes.pl.tables import acts_table, articles_table, nodes_table
from pipelines.statutes.diff import diff_markdown, diff_versions

CHUNKER_VERSION = "chunk-2"  # chunk-2: one chunk per paragraph (§)


@dataclass
class ParseOutcome:
    act_id: str
    version: str
    directory: Path
    article_count: int
    pages: int
    seconds: float
    reused: bool
    source_sha256: str
    stats: dict = field(default_factory=dict)


def parse_key(source_sha256: str) -> dict[str, str]:
    """What a parse depends on: the raw bytes and the parser. Equal keys give equal tables."""
    return {"source_sha256": source_sha256, "parser_version": PARSER_VERSION}


def built_parse(layout: Layout, *, act_id: str, version: str, source_sha256: str) -> Path | None:
    """The folder (staging, else published) holding a parse of exactly these bytes with this parser
    version, or None. Orchestrators ask this before trusting a cached parse result: the tables it
    describes may have been replaced (another source parsed into staging) or deleted since."""
    store = CorpusStore(layout)
    built = store.built_dir(act_id, version)
    if built is None or not (built / "acts.parquet").exists():
        return None
    m = store.manifest(built) or _read_json(built / "parse.json")
    return built if all(m.get(k) == v for k, v in parse_key(source_sha256).items()) else None


def chunk_key(max_tokens: int) -> dict[str, object]:
    """What chunking depends on besides the parse: the chunker and its token bound."""
    return {"max_tokens": max_tokens, "chunker": CHUNKER_VERSION}


def built_chunks(layout: Layout, *, act_id: str, version: str, max_tokens: int) -> bool:
    """True when the version's freshest build holds chunks of its own parse made by this chunker
    with this bound (what ``chunk_step`` would reuse)."""
    store = CorpusStore(layout)
    built = store.built_dir(act_id, version)
    if built is None or not (built / "chunks.parquet").exists():
        return False
    info = _read_json(built / "chunk.json")
    parse = store.manifest(built) or _read_json(built / "parse.json")
    return all(info.get(k) == v for k, v in chunk_key(max_tokens).items()) \
        and info.get("source_sha256") == parse.get("source_sha256")


def parse_step(layout: Layout, *, act_id: str, version: str, pdf_path: Path, source_sha256: str,
               source_url: str | None, workers: int = 2) -> ParseOutcome:
    """Parse the raw PDF into articles/nodes/act tables in staging (or reuse an identical build)."""
    store = CorpusStore(layout)
    key = parse_key(source_sha256)
    built = built_parse(layout, act_id=act_id, version=version, source_sha256=source_sha256)
    if built is not None:
        m = store.manifest(built) or _read_json(built / "parse.json")
        acts = store.read(act_id, version, "acts").to_pylist()[0]
        return ParseOutcome(act_id, version, built, acts["article_count"], acts["pages"], 0.0, True,
                            source_sha256, m.get("stats", {}))
    spec = act_spec_of(layout, act_id, pdf_path)  # the registry's act: a PDF of another act is refused
    t0 = time.perf_counter()
    store.discard_staging(act_id, version)  # never mix files of two different sources
    try:
        parsed = parse_statute(pdf_path, dt.date.fromisoformat(version), spec, workers=workers)
        _refuse_cut_first_version(store, parsed, pdf_path)
    except (PdfReadError, StatuteParseError) as exc:  # name the source, not only the raw-zone path
        raise type(exc)(f"{act_id} {version} from {source_url or pdf_path}: {exc}") from exc
    seconds = time.perf_counter() - t0
    articles = articles_table(parsed)
    store.stage_table(act_id, version, "articles", articles)
    store.stage_table(act_id, version, "nodes", nodes_table(parsed))
    store.stage_table(act_id, version, "acts", acts_table(parsed, source_sha256=source_sha256, source_url=source_url))
    stats = {
        "articles": articles.num_rows,
        "superscript_articles": sum("^" in n for n in articles["number"].to_pylist()),
        "repealed": sum(s == "repealed" for s in articles["status"].to_pylist()),
        "pending_changes": sum(t is not None for t in articles["text_pending"].to_pylist()),
        "structure_units": len(parsed.structure),
        "pages": parsed.pages,
    }
    store.stage_json(act_id, version, "parse.json", {**key, "stats": stats, "parse_seconds": round(seconds, 3)})
    return ParseOutcome(act_id, version, store.staging(act_id, version), articles.num_rows, parsed.pages,
                        seconds, False, source_sha256, stats)


def act_spec_of(layout: Layout, act_id: str, pdf_path: Path) -> ActSpec:
    """The parser's spec of ``act_id`` in the home's registry (curated rows and the acts discovered
    into ``layout.home``'s catalogue). An act without a curated row has no one to say how it
    numbers paragraphs: the PDF says (:func:`~pipelines.statutes.pl.front_page.paragraph_unit`)."""
    from dataclasses import replace

    from schemas.acts import registry

    act = registry(layout.home).get(act_id)
    spec = ActSpec.of(act)
    if not act.curated:
        from pipelines.statutes.pl.front_page import paragraph_unit

        spec = replace(spec, paragraph_unit=paragraph_unit(pdf_path))
    return spec


def _refuse_cut_first_version(store: CorpusStore, parsed, pdf_path: Path) -> None:
    """A first version (no published older one) whose PDF has fewer or more pages than its running
    header counts ("s. 1/148") is refused: the blocking article-count check compares with the
    previous published version, so for a new act nothing else would notice a PDF that lost its
    end. A later version is left to that check (±2 % of the articles), which blocks it by name."""
    act_id, version = parsed.spec.act_id, parsed.version.isoformat()
    if parsed.printed_pages is None or parsed.printed_pages == parsed.pages:
        return
    if store.previous_version(act_id, version) is not None:
        return
    what = "cut short" if parsed.pages < parsed.printed_pages else "pages that are not its own"
    raise StatuteParseError(
        f"{pdf_path}: the PDF has {parsed.pages} pages but its running header counts {parsed.printed_pages} "
        f"(\"s. 1/{parsed.printed_pages}\"): {what}; {act_id} has no published version to compare its "
        f"{len(parsed.articles)} articles with, so it is not published")


def chunk_step(layout: Layout, *, act_id: str, version: str, max_tokens: int) -> pa.Table:
    store = CorpusStore(layout)
    if built_chunks(layout, act_id=act_id, version=version, max_tokens=max_tokens):
        return store.read(act_id, version, "chunks")
    built = store.built_dir(act_id, version)
    if built is not None and built == layout.version_dir(act_id, version):
        # a new chunker over a published version: stage a full copy so publishing swaps the
        # whole folder (articles unchanged, chunks new) instead of finding nothing staged
        store.stage_published_copy(act_id, version)
    chunks = build_chunks(store.read(act_id, version, "articles"), max_tokens=max_tokens)
    store.stage_table(act_id, version, "chunks", chunks)
    parse = _read_json(store.staging(act_id, version) / "parse.json")
    store.stage_json(act_id, version, "chunk.json", {"max_tokens": max_tokens, "chunker": CHUNKER_VERSION,
                                                     "source_sha256": parse.get("source_sha256")})
    return chunks


def diff_step(layout: Layout, *, act_id: str, version: str) -> tuple[str | None, pa.Table | None, str]:
    """Diff against the newest published version older than ``version`` (none for the first)."""
    store = CorpusStore(layout)
    prev = store.previous_version(act_id, version)
    if prev is None:
        return None, None, "first version: nothing to compare"
    old = store.read(act_id, prev, "articles", published_only=True)
    new = store.read(act_id, version, "articles")
    diff = diff_versions(old, new)
    md = diff_markdown(diff, f"{act_id} {prev} → {version}")
    if store.built_dir(act_id, version) == layout.staging_dir(act_id, version):
        store.stage_table(act_id, version, f"diff_from_{prev}", diff, "diff")
        store.stage_file(act_id, version, f"diff_from_{prev}.md", md)
    return prev, diff, md


def publish_step(layout: Layout, *, act_id: str, version: str) -> Path:
    return publish_version(layout, act_id=act_id, version=version, chunker=CHUNKER_VERSION)


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}
