"""The one writer of a language index: a changeset of acts staged as generation G+1, one switch.

Publishing version V (index s in its act's version list) of act A follows the spec
(docs/search.md, "One index per language"): a chunk of V whose key (chunk_id, content_hash,
status) is among A's open rows keeps that row; every other chunk of V is a new row (seq_from = s);
every open row of A whose key is not in V is closed (seq_to = s). A version older than A's newest
(out of order), a changed re-publication of a version A already has, and ``replace_act`` lay A out
again: all of A's rows are tombstoned (DEAD) and its versions re-added in order — the content of
versions the caller did not pass comes from A's own rows, vectors come back by content hash.

Why everything in memory until ``commit``: a changeset of 6,183 acts is one commit, so the
writer keeps the index's per-row arrays (act, seq_from, seq_to, key: 20 bytes a row, 14 MB for
the 699,348 rows of the German 2022 state) and the new rows, and writes once at the end: the new
rows as one new segment (its postings built in a few numpy sorts), a new ``seq_to`` file only for
the segments whose rows changed, then the manifest and the switch. Nothing is rewritten per act.
"""

from __future__ import annotations

import copy
import datetime as dt
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.retrieval.language_index import segments as S
from pipelines.retrieval.language_index.files import fsync_dir, save_array
from pipelines.retrieval.language_index.manifest import Generations, Manifest
from pipelines.retrieval.language_index.postings import FIELDS
from pipelines.retrieval.language_index.rows import ROW_SCHEMA, Content, content_keys, from_chunks, keys_of
from pipelines.retrieval.language_index.versions import DEAD, OPEN, normalise

MAX_SEGMENTS = 12  # more segments than this after a commit: the smallest adjacent pair is merged
DEAD_FRACTION = 0.5  # a segment with more tombstoned rows than this is compacted
MAX_VECTOR_PARTS = 8  # a segment's vector parts are consolidated into one past this


@dataclass
class CommitReport:
    generation: int
    changed: bool
    acts_changed: int = 0
    rows_added: int = 0
    rows_closed: int = 0
    rows_kept: int = 0
    rows_tombstoned: int = 0
    versions_added: int = 0
    versions_unchanged: int = 0
    vectors_added: int = 0
    segments_written: int = 0
    segments_merged: int = 0
    rows: int = 0
    live_rows: int = 0
    seconds: float = 0.0
    seconds_postings: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Pending:
    """Rows added in this commit (global ids from ``base`` on), in blocks of Content; the per-row
    fields as Python lists (appended per version, read by index: no array rebuilt per call)."""
    base: int
    blocks: list[Content] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    act: list[int] = field(default_factory=list)
    seq_from: list[int] = field(default_factory=list)
    seq_to: list[int] = field(default_factory=list)
    status: list[int] = field(default_factory=list)
    key: list[int] = field(default_factory=list)
    count: int = 0

    def add(self, content: Content, act: int, seq_from: int, status: list[int]) -> np.ndarray:
        n = len(content)
        ids = np.arange(self.base + self.count, self.base + self.count + n, dtype=np.int64)
        if n:
            self.blocks.append(content)
            self.starts.append(self.count)
            self.act.extend([act] * n)
            self.seq_from.extend([seq_from] * n)
            self.seq_to.extend([OPEN] * n)
            self.status.extend(status)
            self.key.extend(content.key.tolist())
            self.count += n
        return ids

    def get(self, name: str, local: np.ndarray, dtype) -> np.ndarray:
        values = getattr(self, name)
        return np.fromiter((values[i] for i in local.tolist()), dtype=dtype, count=len(local))

    def content(self, local: np.ndarray) -> Content:
        """Content of pending rows (local indices, ascending)."""
        local = np.asarray(local, np.int64)
        if len(local) == self.count:  # all of them (the common case: nothing dropped)
            return Content.concat(self.blocks)
        block = np.searchsorted(np.asarray(self.starts), local, side="right") - 1
        out = []
        for b in np.unique(block):
            out.append(self.blocks[b].take(local[block == b] - self.starts[b]))
        return Content.concat(out)


