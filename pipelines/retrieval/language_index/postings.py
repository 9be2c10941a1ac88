"""Posting lists of one segment: sorted 64-bit term hashes, offsets, row numbers and term counts.

Two fields per row, both over the analysed terms of ``heading_path + "\\n" + text``: ``terms`` (the
unigrams, today's ``text_analyzed``) and ``bigrams`` (adjacent terms joined by ``_``, today's
``text_bigrams``). Per field a segment stores four flat arrays, memory-mapped by readers:

* ``<field>.hash.npy``  uint64[T]   distinct term hashes, ascending (``hashing.py``)
* ``<field>.off.npy``   int64[T+1]  postings of term i are ``off[i]:off[i+1]``
* ``<field>.doc.npy``   uint32[P]   row numbers within the segment, ascending per term
* ``<field>.tf.npy``    uint16[P]   the term's count in that row (capped at 65,535)

and the field's length of every row (``<field>.len.npy``, int32: terms counted with repeats), from
which a snapshot derives BM25's length norm for the generation's avgdl. Why flat arrays and not a
table per term: a lookup is one ``searchsorted`` over the hashes and two slices, served from the
page cache without deserialising anything, and building them is a handful of numpy sorts (no
Python loop per posting).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.retrieval.language_index import hashing
from pipelines.retrieval.language_index.files import load_array, save_array

FIELDS = ("terms", "bigrams")
BATCH_ROWS = 100_000  # rows analysed into postings at once (bounds the build's peak memory)
TF_MAX = np.iinfo(np.uint16).max


@dataclass
class Postings:
    hash: np.ndarray  # uint64[T]
    off: np.ndarray  # int64[T+1]
    doc: np.ndarray  # uint32[P]
    tf: np.ndarray  # uint16[P]

    @classmethod
    def empty(cls) -> "Postings":
        return cls(np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.uint32), np.zeros(0, np.uint16))

    @property
    def terms(self) -> int:
        return len(self.hash)

    def df(self) -> np.ndarray:
        """Rows per term (dead rows included: a snapshot subtracts them)."""
        return np.diff(self.off)

    def lookup(self, h: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, tf) of one term hash, or None."""
        i = int(np.searchsorted(self.hash, np.uint64(h)))
        if i >= len(self.hash) or int(self.hash[i]) != int(h):
            return None
        a, b = int(self.off[i]), int(self.off[i + 1])
        return self.doc[a:b], self.tf[a:b]

    def save(self, folder: Path, field: str) -> None:
        for name in ("hash", "off", "doc", "tf"):
            save_array(folder / f"{field}.{name}.npy", getattr(self, name))

    @classmethod
    def load(cls, folder: Path, field: str) -> "Postings":
        return cls(*(load_array(folder / f"{field}.{name}.npy") for name in ("hash", "off", "doc", "tf")))


