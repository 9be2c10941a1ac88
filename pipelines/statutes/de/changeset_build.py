"""German federal law, one changeset at a time: every act a gesetze commit changed, parsed,
checked, diffed and published — the initial import of 6,183 acts and a one-act BGBl issue alike.

The steps per act are the single-act build's (:mod:`pipelines.statutes.de.build`): parse the
Markdown at the commit (:func:`~pipelines.statutes.de.markdown.parse_markdown`), the ARTICLES /
NODES / ACTS tables, chunks per Absatz, the diff against the act's previous published version
(:func:`~pipelines.statutes.de.build.diff_german`: same words in another form is ``editorial``),
staged in ``corpus/de/<act>/.staging/<version>/``. What differs is the scale:

* acts are built in worker processes (two on two cores), a batch at a time, texts read from git in
  one ``cat-file`` stream;
* the blocking checks run once per batch (:mod:`pipelines.statutes.batch_checks`: the same GX
  suites, failures traced to their act);
* an act that fails to parse or fails a check is *quarantined* with its reason — its staging
  dropped, its last good version serving — and never blocks the other acts;
* each act version is promoted by one rename as its batch passes; the changeset's record
  (:mod:`pipelines.statutes.changeset_record`) is saved after every batch, so a killed run resumes
  with the acts not yet settled and never re-parses a published one.

Version ids come from the changeset (``2012-08-06``, ``2012-08-06.02``: :mod:`connectors.gesetze.history`);
the tables' ``version`` column holds the date part.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Iterable, Protocol

import pyarrow as pa

from connectors.changesets import ActChange, Changeset
from core.layout import Layout
from pipelines.statutes.batch_checks import check_batch, suites_fingerprint, validated_files
from pipelines.statutes.changeset_record import ActOutcome, ChangesetRecord, load_record, save_record
from pipelines.statutes.publish import publish_version
from pipelines.statutes.store import CorpusStore

CHUNK_BATCH = 300  # acts per batch: one GX validation per suite per batch (~1 s) and one record save


class GermanSource(Protocol):
    """What the build needs of the gesetze source (``connectors.gesetze.GesetzeSource``)."""

    url: str

    def read_many(self, commit: str, paths: list[str]) -> dict[str, bytes | None]: ...


@dataclass(frozen=True)
class BuildTask:
    """One act version to build in a worker (picklable)."""
    home: str
    act_id: str
    citation: str
    title: str
    unit: str  # "§" | "Art"
    version: str
    source_url: str
    source_sha: str
    data: bytes
    max_tokens: int
    tolerance: float


def _act_of(layout: Layout, act_id: str):
    from schemas.acts import registry

    reg = registry(layout.home)
    return reg.get(act_id) if act_id in reg else None


_UNIT_HEADING = re.compile(r"^#{1,6}[ \t]+(§|Art\.?|Artikel|Anlage)[ \t]*(\d+[a-z]*)\b", re.M)
_KIND = {"§": "par:", "Anlage": "anl:"}


def source_unit_headings(markdown: bytes) -> set[str]:
    """The §§, Artikel and numbered Anlagen the Markdown heads (``par:5a``, ``art:3``, ``anl:2``), read
    from the raw bytes, independently of the parser."""
    text = markdown.decode("utf-8", errors="replace")
    return {_KIND.get(m.group(1), "art:") + m.group(2).lower() for m in _UNIT_HEADING.finditer(text)}


def source_confirmed_delta(diff: pa.Table, markdown: bytes) -> int:
    """Units added minus units removed, counting only what the new Markdown confirms: an added § is
    one the Markdown heads, a removed one one it no longer heads. The article-count check compares a
    new version with its previous one ± a tolerance, a guard against a parser splitting or losing
    articles; a German act that really grew (a BGBl issue adding §§ to a small act, ten years of
    amendments in the 2022 refresh) tripped it — 73 of the 78 quarantines of the whole-history replay
    (BENCHMARKS.md). A parser that splits or loses articles still trips it: the units it invents or
    drops are not the source's headings."""
    heads = source_unit_headings(markdown)
    delta = 0
    for aid, change in zip(diff["article_id"].to_pylist(), diff["change"].to_pylist()):
        parts = aid.split(":")
        key = ":".join(parts[2:4]) if len(parts) >= 4 else ""
        if change == "added" and key in heads:
            delta += 1
        elif change == "removed" and key[:4] in ("par:", "art:", "anl:") and key not in heads:
            delta -= 1
    return delta