class IndexWriter:
    """Stage changes to a :class:`~pipelines.retrieval.language_index.LanguageIndex`, then
    :meth:`commit` them as one generation (or :meth:`abort`). Holds the index's writer lock from
    construction until commit/abort."""

    def __init__(self, index, analyzer, *, grace_s: float = 600.0, max_segments: int = MAX_SEGMENTS):
        self.index, self.analyzer = index, analyzer
        self.root, self.lang = index.root, index.lang
        self.grace_s, self.max_segments = grace_s, max_segments
        self.gens = Generations(self.root)
        self._lock = index._lock_for_writer()
        self._lock.acquire()
        self._open = True
        try:
            self.gens.collect(grace_s)  # a writer that died before its switch left files behind
            current = self.gens.current()
            base = self.gens.load(current) if current is not None else Manifest(0, self.lang)
            if base.lang != self.lang:
                raise ValueError(f"{self.root}: index of language {base.lang!r}, not {self.lang!r}")
            self._base_generation = current or 0
            self.m = copy.deepcopy(base)
            self._segs = [S.Segment(self.root, e) for e in self.m.segments]
            sizes = [s.rows for s in self._segs]
            self._bases = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
            self.R0 = int(self._bases[-1])
            cat = lambda parts, dt_: np.concatenate(parts).astype(dt_) if parts else np.zeros(0, dt_)  # noqa: E731
            self._act = cat([np.asarray(s.array("act")) for s in self._segs], np.int32)
            self._seq_from = cat([np.asarray(s.array("seq_from")) for s in self._segs], np.int32)
            self._key = cat([np.asarray(s.array("key")) for s in self._segs], np.uint64)
            self._seq_to = cat([np.asarray(s.seq_to) for s in self._segs], np.int32)  # a copy: ours to change
            order = np.argsort(self._act, kind="stable")
            acts_sorted = self._act[order]
            n_ords = max([a["ord"] for a in self.m.acts.values()], default=-1) + 1
            self._next_ord = n_ords
            bounds = np.searchsorted(acts_sorted, np.arange(n_ords + 1))
            self._rows_of = {o: order[bounds[o]:bounds[o + 1]] for o in range(n_ords)}
            self._pending = _Pending(self.R0)
            self._p_rows_of: dict[int, list[int]] = {}
            self._touched: set[int] = set()
            self._newly_dead: set[int] = set()
            self._vectors: dict[int, np.ndarray] = {}
            self.report = CommitReport(self._base_generation, False)
            self._changed_acts: set[str] = set()
        except BaseException:
            self._lock.release()
            self._open = False
            raise

    # -- context manager: commit on success, abort on error ---------------------------------------
    def __enter__(self) -> "IndexWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self._open:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    # -- row state ---------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("this writer has committed or aborted; open a new one")

    def _ord(self, act_id: str, create: bool) -> int | None:
        entry = self.m.acts.get(act_id)
        if entry is None:
            if not create:
                return None
            if act_id.split(":", 1)[0] == act_id:
                raise ValueError(f"invalid act id {act_id!r}: expected '<jurisdiction>:<slug>'")
            entry = self.m.acts[act_id] = {"ord": self._next_ord, "versions": []}
            self._next_ord += 1
        if create:
            entry.pop("dropped", None)
        return entry["ord"]

    def _act_rows(self, o: int) -> np.ndarray:
        """Global ids of every row of act ``o`` (existing and pending), ascending."""
        old = self._rows_of.get(o, np.zeros(0, np.int64))  # ascending: a stable argsort's run
        new = np.asarray(self._p_rows_of.get(o, []), dtype=np.int64)
        return np.concatenate((old.astype(np.int64), new)) if len(new) else old.astype(np.int64)

    def _field(self, rows: np.ndarray, existing: np.ndarray, name: str, dtype) -> np.ndarray:
        old = rows < self.R0
        out = np.empty(len(rows), dtype)
        out[old] = existing[rows[old]]
        if not old.all():
            out[~old] = self._pending.get(name, rows[~old] - self.R0, dtype)
        return out

    def _seq_to_of(self, rows: np.ndarray) -> np.ndarray:
        return self._field(rows, self._seq_to, "seq_to", np.int64)

    def _seq_from_of(self, rows: np.ndarray) -> np.ndarray:
        return self._field(rows, self._seq_from, "seq_from", np.int64)

    def _keys_of(self, rows: np.ndarray) -> np.ndarray:
        return self._field(rows, self._key, "key", np.uint64)

    def _set_seq_to(self, rows: np.ndarray, value: int) -> None:
        rows = np.asarray(rows, np.int64)
        old = rows[rows < self.R0]
        old = old[self._seq_to[old] != value]
        if len(old):
            segs = set((np.searchsorted(self._bases, old, side="right") - 1).tolist())
            self._touched |= segs
            if value == DEAD:
                self._newly_dead |= segs
                self.report.rows_tombstoned += len(old)
            self._seq_to[old] = value
        for r in rows[rows >= self.R0].tolist():
            self._pending.seq_to[r - self.R0] = value

    def _content_of(self, rows: np.ndarray) -> Content:
        """The stored content of rows (ascending global ids)."""
        rows = np.sort(np.asarray(rows, np.int64))
        parts = []
        old = rows[rows < self.R0]
        if len(old):
            seg_of = np.searchsorted(self._bases, old, side="right") - 1
            for si in np.unique(seg_of):
                local = old[seg_of == si] - self._bases[si]
                seg = self._segs[si]
                table = seg.take(local, S.ROW_COLUMNS)
                parts.append(Content(table.cast(ROW_SCHEMA), np.asarray(seg.array("key"))[local], np.asarray(seg.array("chash"))[local]))
        new = rows[rows >= self.R0]
        if len(new):
            parts.append(self._pending.content(new - self.R0))
        return Content.concat(parts)

    def _status_codes(self, content: Content) -> list[int]:
        enc = pc.fill_null(content.table.column("status"), "").combine_chunks().dictionary_encode()
        codes = []
        for s in enc.dictionary.to_pylist():
            if s not in self.m.statuses:
                self.m.statuses.append(s)
            codes.append(self.m.statuses.index(s))
        return np.asarray(codes, np.int64)[enc.indices.to_numpy()].tolist() if len(codes) else []

    # -- one version, appended -----------------------------------------------------------------------
    def _append(self, act_id: str, o: int, version: str, content: Content) -> None:
        entry = self.m.acts[act_id]
        s = len(entry["versions"])
        entry["versions"].append(version)
        rows = self._act_rows(o)
        open_rows = rows[self._seq_to_of(rows) == OPEN] if len(rows) else rows
        open_keys = self._keys_of(open_rows)
        kept = np.isin(content.key, open_keys)
        closed = open_rows[~np.isin(open_keys, content.key)]
        self._set_seq_to(closed, s)
        new = None if kept.all() else (content if not kept.any() else content.take(np.flatnonzero(~kept)))
        if new is not None:
            ids = self._pending.add(new, o, s, self._status_codes(new))
            self._p_rows_of.setdefault(o, []).extend(ids.tolist())
            self.report.rows_added += len(ids)
        self.report.rows_kept += int(kept.sum())
        self.report.rows_closed += len(closed)
        self.report.versions_added += 1
        self._changed_acts.add(act_id)

    def _visible_at(self, o: int, s: int) -> np.ndarray:
        rows = self._act_rows(o)
        if not len(rows):
            return rows
        sf, st = self._seq_from_of(rows), self._seq_to_of(rows)
        return rows[(sf <= s) & (s < st)]

    def _tombstone_act(self, o: int) -> None:
        rows = self._act_rows(o)
        live = rows[self._seq_to_of(rows) != DEAD] if len(rows) else rows
        self._set_seq_to(live, DEAD)

    def _layout(self, act_id: str, o: int, versions: list[tuple[str, Content]]) -> None:
        """Tombstone every row of the act and add ``versions`` (sorted) again."""
        self._tombstone_act(o)
        self.m.acts[act_id]["versions"] = []
        for v, content in versions:
            self._append(act_id, o, v, content)

    # -- public API --------------------------------------------------------------------------------
    def add_version(self, act_id: str, version: str | dt.date, chunks: pa.Table,
                    analysed: Sequence[Sequence[str]] | pa.Array | pa.ChunkedArray | None = None) -> None:
        """Publish one version of an act (``chunks``: the CHUNKS rows of that version; ``analysed``:
        the terms of each chunk's ``heading_path + "\\n" + text`` — lists, or an Arrow string
        array of the terms joined by single spaces — else the analyser's). Re-adding
        a version the index already has with the same content changes nothing."""
        self._check_open()
        v = normalise(version)
        content = from_chunks(act_id, v, chunks, analysed, self.analyzer)
        self._add(act_id, v, content)

    def _add(self, act_id: str, v: str, content: Content) -> None:
        o = self._ord(act_id, create=True)
        versions = self.m.acts[act_id]["versions"]
        if not versions or v > versions[-1]:
            self._append(act_id, o, v, content)
            return
        if v in versions:
            s = versions.index(v)
            held = self._keys_of(self._visible_at(o, s))
            if len(held) == len(content) and set(held.tolist()) == set(content.key.tolist()):
                self.report.versions_unchanged += 1
                return
        # out of order, or a version re-published with other content: lay the act out again
        layout = {w: self._content_of(self._visible_at(o, i)) for i, w in enumerate(versions)}
        layout[v] = content
        self._layout(act_id, o, sorted(layout.items()))

    def carried_over(self, act_id: str, version: str | dt.date, chunks: pa.Table) -> np.ndarray:
        """Which rows of ``chunks`` :meth:`add_version` of ``version`` would keep from the rows the
        act holds open (their analysed terms are never read): a bool per chunk, all False unless
        ``version`` is newer than every version of the act held.

        Why: the index step analysed every chunk of every version it added, though an amendment
        changes a few §§ of an act; on a converter-fixes commit (174 acts, 28,756 chunks, every row
        kept) analysis was 81 of the step's 97 s (the wide-slice replay, BENCHMARKS)."""
        self._check_open()
        o = self._ord(act_id, create=False)
        versions = self.m.acts[act_id]["versions"] if o is not None else []
        if o is None or not versions or normalise(version) <= versions[-1]:
            return np.zeros(chunks.num_rows, bool)
        rows = self._act_rows(o)
        open_rows = rows[self._seq_to_of(rows) == OPEN] if len(rows) else rows
        return np.isin(keys_of(chunks)[0], self._keys_of(open_rows))

    def replace_act(self, act_id: str, versions: Sequence[tuple]) -> None:
        """The act's complete history: ``(version, chunks)`` or ``(version, chunks, analysed)`` per
        version, in any order. The same history as held changes nothing; otherwise every row of
        the act is tombstoned and the versions are added again in order."""
        self._check_open()
        layout: dict[str, Content] = {}
        for item in versions:
            item = tuple(item)
            v, chunks, analysed = item if len(item) == 3 else (*item, None)
            v = normalise(v)
            if v in layout:
                raise ValueError(f"{act_id}: version {v} given twice")
            layout[v] = from_chunks(act_id, v, chunks, analysed, self.analyzer)
        o = self._ord(act_id, create=True)
        held = self.m.acts[act_id]["versions"]
        if held == sorted(layout) and all(
                set(self._keys_of(self._visible_at(o, i)).tolist()) == set(layout[w].key.tolist())
                and len(self._visible_at(o, i)) == len(layout[w]) for i, w in enumerate(held)):
            self.report.versions_unchanged += len(held)
            return
        self._layout(act_id, o, sorted(layout.items()))

    def drop_act(self, act_id: str) -> None:
        """Remove an act: its rows are tombstoned, it leaves ``acts()``."""
        self._check_open()
        o = self._ord(act_id, create=False)
        if o is None:
            raise ValueError(f"unknown act {act_id!r}")
        self._tombstone_act(o)
        self.m.acts[act_id]["versions"] = []
        self.m.acts[act_id]["dropped"] = True
        self._changed_acts.add(act_id)

    def set_vectors(self, content_hashes: Sequence[str], vectors: np.ndarray, encoder_id: str | None = None) -> None:
        """Dense vectors by content hash (``embedding_cache``'s key): every live row with that
        content and no vector yet gets it at commit — rows added in the same commit included."""
        self._check_open()
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(content_hashes):
            raise ValueError(f"{len(content_hashes)} content hashes but vectors of shape {vectors.shape}")
        if self.m.vector_dim is not None and vectors.shape[1] != self.m.vector_dim:
            raise ValueError(f"vectors of dimension {vectors.shape[1]}, the index holds {self.m.vector_dim}")
        if encoder_id and self.m.vector_encoder and encoder_id != self.m.vector_encoder:
            raise ValueError(f"vectors of encoder {encoder_id}, the index holds {self.m.vector_encoder}'s")
        self.m.vector_dim = int(vectors.shape[1])
        self.m.vector_encoder = encoder_id or self.m.vector_encoder
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1.0, norms)
        for h, v in zip(content_keys(list(content_hashes)).tolist(), vectors):
            self._vectors[h] = v

    def abort(self) -> None:
        """Drop everything staged; the serving generation stays."""
        if self._open:
            self._open = False
            self._lock.release()

    # -- commit --------------------------------------------------------------------------------------
    def commit(self) -> CommitReport:
        """Write the staged changes as generation G+1 and switch CURRENT to it (one atomic
        rename); the report says what changed. Nothing staged: no new generation."""
        self._check_open()
        t0 = time.perf_counter()
        try:
            report = self._commit(t0)
        except BaseException:
            self.abort()
            raise
        self._open = False
        self._lock.release()
        return report

    def _commit(self, t0: float) -> CommitReport:
        r = self.report
        pend = self._pending
        if not (self._touched or pend.count or self._vectors or self._changed_acts):
            r.seconds = time.perf_counter() - t0
            return r
        G = self._base_generation + 1
        if (self.gens.current() or 0) != self._base_generation:
            raise RuntimeError(f"{self.root}: CURRENT moved while this writer held the lock")
        entries = [copy.deepcopy(e) for e in self.m.segments]
        segs = list(self._segs)
        seq_tos = [self._seq_to[self._bases[i]:self._bases[i + 1]] for i in range(len(segs))]
        # mutable state of the touched segments: a new seq_to (and dead-df) file each
        for i in sorted(self._touched):
            folder = segs[i].folder
            name = S.gen_file("seq_to", G)
            save_array(folder / name, seq_tos[i])
            entries[i]["seq_to"] = name
            if i in self._newly_dead:
                dead = np.flatnonzero(seq_tos[i] == DEAD)
                entries[i]["dead"] = S.write_dead(folder, G, segs[i].terms_of(dead))
        # the new rows: one segment
        keep = np.flatnonzero(np.asarray(pend.seq_to, np.int64) != DEAD) if pend.count else np.zeros(0, np.int64)
        if len(keep):
            tp = time.perf_counter()
            content = pend.content(keep)
            seg_id = f"s{G:08d}-{uuid.uuid4().hex[:8]}"
            arrays = {"act": np.asarray(pend.act)[keep], "seq_from": np.asarray(pend.seq_from)[keep],
                      "status": np.asarray(pend.status)[keep], "key": content.key, "chash": content.chash}
            r.rows_added = len(keep)
            seq_to = np.asarray(pend.seq_to, np.int64)[keep]
            entry = S.write_segment(self.root / "segments" / seg_id, content.table, arrays, seq_to, G)
            entries.append(entry)
            segs.append(S.Segment(self.root, entry))
            seq_tos.append(seq_to.astype(np.int32))
            r.segments_written += 1
            r.seconds_postings = time.perf_counter() - tp
            del content
        # vectors: rows without one whose content has one now (or had one, in a tombstoned row)
        self._assign_vectors(G, segs, entries, seq_tos)
        # merges
        segs, entries, seq_tos = self._merge(G, segs, entries, seq_tos)
        for seg, entry, st in zip(segs, entries, seq_tos):
            live = st != DEAD
            entry["live"] = int(live.sum())
            entry["len"] = {f: int(np.asarray(seg.array(f"{f}.len"))[live].sum()) for f in FIELDS}
        self.m.segments = entries
        self.m.generation = G
        self.m.analyzer = getattr(self.analyzer, "id", None) or self.m.analyzer
        now = time.time()
        self.m.created_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        self.m.previous = {"generation": self._base_generation, "superseded_at": now} if self._base_generation else None
        for seg_dir in {e["id"] for e in entries}:
            fsync_dir(self.root / "segments" / seg_dir)
        self.gens.write_manifest(self.m)
        fsync_dir(self.gens.manifests)
        self._switch(G)
        fsync_dir(self.root)
        r.generation, r.changed = G, True
        r.acts_changed = len(self._changed_acts)
        r.rows = sum(e["rows"] for e in entries)
        r.live_rows = sum(e["live"] for e in entries)
        try:
            self.gens.collect(self.grace_s)
        except OSError:
            pass  # garbage stays for the next writer
        r.seconds = time.perf_counter() - t0
        return r

    def _switch(self, generation: int) -> None:
        """The atomic switch (a separate method so tests can fail or stall it)."""
        self.gens.switch(generation)

    def _assign_vectors(self, G: int, segs: list, entries: list[dict], seq_tos: list[np.ndarray]) -> None:
        have = self._vectors
        carried = self.m.vector_dim is not None and self.report.rows_added > 0
        if not have and not carried:
            return
        lookup: dict[int, np.ndarray] = {}
        if carried:  # vectors of content the index already embedded (carried over a re-layout)
            for seg in segs[:len(self.m.segments)]:
                ch = np.asarray(seg.array("chash"))
                for rws, vecs in seg.vector_parts():
                    for h, v in zip(ch[np.asarray(rws, np.int64)].tolist(), np.asarray(vecs)):
                        lookup.setdefault(h, v)
        lookup.update(have)
        if not lookup:
            return
        hashes = np.fromiter(lookup.keys(), dtype=np.uint64, count=len(lookup))
        order = np.argsort(hashes)
        hashes = hashes[order]
        values = np.stack(list(lookup.values()))[order]
        for i, (seg, entry, st) in enumerate(zip(segs, entries, seq_tos)):
            ch = np.asarray(seg.array("chash"))
            want = np.isin(ch, hashes) & (st != DEAD)
            for rws, _ in seg.vector_parts():
                want[np.asarray(rws, np.int64)] = False
            rows = np.flatnonzero(want)
            if not len(rows):
                continue
            vecs = values[np.searchsorted(hashes, ch[rows])]
            entry["vectors"].append(S.write_vectors(seg.folder, G, rows, vecs))
            self.report.vectors_added += len(rows)
            if len(entry["vectors"]) > MAX_VECTOR_PARTS:
                seg_now = S.Segment(self.root, entry)
                parts = seg_now.vector_parts()
                allr = np.concatenate([p[0] for p in parts])
                allv = np.concatenate([np.asarray(p[1]) for p in parts])
                entry["vectors"] = [S.write_vectors(seg.folder, G, allr, allv)]
            segs[i] = S.Segment(self.root, entry)

    def _merge(self, G: int, segs: list, entries: list[dict], seq_tos: list[np.ndarray]):
        """Compact mostly-dead segments; while there are too many, merge the smallest adjacent pair."""
        def live(i):
            return int((seq_tos[i] != DEAD).sum())

        def do(i, j):
            new_id = f"s{G:08d}-m{uuid.uuid4().hex[:8]}"
            entry, _ = S.merge_segments(self.root, segs[i:j], seq_tos[i:j], new_id, G)
            seg = S.Segment(self.root, entry)
            st = np.asarray(seg.seq_to).astype(np.int32)
            segs[i:j], entries[i:j], seq_tos[i:j] = [seg], [entry], [st]
            self.report.segments_merged += j - i

        i = 0
        while i < len(segs):
            n = len(seq_tos[i])
            if live(i) == 0:  # nothing left to serve: the segment goes
                del segs[i], entries[i], seq_tos[i]
                self.report.segments_merged += 1
                continue
            if (n - live(i)) / n > DEAD_FRACTION:
                do(i, i + 1)
            i += 1
        while len(segs) > self.max_segments:
            sizes = [live(k) for k in range(len(segs))]
            k = min(range(len(segs) - 1), key=lambda k: sizes[k] + sizes[k + 1])
            do(k, k + 2)
        return segs, entries, seq_tos