def _group(h: np.ndarray, doc: np.ndarray, tf: np.ndarray) -> Postings:
    """Postings from (hash, row, tf) triples sorted by hash, rows ascending within a hash."""
    if not len(h):
        return Postings.empty()
    change = np.empty(len(h), dtype=bool)
    change[0] = True
    np.not_equal(h[1:], h[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    del change
    off = np.empty(len(starts) + 1, np.int64)
    off[:-1], off[-1] = starts, len(h)
    return Postings(h[starts], off, doc.astype(np.uint32, copy=False), tf.astype(np.uint16, copy=False))


_EMPTY = (np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.uint16))


def _tf(counts: np.ndarray) -> np.ndarray:
    return np.minimum(counts, TF_MAX).astype(np.uint16)


def _batch(texts: pa.Array, first_row: int) -> tuple[dict[str, tuple], dict[str, np.ndarray]]:
    """Per field the (hash, row, tf) triples of a batch of term strings (sorted by hash, then row)
    and the rows' lengths. Split, dictionary-encoded and hashed in Arrow and numpy: no Python
    object per term."""
    nb = len(texts)
    split = pc.split_pattern(pc.fill_null(texts, ""), " ")
    values = split.values if isinstance(split, pa.ListArray) else pa.concat_arrays([c.values for c in split.chunks])
    parents = pc.list_parent_indices(split)
    parents = np.asarray(parents.to_numpy() if isinstance(parents, pa.Array) else parents.to_numpy(), dtype=np.int64)
    nonempty = pc.not_equal(values, "")
    if not pc.all(nonempty).as_py():
        values = values.filter(nonempty)
        parents = parents[nonempty.to_numpy(zero_copy_only=False)]
    lens = np.bincount(parents, minlength=nb).astype(np.int64)
    lengths = {"terms": lens.astype(np.int32), "bigrams": np.maximum(lens - 1, 0).astype(np.int32)}
    out: dict[str, tuple] = {}
    if not len(values):
        return {f: _EMPTY for f in FIELDS}, lengths
    enc = values.cast(pa.large_string()).dictionary_encode()
    idx = enc.indices.to_numpy().astype(np.int64)
    poly, blen = hashing.poly_of(enc.dictionary)
    vocab = len(enc.dictionary)
    doc = parents

    # unigrams: the batch's terms renumbered in hash order, then one sort of (rank, row) is the
    # postings' final order (no second sort by hash)
    hd = hashing.finish(poly, blen)
    by_hash = np.argsort(hd)
    rank = np.empty(vocab, np.int64)
    rank[by_hash] = np.arange(vocab)
    keys, tf = np.unique(rank[idx] * nb + doc, return_counts=True)
    out["terms"] = (hd[by_hash][keys // nb], (keys % nb + first_row).astype(np.uint32), _tf(tf))

    # bigrams: adjacent terms of one row
    same = doc[1:] == doc[:-1]
    a, b, bdoc = idx[:-1][same], idx[1:][same], doc[1:][same]
    if len(a):
        keys, tf = np.unique((a * vocab + b) * nb + bdoc, return_counts=True)
        pair, b_doc = keys // nb, keys % nb
        pa_, pb_ = pair // vocab, pair % vocab
        bp, bl = hashing.bigram_poly(poly[pa_], blen[pa_], poly[pb_], blen[pb_])
        h = hashing.finish(bp, bl)
        order = np.argsort(h, kind="stable")
        out["bigrams"] = (h[order], (b_doc[order] + first_row).astype(np.uint32), _tf(tf[order]))
    else:
        out["bigrams"] = _EMPTY
    return out, lengths


def build(texts: pa.Array | pa.ChunkedArray, batch_rows: int = BATCH_ROWS,
          threads: int = 2) -> tuple[dict[str, Postings], dict[str, np.ndarray]]:
    """Postings and row lengths of both fields; ``texts``: each row's analysed terms joined by
    single spaces (the stored ``text_analyzed``)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    if not isinstance(texts, pa.Array):
        texts = join_terms(texts)
    texts = texts.cast(pa.large_string())
    starts = list(range(0, len(texts), batch_rows))
    # batches side by side: Arrow's kernels and numpy's sorts release the GIL (two threads on two
    # cores: see the package docstring for the build figures)
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(starts)))) as pool:
        results = list(pool.map(lambda s: _batch(texts.slice(s, batch_rows), s), starts))
    lengths = {f: (np.concatenate([r[1][f] for r in results]) if results else np.zeros(0, np.int32)) for f in FIELDS}
    postings = {}
    for f in FIELDS:
        parts = [r[0][f] for r in results]
        for r in results:
            r[0][f] = None  # free each batch's triples as soon as they are merged
        postings[f] = _combine(parts)
        del parts
    return postings, lengths


def _combine(parts: list[tuple], ranges: int = 64) -> Postings:
    """One posting list from per-batch triples (each sorted by hash then row; batches in row
    order). Merged range by range of the hash space (hashes are uniform), so the extra memory is
    one range, not a second copy of everything."""
    parts = [p for p in parts if p is not None and len(p[0])]
    if not parts:
        return Postings.empty()
    if len(parts) == 1:
        return _group(*parts[0])
    total = sum(len(p[0]) for p in parts)
    out_h = np.empty(total, np.uint64)
    out_d = np.empty(total, np.uint32)
    out_t = np.empty(total, np.uint16)
    bounds = [np.uint64(min((2**64 // ranges) * i, 2**64 - 1)) for i in range(ranges)]
    cuts = [np.searchsorted(p[0], bounds).tolist() + [len(p[0])] for p in parts]
    pos = 0
    for r in range(ranges):
        pieces = [(p[0][c[r]:c[r + 1]], p[1][c[r]:c[r + 1]], p[2][c[r]:c[r + 1]]) for p, c in zip(parts, cuts)]
        h = np.concatenate([x[0] for x in pieces])
        order = np.argsort(h, kind="stable")  # stable: rows stay ascending within a term
        n = len(h)
        out_h[pos:pos + n] = h[order]
        out_d[pos:pos + n] = np.concatenate([x[1] for x in pieces])[order]
        out_t[pos:pos + n] = np.concatenate([x[2] for x in pieces])[order]
        pos += n
    return _group(out_h, out_d, out_t)


def merge(parts: Sequence[tuple[Postings, np.ndarray]]) -> Postings:
    """Postings of several segments concatenated in order; ``row_map`` of each maps its rows to
    the merged segment's (−1 = dropped: a tombstoned row)."""
    triples = []
    for p, row_map in parts:
        if not p.terms:
            continue
        h = np.repeat(p.hash, np.diff(p.off))
        new = row_map[p.doc.astype(np.int64)]
        keep = new >= 0
        if keep.all():
            triples.append((h, new.astype(np.uint32), np.asarray(p.tf)))
        elif keep.any():
            triples.append((h[keep], new[keep].astype(np.uint32), np.asarray(p.tf)[keep]))
    return _combine(triples)


def term_hashes(terms: Sequence[str]) -> np.ndarray:
    return hashing.hash_strings(terms)


def bigram_strings(terms: Sequence[str]) -> list[str]:
    """The bigram field's terms of a term list (as ``embedded_backend.bigrams``)."""
    return [f"{a}_{b}" for a, b in zip(terms, terms[1:])]


def join_terms(term_lists: Sequence[Sequence[str]]) -> pa.Array:
    """Space-joined term strings (the stored ``text_analyzed``)."""
    return pa.array([" ".join(t) for t in term_lists], type=pa.large_string())


def split_terms(texts: pa.Array | pa.ChunkedArray) -> list[list[str]]:
    """The inverse of :func:`join_terms`."""
    return [s.split(" ") if s else [] for s in pc.fill_null(texts, "").to_pylist()]