def build_one(task: BuildTask) -> dict:
    """Parse, tables, chunks and diff of one act version into its staging folder (in a worker).
    Never raises: a failure comes back as ``{"ok": False, "reason", "message"}``."""
    from pipelines.statutes.de.build import (CHUNKER_VERSION, GermanDiff, build_german_chunks, count_tolerance,
                                             diff_german)
    from pipelines.statutes.de.markdown import PARSER_VERSION, parse_markdown
    from pipelines.statutes.de.model import GermanAct, GermanStatuteError
    from pipelines.statutes.de.tables import acts_table, articles_table, nodes_table
    from schemas.arrow import ACTS

    t0 = time.perf_counter()
    layout = Layout(Path(task.home))
    store = CorpusStore(layout)
    act = GermanAct(task.act_id, task.citation, task.title, task.unit)
    try:
        with tempfile.TemporaryDirectory(prefix="lexpipe-de-") as tmp:
            slug = task.act_id.split(":", 1)[1]
            path = Path(tmp) / slug / "index.md"
            path.parent.mkdir()
            path.write_bytes(task.data)
            try:
                st = parse_markdown(path, act=act, version=dt.date.fromisoformat(task.version[:10]))
            except GermanStatuteError as exc:
                msg = str(exc).replace(str(path), f"{task.source_url}")
                return {"ok": False, "reason": "parse_error", "message": msg, "seconds": time.perf_counter() - t0}
        articles = articles_table(st)
        nodes = nodes_table(st)
        acts = acts_table(st, source_sha256=task.source_sha, source_url=task.source_url)
        acts = acts.set_column(acts.schema.get_field_index("parser_version"), ACTS.field("parser_version"),
                               pa.array([PARSER_VERSION], pa.string()))
        chunks = build_german_chunks(articles, max_tokens=task.max_tokens)
        store.discard_staging(task.act_id, task.version)
        store.stage_table(task.act_id, task.version, "articles", articles)
        store.stage_table(task.act_id, task.version, "nodes", nodes)
        store.stage_table(task.act_id, task.version, "acts", acts)
        store.stage_table(task.act_id, task.version, "chunks", chunks)
        statuses = articles["status"].to_pylist()
        stats = {"sections": articles.num_rows, "in_force": statuses.count("in_force"),
                 "repealed": statuses.count("repealed"), "pending": statuses.count("pending"),
                 "structure_units": len(st.structure), "source_format": "markdown", "chunks": chunks.num_rows}
        store.stage_json(task.act_id, task.version, "parse.json",
                         {"source_sha256": task.source_sha, "parser_version": PARSER_VERSION, "stats": stats,
                          "parse_seconds": round(st.parse_seconds, 4)})
        store.stage_json(task.act_id, task.version, "chunk.json",
                         {"max_tokens": task.max_tokens, "chunker": CHUNKER_VERSION, "source_sha256": task.source_sha})
        prev = store.previous_version(task.act_id, task.version)
        diff_counts: dict[str, int] = {}
        prev_count = None
        tol = task.tolerance
        if prev is not None:
            old = store.read(task.act_id, prev, "articles", published_only=True)
            tol = count_tolerance(task.tolerance, prev[:10], task.version[:10])
            diff = GermanDiff(task.act_id, prev, task.version, diff_german(old, articles))
            # the count a correct parse should give: the previous one, moved by the §§ / Artikel the
            # diff added or removed *and the source's own headings confirm* (``source_confirmed_delta``)
            prev_count = old.num_rows + source_confirmed_delta(diff.table, task.data)
            store.stage_table(task.act_id, task.version, f"diff_from_{prev}", diff.table, "diff")
            store.stage_file(task.act_id, task.version, f"diff_from_{prev}.md", diff.markdown())
            diff_counts = {k: v for k, v in diff.counts().items() if v}
        return {"ok": True, "units": articles.num_rows, "chunks": chunks.num_rows, "diff": diff_counts,
                "previous": prev, "previous_count": prev_count, "tolerance": tol,
                "seconds": time.perf_counter() - t0}
    except Exception as exc:  # a parser bug on one act must not stop the other 6,000
        CorpusStore(layout).discard_staging(task.act_id, task.version)
        tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
        return {"ok": False, "reason": "crash", "message": f"{task.source_url}: {type(exc).__name__}: {exc} ({tb})",
                "seconds": time.perf_counter() - t0}


