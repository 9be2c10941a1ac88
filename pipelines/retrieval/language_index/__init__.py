"""One embedded search index per language, acts and versions as fields (issue 24, point 6).

Why: the embedded backend kept one LanceDB table per (act, version) and a pointer file per act. At
all of German federal law (6,636 acts, each with versions) that is thousands of tables, an
unfiltered German search would open every one of them, and a gazette issue's changeset of a few
acts — or the initial load of all of them — would be thousands of separate switches. Here a
language has one index; a row is one chunk *content* of an act with the interval of the act's
versions it holds for; a changeset is one commit and one atomic switch.

Layout under the index root (e.g. ``$LEXPIPE_HOME/index/embedded/statutes_de``)::

    CURRENT                       {"generation": G, ...}: the serving generation (atomic replace)
    LOCK                          the writer's flock (one writer; a dead writer's lock is free)
    manifests/gNNNNNNNN.json      per generation: acts (number, versions), statuses, segments
    segments/<id>/                written once by the commit that added its rows:
        rows.arrow                display fields (Arrow IPC, uncompressed: taken at random)
        terms.arrow               analysed terms, space-joined (Arrow IPC, zstd, 8,192-row batches)
        act|seq_from|status|key|chash.npy      per-row arrays
        terms|bigrams.len.npy     row lengths per field
        terms|bigrams.{hash,off,doc,tf}.npy    postings: sorted 64-bit term hashes, offsets, rows, tf
        seq_to.gNNNNNNNN.npy      per-row end of validity, one file per generation that changed it
        dead.gNNNNNNNN.npz        df still held by tombstoned rows (subtracted at query time)
        vec|vecrows.gNNNNNNNN.npy vector parts (unit rows, float32), one per commit that added some

Modules: ``hashing`` (64-bit term hashes, composable for bigrams), ``postings`` (posting lists:
build, merge), ``rows`` (a version's content and its carry-over keys), ``segments`` (segment files,
merges), ``manifest`` (generations, CURRENT, collection), ``lock``, ``writer`` (the changeset and
the commit), ``bm25`` (scoring), ``snapshot`` (visibility, BM25, dense, rows, views, stats),
``versions`` (version ids, day semantics), ``index`` (``LanguageIndex``).

Measured (``bench/language_index.py``, BENCHMARKS.md "One index per language"; 2 shared cores
under load 11–16 from other jobs, so CPU time is given beside wall time) on the 2022 state of the
German bundle, 6,636 acts, 1,419,569 paragraph chunks, 149.3 M characters, 34.6 M terms:

* analysis (``get_analyzer("de")``, 2 processes, cold): 1,061 s wall under that load; the index
  build from analysed terms, one commit of 6,636 acts: 131 s wall, 39 s CPU (postings in two
  threads: 69 s wall), peak RSS 3.8 GB with the caller's Arrow copy of the corpus; on disk 522 MB
  of display rows, 406 MB of postings (both fields), 39 MB of compressed term strings;
* BM25 over the whole index for GerLayQA questions (~194 terms, ~5 M postings each): CPU per
  query p50 / p95 26 / 41 ms on one core once the per-term weight cache is warm; a full
  partition instead of the sampled top-k threshold: 41 / 60; numpy's gather-add-scatter instead of
  scipy's ``csc_matvec`` as well: 66 / 99; no weight cache: 128 / 195 (64 MB: 33 / 68).
"""

from pipelines.retrieval.language_index.index import LanguageIndex
from pipelines.retrieval.language_index.lock import IndexLocked
from pipelines.retrieval.language_index.snapshot import Resolution, Snapshot
from pipelines.retrieval.language_index.writer import CommitReport, IndexWriter

__all__ = ["LanguageIndex", "IndexWriter", "Snapshot", "Resolution", "CommitReport", "IndexLocked"]
