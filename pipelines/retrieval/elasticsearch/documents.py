"""Chunk rows → Elasticsearch documents, analysed exactly as the embedded backend analyses them.

Why a module of its own: the embedded backend keeps its analysed strings as columns; Elasticsearch
needs the same strings in every document. The two must agree token for token — same analyser,
same ``heading_path + "\\n" + text`` input, same :func:`~pipelines.retrieval.backend_common.bigrams`
— or the backends' lexical legs drift apart and hybrid weights tuned on one stop fitting the other.
``tests/pipelines/retrieval/test_backend_conformance.py`` compares both outputs field by field.

A document here is a row's *content*; the publication (:mod:`.writer`) adds its interval
(``version_from``/``version_to``, ``valid_from``/``valid_to``) and generations.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from pipelines.retrieval.backend_common import TextAnalyzer, bigrams


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def analysis_input(heading_path: str | None, text: str | None) -> str:
    """What is analysed per chunk (the embedded backend's rule): heading, newline, text."""
    return f"{heading_path or ''}\n{text or ''}"


def content_hash(heading_path: str | None, text: str | None) -> str:
    """``schemas.arrow.CHUNKS.content_hash`` (``pipelines.chunking``): sha256 of heading + newline +
    text, for chunk tables built without one (a test's hand-made rows)."""
    return hashlib.sha256(f"{heading_path or ''}\n{text or ''}".encode()).hexdigest()


VectorRows = "np.ndarray | Sequence[Sequence[float] | None] | None"


def vector_rows(vectors: Any, n: int, dims: int | None = None) -> list[list[float] | None]:
    """One vector (or None: not computed yet) per chunk, from an (n, dims) array, a sequence with
    None entries, or None (no vectors at all)."""
    if vectors is None:
        return [None] * n
    if isinstance(vectors, np.ndarray):
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n:
            raise ValueError(f"{n} chunks but vectors of shape {arr.shape}")
        rows: list[list[float] | None] = [r.tolist() for r in arr]
    else:
        rows = [None if v is None else [float(x) for x in v] for v in vectors]
        if len(rows) != n:
            raise ValueError(f"{n} chunks but {len(rows)} vectors")
    if dims is not None:
        for i, v in enumerate(rows):
            if v is not None and len(v) != dims:
                raise ValueError(f"chunk {i}: vector has {len(v)} dims, the index expects {dims}")
    return rows


def chunk_documents(chunks: pa.Table, vectors: Any, analyzer: TextAnalyzer | None,
                    analysed: Sequence[Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """One document per chunk row (``schemas.arrow.CHUNKS``) with analysed, folded and bigram
    strings, the chunk's row number as ``position`` and its vector when there is one.

    ``analysed``: the terms of each chunk's ``heading_path + "\\n" + text`` when the caller has
    them (the publication API shares them with the embedded engine), else the analyser's, in one
    ``analyze_many`` batch (much faster than one call per chunk). ``version`` is the version the
    table holds (the publication replaces it by the row's interval).
    """
    n = chunks.num_rows
    col = {c: chunks[c].to_pylist() for c in chunks.column_names}
    for required in ("chunk_id", "article_id", "act_id", "text"):
        if required not in col:
            raise ValueError(f"chunks lack column {required!r} (expected the CHUNKS schema of schemas/arrow.py)")
    headings: Sequence[str | None] = col.get("heading_path") or [None] * n
    if analysed is None:
        if analyzer is None:
            raise ValueError("no analysed terms and no analyser to compute them")
        analysed = analyzer.analyze_many([analysis_input(h, t) for h, t in zip(headings, col["text"])])
    elif len(analysed) != n:
        raise ValueError(f"{len(analysed)} analysed term lists for {n} chunks")
    vecs = vector_rows(vectors, n)
    fold = analyzer.fold if analyzer is not None else (lambda tokens: tokens)
    docs = []
    for i in range(n):
        tokens = list(analysed[i])
        act_id = col["act_id"][i]
        article_id = col["article_id"][i]
        hash_ = col["content_hash"][i] if col.get("content_hash") and col["content_hash"][i] else \
            content_hash(headings[i], col["text"][i])
        doc: dict[str, Any] = {
            "doc_kind": "chunk",
            "chunk_id": col["chunk_id"][i], "article_id": article_id, "act_id": act_id,
            "jurisdiction": act_id.split(":", 1)[0],
            "status": col["status"][i] if "status" in col else None,
            "number": article_id.rsplit(":", 1)[-1],
            "heading_path": headings[i] or "", "text": col["text"][i],
            "text_analyzed": " ".join(tokens),
            "text_folded": " ".join(fold(tokens)),
            "text_bigrams": " ".join(bigrams(tokens)),
            "position": i, "content_hash": hash_,
            "has_vector": vecs[i] is not None,
        }
        if "version" in col:
            doc["version"] = _iso(col["version"][i])
        if vecs[i] is not None:
            doc["vector"] = vecs[i]
        if "chunk_index" in col and col["chunk_index"][i] is not None:
            doc["chunk_index"] = col["chunk_index"][i]
        docs.append(doc)
    return docs
