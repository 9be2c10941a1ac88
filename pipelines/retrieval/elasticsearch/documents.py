"""Chunk rows → Elasticsearch documents, analysed exactly as the embedded backend analyses them.

Why a module of its own: the embedded backend keeps its analysed strings as LanceDB columns
(``EmbeddedBackend.documents``); Elasticsearch needs the same strings in every document. The two
must agree token for token — same analyser, same ``heading_path + "\\n" + text`` input, same
:func:`~pipelines.retrieval.backend_common.bigrams` — or the backends' lexical legs drift apart
and hybrid weights tuned on one stop fitting the other.
``tests/pipelines/retrieval/test_backend_conformance.py`` compares both outputs field by field.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa

from pipelines.retrieval.backend_common import TextAnalyzer, bigrams


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def analysis_input(heading_path: str | None, text: str | None) -> str:
    """What is analysed per chunk (the embedded backend's rule): heading, newline, text."""
    return f"{heading_path or ''}\n{text or ''}"


def chunk_documents(chunks: pa.Table, vectors: np.ndarray, analyzer: TextAnalyzer) -> Iterator[dict[str, Any]]:
    """One document per chunk row (``schemas.arrow.CHUNKS``) with analysed, folded and bigram
    strings, the chunk's row number as ``position`` and its vector.

    Analysis runs in one ``analyze_many`` batch before the first document is yielded (the
    analysers are much faster in batches); documents are then produced lazily for bulk loading.
    """
    n = chunks.num_rows
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(f"{n} chunks but vectors of shape {vectors.shape}")
    col = {c: chunks[c].to_pylist() for c in chunks.column_names}
    headings: Sequence[str | None] = col.get("heading_path") or [None] * n
    analysed = analyzer.analyze_many([analysis_input(h, t) for h, t in zip(headings, col["text"])])
    for i in range(n):
        tokens = analysed[i]
        act_id = col["act_id"][i]
        article_id = col["article_id"][i]
        doc: dict[str, Any] = {
            "chunk_id": col["chunk_id"][i], "article_id": article_id, "act_id": act_id,
            "jurisdiction": act_id.split(":", 1)[0], "version": _iso(col["version"][i]),
            "status": col["status"][i] if "status" in col else None,
            "number": article_id.rsplit(":", 1)[-1],
            "heading_path": headings[i] or "", "text": col["text"][i],
            "text_analyzed": " ".join(tokens),
            "text_folded": " ".join(analyzer.fold(tokens)),
            "text_bigrams": " ".join(bigrams(tokens)),
            "position": i,
            "vector": vectors[i].tolist(),
        }
        for optional in ("chunk_index", "content_hash"):
            if optional in col and col[optional][i] is not None:
                doc[optional] = col[optional][i]
        yield doc