def _warm() -> None:
    """Worker start-up: the imports every task needs (spaCy, pyarrow, the parser)."""
    import pipelines.statutes.de.build  # noqa: F401
    import pipelines.statutes.de.markdown  # noqa: F401
    from pipelines.chunking import spacy_pipeline

    spacy_pipeline("de")


@dataclass
class BatchProgress:
    changeset: str
    batch: int
    batches: int
    done: int
    total: int
    published: int
    quarantined: int
    seconds: float


def _source_url(source: GermanSource, changeset: Changeset, member: ActChange) -> str:
    return f"{source.url}@{changeset.position[:12]}:{member.path}"


def _already_published(store: CorpusStore, member: ActChange, sha: str) -> bool:
    directory = store.layout.version_dir(member.act_id, member.version)
    manifest = store.manifest(directory) if directory.is_dir() else {}
    return bool(manifest) and manifest.get("source_sha256") == sha


def apply_changeset(layout: Layout, source: GermanSource, changeset: Changeset, *, workers: int = 2,
                    batch_size: int = CHUNK_BATCH, max_tokens: int = 256, tolerance: float = 0.02,
                    only: Iterable[str] | None = None,
                    progress: Callable[[BatchProgress], None] | None = None) -> ChangesetRecord:
    """Build and publish every act ``changeset`` changed (or the ``only`` ones); resumable and
    idempotent (see the module docstring). Returns the changeset's record, saved."""
    store = CorpusStore(layout)
    record = load_record(layout, changeset)
    if record.applied and only is None:
        return record
    t_start = time.perf_counter()
    wanted = set(only) if only is not None else None
    members = [m for m in changeset.members if (wanted is None or m.act_id in wanted)
               and m.act_id not in record.outcomes]
    for m in [m for m in members if m.change == "deleted"]:
        record.outcomes[m.act_id] = ActOutcome(m.act_id, "", "deleted", message=f"{m.path} removed by the source")
    todo = [m for m in members if m.change != "deleted"]
    batches = [todo[i:i + batch_size] for i in range(0, len(todo), batch_size)]
    timings = record.timings
    pool = None
    try:
        for b, batch in enumerate(batches, 1):
            t0 = time.perf_counter()
            texts = source.read_many(changeset.position, [m.path for m in batch])
            timings["read"] = timings.get("read", 0.0) + time.perf_counter() - t0
            tasks, skipped = [], 0
            for m in batch:
                data = texts.get(m.path)
                if data is None:
                    record.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "quarantined", "source_missing",
                                                           f"{_source_url(source, changeset, m)}: not in the commit")
                    continue
                sha = hashlib.sha256(data).hexdigest()
                if _already_published(store, m, sha):
                    record.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "unchanged", source_sha=sha)
                    skipped += 1
                    continue
                act = _act_of(layout, m.act_id)
                tasks.append((m, BuildTask(str(layout.home), m.act_id, act.citation if act else m.address.upper(),
                                           act.title if act else m.address, act.article_unit if act and
                                           act.article_unit in ("§", "Art") else "§", m.version,
                                           _source_url(source, changeset, m), sha, data, max_tokens, tolerance)))
            t0 = time.perf_counter()
            if tasks and workers > 1 and len(tasks) > 4:
                if pool is None:
                    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_warm)
                results = list(pool.map(build_one, [t for _, t in tasks], chunksize=4))
            else:
                results = [build_one(t) for _, t in tasks]
            timings["build"] = timings.get("build", 0.0) + time.perf_counter() - t0
            built: dict[str, tuple[ActChange, BuildTask, dict]] = {}
            for (m, task), res in zip(tasks, results):
                if res["ok"]:
                    built[m.act_id] = (m, task, res)
                else:
                    record.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "quarantined", res["reason"],
                                                           res["message"], task.source_sha, seconds=res["seconds"])
            t0 = time.perf_counter()
            if built:
                tables = {n: {a: store.read(a, m.version, n) for a, (m, _, _) in built.items()}
                          for n in ("articles", "nodes", "chunks")}
                prev = {a: (r["previous_count"], r["tolerance"]) for a, (_, _, r) in built.items()
                        if r["previous_count"] is not None}
                report = check_batch(tables["articles"], tables["nodes"], tables["chunks"], previous_counts=prev,
                                     max_tokens=max_tokens)
                fingerprint = suites_fingerprint(max_tokens=max_tokens)
                checked = {a: validated_files(store.built_dir(a, m.version)) for a, (m, _, _) in built.items()
                           if a not in report.failures}
            else:
                report = None
            timings["checks"] = timings.get("checks", 0.0) + time.perf_counter() - t0
            t0 = time.perf_counter()
            for act_id, (m, task, res) in built.items():
                if report is not None and act_id in report.failures:
                    store.discard_staging(act_id, m.version)
                    record.outcomes[act_id] = ActOutcome(act_id, m.version, "quarantined", report.reasons[act_id],
                                                         f"{task.source_url}: " + "; ".join(report.failures[act_id])[:2000],
                                                         task.source_sha, res["units"], res["chunks"], seconds=res["seconds"])
                    continue
                store.stage_json(act_id, m.version, "source.json", {
                    "source": "gesetze", "changeset": changeset.key, "commit": changeset.position,
                    "date": changeset.date, "kind": changeset.kind, "gazette": changeset.gazette,
                    "title": changeset.title, "path": m.path, "change": m.change, "source_url": task.source_url,
                    "source_sha256": task.source_sha})
                try:
                    from pipelines.statutes.de.build import CHUNKER_VERSION

                    publish_version(layout, act_id=act_id, version=m.version, chunker=CHUNKER_VERSION)
                except Exception as exc:
                    store.discard_staging(act_id, m.version)
                    record.outcomes[act_id] = ActOutcome(act_id, m.version, "quarantined", "publish_error",
                                                         f"{task.source_url}: {type(exc).__name__}: {exc}", task.source_sha)
                    continue
                record.outcomes[act_id] = ActOutcome(act_id, m.version, "published", source_sha=task.source_sha,
                                                     units=res["units"], chunks=res["chunks"], diff=res["diff"],
                                                     seconds=round(res["seconds"], 4),
                                                     validated={"suites": fingerprint, "files": checked[act_id]})
            timings["publish"] = timings.get("publish", 0.0) + time.perf_counter() - t0
            record.batches += 1
            save_record(layout, record)
            if progress:
                c = record.counts()
                progress(BatchProgress(changeset.key, b, len(batches), sum(len(x) for x in batches[:b]), len(todo),
                                       c["published"], c["quarantined"], time.perf_counter() - t_start))
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    record.seconds += time.perf_counter() - t_start
    if not record.pending():
        record.state = "applied"
        record.finished_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    save_record(layout, record)
    return record
