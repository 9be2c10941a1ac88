"""``lexpipe`` command line: ``run`` (the main job over registry acts), ``ui`` (the Dagster UI on
127.0.0.1), ``search``, ``index``, ``serve`` and ``prefect``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def _console():
    from rich.console import Console

    return Console(stderr=False, width=None if sys.stdout.isatty() else 160)


def _selected(args: argparse.Namespace):
    """``--acts`` / ``--jurisdiction`` → (registry acts, the case-law collections to build).

    Default: the Polish acts, as before the registry, without case law (the 200 SAOS judgments
    add about 18 minutes on 2 cores, nearly all embedding their 3,645 chunks: ``--acts
    pl:cases``). A case-law collection (not a registry act: ``de:cases`` Open Legal Data,
    ``pl:cases`` SAOS) is named in ``--acts`` or comes with its ``--jurisdiction`` given
    explicitly. The collections run after the statutes, so the
    Polish citation links resolve against the versions just published."""
    from schemas.cases import CASES_ACT, PL_CASES_ACT
    from schemas.acts import registry

    collections = (PL_CASES_ACT, CASES_ACT)
    names = [a.strip() for raw in (args.acts or []) for a in raw.split(",") if a.strip()]
    jurisdictions = [j.strip() for raw in (args.jurisdiction or []) for j in raw.split(",") if j.strip()]
    explicit = list(jurisdictions)
    if not names and not jurisdictions:
        jurisdictions = ["pl"]
    cases = tuple(c for c in collections if c in names or c.split(":")[0] in explicit)
    acts = registry().select([a for a in names if a not in collections], jurisdictions)
    return acts, cases


def _unknown_act(act_ids, *, also: tuple[str, ...] = (), source: str | None = None) -> str | None:
    """The refusal of the first id the registry does not hold (naming the ids it holds, and
    ``also``: ids a command takes besides the registry's), or of an act of another ``source``;
    None when every id is known."""
    from schemas.acts import registry

    reg = registry()
    for a in act_ids:
        if a in also:
            continue
        try:
            act = reg.get(a)
        except KeyError as exc:
            return exc.args[0] + (f"; also {', '.join(also)}" if also else "")
        if source is not None and act.source != source:
            return (f"act {a!r} is not an act of source {source!r}; those are "
                    f"{', '.join(x.id for x in reg.of_source(source)) or 'none'}")
    return None


def cmd_run(args: argparse.Namespace) -> int:
    from lexpipe.runner import ensure_dagster_home, run_cases, run_corpus, run_german_changesets
    from pipelines.statutes.store import CorpusStore
    from core.layout import Layout

    try:
        _selected(args)
    except KeyError as exc:
        # an id the registry does not hold yet may be an act the ELI listing holds: list it without
        # writing anything, and refuse before anything runs when the listing does not hold it either
        if not _listed_polish(args):
            print(f"lexpipe run: {exc.args[0]}", file=sys.stderr)
            return 2
    _discover_polish(args)  # the ELI listing into the home's catalogue: the registry holds every listed act
    try:
        acts, cases = _selected(args)
    except KeyError as exc:
        print(f"lexpipe run: {exc.args[0]}", file=sys.stderr)
        return 2
    ensure_dagster_home()
    settings = _settings(args)
    console = _console()
    console.print(f"[bold]lexpipe run[/] home={settings.home} offline={settings.offline} "
                  f"sample_dir={settings.sample_dir} acts={', '.join(a.id for a in acts) or 'none'}"
                  f"{''.join(' + ' + c for c in cases)}")
    progress = lambda msg: console.print(f"[cyan]→[/] {msg}")  # noqa: E731
    store = CorpusStore(Layout(settings.home))
    ok = True
    polish_versions: dict[str, list[str]] = {}
    for act in acts:
        if act.source == "eli":
            runs = run_corpus(settings, act_id=act.id, versions=args.version or None, progress=progress,
                              index=not args.no_index)
            ok &= _print_polish_runs(console, store, act, runs)
            polish_versions[act.id] = [r.version for r in runs]
    german = [a.id for a in acts if a.source == "gesetze"]
    if german:
        # --jurisdiction de: the whole gesetze history, every act; --acts de:bgb: those acts' changesets only
        whole = "de" in [j.strip() for raw in (args.jurisdiction or []) for j in raw.split(",")]
        runs = run_german_changesets(settings, acts=None if whole else german, progress=progress,
                                     index=not args.no_index)
        ok &= _print_changeset_runs(console, runs)
    for collection in cases:
        r = run_cases(settings, progress=progress, index=not args.no_index, collection=collection)
        ok &= r.success
        where = settings.home / "caselaw" / collection.split(":")[0]
        console.print(f"{collection}: {'built' if r.success else _failure(r)} in {r.seconds:.1f}s ({where})")
    from assets.benchmarks import BENCHMARKS

    benchmarked = {a: v for a, v in polish_versions.items() if a in BENCHMARKS and store.published_versions(a)}
    if not args.no_benchmarks and benchmarked:
        ok &= _run_benchmarks(settings, args, console, benchmarked)
    return 0 if ok else 1


def _listed_polish(args: argparse.Namespace) -> bool:
    """Whether every ``pl:`` id of ``--acts`` the registry does not hold is an act of the ELI
    listing (listed, not saved: nothing is written under the home)."""
    from lexpipe.runner import discover_polish_acts
    from schemas.acts import registry

    names = [a.strip() for raw in (args.acts or []) for a in raw.split(",") if a.strip()]
    reg = registry()
    unknown = [n for n in names if n not in reg]
    if not unknown or not all(n.startswith("pl:") for n in unknown):
        return False
    home = Path(args.home) if getattr(args, "home", None) else None
    existed = home.exists() if home else True
    try:
        listed = discover_polish_acts(_settings(args), save=False).catalogue.by_id()
    except Exception:  # noqa: BLE001 — no listing: the id stays unknown
        return False
    finally:
        if home is not None and not existed and home.exists() and not any(home.rglob("*.*")):
            import shutil

            shutil.rmtree(home)  # empty folders the resources made: leave no trace of a refused run
    return all(n in listed for n in unknown)


def _discover_polish(args: argparse.Namespace) -> None:
    """Polish acts come from the ELI listing (offline: the held PDFs), not only from acts.toml; a
    listing that cannot be read is reported and the registry's acts run as they are."""
    from lexpipe.runner import discover_polish_acts

    names = [a.strip() for raw in (args.acts or []) for a in raw.split(",") if a.strip()]
    jurisdictions = [j.strip() for raw in (args.jurisdiction or []) for j in raw.split(",") if j.strip()]
    if (names or jurisdictions) and "pl" not in jurisdictions and not any(n.startswith("pl:") for n in names):
        return
    try:
        update = discover_polish_acts(_settings(args))
    except Exception as exc:  # noqa: BLE001 — discovery is an addition, never a reason not to run
        print(f"lexpipe run: the ELI listing could not be read ({type(exc).__name__}: {exc}); "
              "running the acts the registry already holds", file=sys.stderr)
        return
    from schemas.acts import registry

    reg = registry(update.catalogue.path.parent.parent if update.catalogue.path else None)
    new = [a.id for eli in update.added if (a := reg.by_address("eli", eli)) is not None and not a.curated]
    if new:
        print(f"lexpipe run: {len(new)} act(s) discovered in the ELI listing without a curated row: "
              f"{', '.join(new[:10])}", file=sys.stderr)


def _failure(r) -> str:
    return "BLOCKED: " + "; ".join(r.failed_checks)[:200] if r.failed_checks else f"FAILED: {r.error}"


def _print_polish_runs(console, store, act, runs) -> bool:
    """One row per version of a Polish act: what was parsed, chunked, diffed and published."""
    from rich.table import Table

    act_id = act.id
    table = Table(title=f"{act_id} corpus versions")
    for col in ("version", "result", "articles", "superscript", "repealed", "chunks", "diff vs previous", "seconds"):
        table.add_column(col)
    ok = True
    for r in runs:
        d = store.built_dir(act_id, r.version)
        stats = {}
        chunks = diff = "-"
        if d is not None:
            parse_info = d / "parse.json"
            man = store.manifest(d) or (json.loads(parse_info.read_text()) if parse_info.exists() else {})
            stats = man.get("stats", {})
            if (d / "chunks.parquet").exists():
                chunks = str(store.read(act_id, r.version, "chunks").num_rows)
            diffs = sorted(d.glob("diff_from_*.parquet"))
            if diffs:
                import pyarrow.parquet as pq

                changes = pq.read_table(diffs[-1])["change"].to_pylist()
                diff = ", ".join(f"{changes.count(k)} {k}" for k in ("added", "changed", "repealed", "removed", "editorial") if changes.count(k))
                diff = f"{diffs[-1].stem.removeprefix('diff_from_')}: {diff or 'no change'}"
        result = "published" if r.success else _failure(r)
        ok &= r.success
        table.add_row(r.version, result, str(stats.get("articles", "-")), str(stats.get("superscript_articles", "-")),
                      str(stats.get("repealed", "-")), chunks, diff, f"{r.seconds:.1f}")
    console.print(table)
    for r in runs:  # the table cell is cut and wrapped: the whole reason, naming the file, on one line
        if not r.success:
            reason = f"BLOCKED: {'; '.join(r.failed_checks)}" if r.failed_checks else f"FAILED: {r.error}"
            console.print(f"{act_id} {r.version} {reason}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"serving: {act_id} {store.current_version(act_id) or 'nothing'} ({store.layout.current_file(act_id)})")
    return ok


def _print_changeset_runs(console, runs, title: str = "German federal law: gesetze changesets") -> bool:
    """One row per changeset run: its kind and gazette, the acts touched, what happened to them."""
    from rich.table import Table

    table = Table(title=title)
    for col in ("changeset", "kind", "gazette", "acts", "published", "unchanged", "quarantined", "units changed",
                "index rows +/−", "seconds", "result"):
        table.add_column(col)
    ok = True
    for r in runs:
        ok &= r.success
        c = r.counts or {}
        d = r.diff or {}
        changed = ", ".join(f"{d[k]} {k}" for k in ("added", "changed", "repealed", "removed", "editorial") if d.get(k))
        idx = f"+{r.index.get('rows_added', 0)} −{r.index.get('rows_closed', 0)}" if r.index else "-"
        table.add_row(r.key, r.kind, r.gazette or "-", str(r.acts), str(c.get("published", 0)),
                      str(c.get("unchanged", 0)), str(c.get("quarantined", 0)), changed or "-", idx,
                      f"{r.seconds:.1f}", "ok" if r.success else (f"FAILED: {r.error}" if r.error else "BLOCKED"))
    console.print(table)
    for r in runs:
        if r.reasons:
            console.print(f"{r.key} quarantined by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(r.reasons.items())),
                          markup=False, highlight=False, soft_wrap=True)
        if not r.success:
            console.print(f"{r.key}: " + ("; ".join(r.failed_checks) or r.error or "failed"), markup=False,
                          highlight=False, soft_wrap=True)
    return ok


def cmd_load(args: argparse.Namespace) -> int:
    """The initial load of a jurisdiction: the source's first changeset with acts (the gesetze import:
    6,183 acts), parsed, checked, published and indexed (lexically; dense vectors come from
    ``lexpipe embed``), then the quarantine by reason."""
    from lexpipe.runner import ensure_dagster_home, run_german_changesets

    if args.jurisdiction != "de":
        print("lexpipe load: only 'de' (the gesetze repository) so far; Polish acts load with `lexpipe run`",
              file=sys.stderr)
        return 2
    ensure_dagster_home()
    settings = _settings(args)
    console = _console()
    console.print(f"[bold]lexpipe load de[/] home={settings.home}: the gesetze repository up to "
                  f"{args.until or 'its initial import'}")
    runs = run_german_changesets(settings, until=args.until or "import", index=not args.no_index,
                                 progress=lambda msg: console.print(f"[cyan]→[/] {msg}"))
    ok = _print_changeset_runs(console, runs)
    _print_quarantine(console, settings, [r.key for r in runs])
    return 0 if ok else 1


def _print_quarantine(console, settings, keys: list[str]) -> None:
    import json
    from collections import Counter

    from core.layout import Layout

    root = Layout(settings.home).changesets("de")
    reasons: Counter = Counter()
    examples: dict[str, list[str]] = {}
    for key in keys:
        path = root / f"{key}.json"
        if not path.exists():
            continue
        for o in json.loads(path.read_text()).get("outcomes", []):
            if o["outcome"] == "quarantined":
                reasons[o["reason"]] += 1
                examples.setdefault(o["reason"], []).append(o["act_id"])
    for reason, n in reasons.most_common():
        console.print(f"quarantined {reason}: {n} (e.g. {', '.join(examples[reason][:5])})", markup=False,
                      highlight=False)


def cmd_embed(args: argparse.Namespace) -> int:
    """One budgeted step of the dense-vector backfill of a language's statute index (the same as the
    ``de_embedding_backfill`` job): priority order, resumable; ``--shard i/n`` only fills the shared
    embedding cache (a run without a shard commits what the workers computed)."""
    from pipelines.retrieval.embedding_backfill import backfill
    from pipelines.retrieval.encoders import get_encoder
    from core.layout import Layout

    settings = _settings(args)
    console = _console()
    shard = None
    if args.shard:
        try:
            i, n = (int(x) for x in args.shard.split("/"))
            if not 0 <= i < n:
                raise ValueError
            shard = (i, n)
        except ValueError:
            print(f"lexpipe embed: --shard must be i/n with 0 <= i < n, got {args.shard!r}", file=sys.stderr)
            return 2
    report = backfill(Layout(settings.home), args.language, get_encoder(settings.encoder),
                      budget_s=args.budget_min * 60 if args.budget_min else None, max_chunks=args.max_chunks or None,
                      shard=shard, sample_dir=settings.sample_dir,
                      progress=lambda msg: console.print(f"[cyan]→[/] {msg}"))
    md = report.metadata()
    for k in ("serving_rows", "vectors_before", "vectors_after", "coverage", "embedded", "from_cache", "committed",
              "chunks_per_s", "acts_complete", "acts", "remaining", "stopped", "next_acts",
              "projected_hours_1_workers", "projected_hours_4_workers", "projected_hours_16_workers"):
        if k in md:
            console.print(f"{k}: {md[k]}", markup=False, highlight=False)
    return 0


def cmd_representations(args: argparse.Namespace) -> int:
    """Build the search's last-stage stores from the published corpus and the training material
    (the ``representations_refresh`` job): what a search needs for its confidence, its out-of-corpus
    flag (Polish) and its nearest-question leg (German)."""
    from lexpipe.runner import ensure_dagster_home, run_representations

    ensure_dagster_home()
    settings = _settings(args)
    console = _console()
    langs = ("pl", "de") if args.language == "all" else (args.language,)
    console.print(f"[bold]lexpipe representations[/] home={settings.home}: {', '.join(langs)}")
    run, stores = run_representations(settings, languages=langs)
    for lang in langs:
        md = stores.get(lang)
        if md is None:
            console.print(f"{lang}: not built", markup=False, highlight=False)
        elif not md.get("rows"):
            console.print(f"{lang}: no store: no published act of the language it is about", markup=False,
                          highlight=False)
        else:
            console.print(f"{lang}: {md['rows']} rows {md.get('per_kind', '')}; embedded {md.get('embedded', 0)}, "
                          f"cached {md.get('cached', 0)}; {md.get('seconds', 0)} s → {md.get('path', '')}",
                          markup=False, highlight=False)
    if not run.success:
        console.print(f"FAILED: {run.error or '; '.join(run.failed_checks)}", markup=False, highlight=False)
    return 0 if run.success else 1


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay the gesetze history commit by commit through the source_watch sensor: each tick moves
    the replay cursor once the previous commit is applied, the sensor requests the run of the new
    commit, the run refreshes exactly the acts it changed."""
    from lexpipe.runner import ensure_dagster_home, run_replay

    ensure_dagster_home()
    os.environ["LEXPIPE_GESETZE_REPLAY"] = "true"
    settings = _settings(args)
    console = _console()
    console.print(f"[bold]lexpipe replay[/] home={settings.home}: {args.steps or 'all remaining'} commit(s)")
    runs = run_replay(settings, steps=args.steps, report=Path(args.report) if args.report else None,
                      index=not args.no_index, progress=lambda msg: console.print(f"[cyan]→[/] {msg}"))
    return 0 if _print_changeset_runs(console, runs, "gesetze replay") else 1


_CITED_COLS = ("cited units", "hallucinated", "not in force", "unverified")


def _cited(scores: dict) -> tuple[str, ...]:
    """The answer job's citation check of one question group (``-`` when the run has none): cited
    units, the hallucination and not-in-force rates over the verified ones, and the unverified count."""
    if "cited_units" not in scores:
        return ("-",) * len(_CITED_COLS)
    return (str(scores["cited_units"]), f"{scores['hallucination_rate']:.3f}", f"{scores['not_in_force_rate']:.3f}",
            str(scores["unverified_units"]))


def _run_benchmarks(settings, args, console, versions: dict[str, list[str]]) -> bool:
    """Per act: benchmark staleness per version, the serving version's retrieval evaluation and
    answers (the question table once, before the first act)."""
    import json

    import pyarrow.parquet as pq
    from rich.table import Table

    from assets.benchmarks import eval_root, questions_path, staleness_path
    from core.layout import Layout
    from lexpipe.runner import run_benchmarks
    from pipelines.benchmarks.benchmark_table import table_stats
    from pipelines.benchmarks.retrieval_eval import METRICS, EvalHistory

    if args.eval_max_questions is not None:
        settings = settings.model_copy(update={"benchmark_max_questions": args.eval_max_questions})
    layout = Layout(settings.home)
    runs = []
    for i, (act_id, act_versions) in enumerate(versions.items()):
        runs += run_benchmarks(settings, act_id=act_id, versions=act_versions, evaluate=not args.no_eval,
                               questions=i == 0, progress=lambda msg: console.print(f"[cyan]→[/] {msg}"))
        if any("questions" in r.steps and not r.success for r in runs):
            break  # the question table failed its check: no act's benchmark can be trusted
    if questions_path(layout).exists():
        per_act = table_stats(pq.read_table(questions_path(layout)))["refs_in_corpus_per_act"]
        console.print("benchmark gold references in the corpus: " + ", ".join(
            f"{a} {n}" for a, n in sorted(per_act.items())) + f" (total {sum(per_act.values())})")
    table = Table(title="benchmark gold references per act and corpus version")
    for col in ("act", "version", "result", "questions flagged stale", "by reason", "seconds"):
        table.add_column(col)
    ok = True
    answer_runs = [r for r in runs if r.steps == ["answers"]]
    runs = [r for r in runs if r.steps != ["answers"]]
    for r in runs:
        path = staleness_path(layout, r.act_id, r.version)
        stale = reasons = "-"
        if path.exists():
            flags = pq.read_table(path).to_pylist()
            stale = str(len({f["question_id"] for f in flags if f["stale"]}))
            counts = {k: sum(f["reason"] == k for f in flags) for k in dict.fromkeys(f["reason"] for f in flags)}
            reasons = ", ".join(f"{v} {k}" for k, v in counts.items()) or "none"
        result = "ok" if r.success else (f"FAILED: {r.error}" if r.error else "BLOCKED: " + "; ".join(r.failed_checks))
        ok &= r.success
        table.add_row(r.act_id, r.version, result[:200], stale, reasons, f"{r.seconds:.1f}")
    console.print(table)
    history = EvalHistory(eval_root(layout))
    summary = Table(title="retrieval per act (exam questions with in-corpus gold, question only, hybrid)")
    for col in ("act", "version", "scope", "n", "R@1", "R@5", "R@10", "MRR"):
        summary.add_column(col)
    for r in [r for r in runs if "retrieval_eval" in r.steps and r.success]:
        rows = history.runs(r.run_id).to_pylist()
        t = Table(title=f"retrieval evaluation, {r.act_id} {r.version} (encoder {rows[0]['encoder'] if rows else '?'})")
        for col in ("scope", "benchmark", "retriever", "query", "n", "skipped stale", "R@1", "R@5", "R@10", "R@50",
                    "MRR", "NDCG@5"):
            t.add_column(col)
        for row in rows:
            t.add_row(row["scope"], row["benchmark"], row["retriever"], row["query_style"], str(row["n"]),
                      str(row["skipped_stale"]), *("-" if row[m] is None else f"{row[m]:.3f}" for m in METRICS))
            if row["retriever"] == "hybrid" and row["query_style"] == "question" and row["benchmark"] == "pl_exams":
                summary.add_row(r.act_id, r.version, row["scope"], str(row["n"]),
                                *("-" if row[m] is None else f"{row[m]:.3f}"
                                  for m in ("recall_at_1", "recall_at_5", "recall_at_10", "mrr")))
        console.print(t)
        regress = [c for c in r.failed_checks if c.startswith("retrieval_no_regression")]
        console.print(("[yellow]regression:[/] " + "; ".join(regress)) if regress else
                      "no metric fell by more than the regression margin against the previous run")
    console.print(summary)
    console.print(f"history: {eval_root(layout) / 'history'}  plots: {eval_root(layout)}/history*.png")
    answers = Table(title="answers per act (offline answerer unless an LLM is configured)")
    for col in ("act", "version", "questions", "n", "answer", "context", "joint", "failed", *_CITED_COLS):
        answers.add_column(col)
    for r in answer_runs:
        ok &= r.success
        if not r.success:
            console.print(f"[red]answers {r.act_id} {r.version} FAILED:[/] {r.error}")
            continue
        (run_file,) = (layout.benchmarks / "answers").glob(f"*_{r.run_id[:8]}.json")  # this run's, not the newest
        info = json.loads(run_file.read_text())
        for group, v in info["scores"].items():
            answers.add_row(r.act_id, r.version, group, str(v["n"]), f"{v['answer']:.3f}", f"{v['context']:.3f}",
                            f"{v['joint']:.3f}", str(v["failed"]), *_cited(v))
    if answer_runs:
        console.print(answers)
    return ok


def cmd_ui(args: argparse.Namespace) -> int:
    from lexpipe.runner import ensure_dagster_home

    ensure_dagster_home()
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "dagster", "dev", "-m", "assets.definitions", "-h", args.host, "-p", str(args.port)]
    print("starting:", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=root, env={**os.environ})


def _settings(args: argparse.Namespace):
    from core.settings import get_settings

    if getattr(args, "home", None):
        # every layer reads the home's act catalogue through the registry: they must see this home
        os.environ["LEXPIPE_HOME"] = str(Path(args.home).resolve())
    settings = get_settings()
    if getattr(args, "home", None):
        settings = settings.model_copy(update={"home": Path(args.home)})
    return settings


def _service(settings):
    from pipelines.retrieval.service import SearchService

    return SearchService.from_settings(settings)


def cmd_search(args: argparse.Namespace) -> int:
    from pipelines.retrieval.case_index import CASE_COLLECTIONS
    from pipelines.retrieval.service import InvalidRequest

    unknown = _unknown_act(args.act or [], also=CASE_COLLECTIONS)
    if unknown:  # before opening any index
        print(f"lexpipe search: {unknown}", file=sys.stderr)
        return 2
    try:
        page = _service(_settings(args)).search(
            args.query, k=args.k, retriever=args.retriever, acts=args.act or None, as_of=args.as_of,
            statuses=args.status or None, version=args.version, target=args.target)
    except InvalidRequest as exc:
        print(f"lexpipe search: {exc}", file=sys.stderr)
        return 2
    if args.json:
        mix = None if page.classification is None else {"label": page.classification.label,
                                                         "method": page.classification.method, **page.quotas}
        print(json.dumps({"query": args.query, "retriever": page.retriever, "versions": page.versions, "mix": mix,
                          "confidence": page.confidence, "flags": list(page.flags), "reasons": list(page.reasons),
                          "outside_acts": list(page.outside_acts),
                          "hits": [{"rank": h.rank, "article_id": h.article_id, "chunk_id": h.chunk_id,
                                    "version": h.version, "score": h.score, "heading_path": h.heading_path,
                                    "status": h.status, "snippet": h.text[:400], "sources": h.sources}
                                   for h in page.hits]}, ensure_ascii=False, indent=2))
        return 0
    console = _console()
    if "garbage_query" in page.flags:
        console.print(f"[bold yellow]no search:[/] {'; '.join(page.reasons)}")
        return 0
    console.print(f"[bold]{page.retriever}[/] over {', '.join(f'{a} {v}' for a, v in page.versions.items())}"
                  + (f"; confidence {page.confidence:.0%} that the first hit answers" if page.confidence is not None else ""))
    for reason in page.reasons:
        console.print(f"[bold yellow]note:[/] {reason}")
    if page.classification is not None:
        c = page.classification
        console.print(f"query classified [bold]{c.label}[/] ({c.method}; {', '.join(c.evidence) or 'no cue'}): "
                      f"{page.quotas['statutes']} statute / {page.quotas['cases']} case hits")
    for h in page.hits:
        snippet = " ".join(h.text.split())[:220]
        console.print(f"[bold cyan]{h.rank:>2}. {h.article_id}[/]  score={h.score:.4f}  [dim]{h.heading_path}[/]")
        console.print(f"    {snippet}")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from core.layout import Layout
    from pipelines.statutes.store import CorpusStore
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, open_backend

    unknown = _unknown_act([args.act])
    if unknown:
        print(f"lexpipe index: {unknown}", file=sys.stderr)
        return 2
    settings = _settings(args)
    layout = Layout(settings.home)
    act_id = args.act
    published = CorpusStore(layout).published_versions(act_id)
    versions = args.version or published
    unknown = [v for v in versions if v not in published]
    if unknown or not versions:
        print(f"lexpipe index: no published {act_id} version {', '.join(unknown) or '(none)'}; "
              f"published: {', '.join(published) or 'none — run `lexpipe run` first'}", file=sys.stderr)
        return 2
    encoder = get_encoder(settings.encoder)
    backend = open_backend(settings, encoder=encoder, act_id=act_id)  # only now: a refused request builds nothing
    for v in versions:
        report = index_step(layout, act_id=act_id, version=v, backend=backend, encoder=encoder,
                            progress=lambda d, n: print(f"\r  embedding {d}/{n}", end="", flush=True))
        print(f"\n{act_id} {v}: {report.documents} documents, {report.embedded} embedded "
              f"({report.chunks_per_s:.1f} chunks/s), {report.cached} from cache, build {report.build_seconds:.1f}s "
              f"→ {report.backend} {report.table}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from lexpipe.api import create_app
    from pipelines.reads import ReadService

    settings = _settings(args)
    uvicorn.run(create_app(_service(settings), reads=ReadService.at(settings.home)), host=args.host, port=args.port)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP server (docs/mcp.md): the shared tools and each act's table of contents, read-only."""
    from lexpipe.mcp import run
    from pipelines.tools import Services

    run(Services(settings=_settings(args)), args.transport, host=args.host, port=args.port)
    return 0


def cmd_deploy_check(args: argparse.Namespace) -> int:
    """Validate a production Dagster instance configuration (lexpipe/deploy/check.py): exit 2 with
    one line per problem, each naming the field."""
    from lexpipe.deploy.check import check_config

    problems = check_config(Path(args.config))
    for problem in problems:
        print(f"lexpipe deploy check: {args.config}: {problem}", file=sys.stderr)
    if problems:
        return 2
    print(f"lexpipe deploy check: {args.config}: ok (schema, env vars, PostgreSQL reachable, pools, run tags)")
    return 0


def cmd_deploy_init(args: argparse.Namespace) -> int:
    """Create the production instance's tables and set the asset pools' limits (lexpipe/deploy/instance.py)."""
    from lexpipe.deploy.instance import init_instance

    limits = init_instance(Path(args.config))
    print(f"lexpipe deploy init: {args.config}: pool limits " + ", ".join(f"{k}={v}" for k, v in sorted(limits.items())))
    return 0


def cmd_api_key(args: argparse.Namespace) -> int:
    """A fresh API key and its sha256 digest: the key goes to the client, the digest into
    LEXPIPE_API_KEY_HASHES (or LEXPIPE_API_KEY_HASHES_FILE); the server never stores the key."""
    from lexpipe.api.security import new_key

    key, digest = new_key()
    print(f"key:    {key}")
    print(f"sha256: {digest}")
    print("Give the key to the client (Authorization: Bearer <key>); add the sha256 to LEXPIPE_API_KEY_HASHES.",
          file=sys.stderr)
    return 0


def cmd_notify(args: argparse.Namespace) -> int:
    """The webhook delivery worker (docs/subscriptions.md#the-delivery-worker): events of publications
    the outbox lacks, then whatever is due — retries, and events a killed process left behind once
    their lease expired; every LEXPIPE_WEBHOOK_WORKER_INTERVAL_S until SIGTERM/SIGINT, or once."""
    import logging
    import signal
    import threading

    from core.layout import Layout
    from pipelines.subscriptions.worker import Worker

    settings = _settings(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    runner = None
    if not args.no_search:  # saved queries search the configured backend, opened when first needed
        from pipelines.retrieval.index_build import open_backend
        from pipelines.subscriptions.matching import backend_runner

        runner = backend_runner(lambda act: open_backend(settings, act_id=act))
    worker = Worker(Layout(settings.home.resolve()), settings=settings, runner=runner)
    try:
        if args.once:
            report = worker.tick(budget_s=settings.webhook_run_budget_s)
            print(f"lexpipe notify: {report.line()}", flush=True)
            return 0
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        interval = args.interval if args.interval is not None else settings.webhook_worker_interval_s
        print(f"lexpipe notify: delivering the outbox of {settings.home} every {interval:g} s "
              f"(SIGTERM or Ctrl-C stops)", flush=True)
        worker.run(stop, interval_s=interval, on_tick=lambda r: print(f"lexpipe notify: {r.line()}", flush=True))
        return 0
    finally:
        worker.close()


def cmd_prefect(args: argparse.Namespace) -> int:
    """The same steps as Prefect flows, against Prefect's local ephemeral server (offline, quiet)."""
    if args.flow == "de-changesets":  # German federal law: the gesetze changesets, no registry act
        return _prefect_de_changesets(args)
    from rich.table import Table

    if args.flow != "pl-cases" and not args.act:  # one act per flow, named: none is assumed
        print(f"lexpipe prefect {args.flow}: --act is required (a Polish registry act, e.g. --act pl:kc)",
              file=sys.stderr)
        return 2
    unknown = _unknown_act([args.act] if args.act else [], source="eli" if args.flow == "refresh" else None)
    if unknown:  # before Prefect's server starts: nothing runs
        print(f"lexpipe prefect {args.flow}: {unknown}", file=sys.stderr)
        return 2
    # importing the module first sets Prefect's offline/quiet environment, then imports prefect
    from lexpipe import prefect_flows as pf

    console = _console()
    home = str(Path(args.home).resolve()) if args.home else None
    if args.flow == "pl-cases":
        return _prefect_pl_cases(console, home, args)
    if args.flow == "refresh":
        state = pf.corpus_refresh(versions=args.versions or None, home=home, index_versions=not args.no_index,
                                  act_id=args.act, return_state=True)
        outcome = state.result(raise_on_failure=False)
        report = outcome.report if isinstance(outcome, pf.RefreshFailed) else outcome
        if not isinstance(report, pf.RefreshReport):
            console.print(f"[red]prefect refresh failed:[/] {outcome}")
            return 1
        table = Table(title=f"{args.act} corpus refresh (Prefect)")
        for col in ("version", "result", "sha256", "articles", "parse", "chunks", "diff vs previous", "indexed"):
            table.add_column(col)
        for v in report.versions:
            diff = "-" if v.diff is None else "first version" if v.diff.previous_version is None else (
                f"{v.diff.previous_version}: " + (", ".join(f"{n} {k}" for k, n in v.diff.counts.items() if n)
                                                  or "no change"))
            parse = "-" if v.articles is None else ("cached" if v.parse_cached else
                                                    "reused build" if v.parse_reused else "parsed")
            table.add_row(v.version, v.status if not v.error else f"{v.status}: {v.error}"[:160],
                          (v.sha256 or "-")[:12], str(v.articles or "-"), parse, str(v.chunks or "-"), diff,
                          str(v.indexed if v.indexed is not None else "-"))
        console.print(table)
        console.print(f"serving: {args.act} {report.serving or 'nothing'}; published: {', '.join(report.published) or 'none'}")
        if isinstance(outcome, pf.RefreshFailed):
            console.print(f"[red]FAILED:[/] {outcome}")
        return 0 if state.is_completed() else 1
    version = args.versions[-1] if args.versions else None
    if args.flow == "benchmark":
        state = pf.benchmark(version=version, home=home, max_questions=args.eval_max_questions,
                             evaluate=not args.no_eval, act_id=args.act, return_state=True)
        report = state.result(raise_on_failure=False)
        if not state.is_completed():
            console.print(f"[red]prefect benchmark failed:[/] {report}")
            return 1
        q = report.questions
        console.print(f"questions: {q.rows} ({q.refs_in_corpus} gold refs in the corpus)"
                      f"{' — from the cache' if report.questions_cached else ''}")
        s = report.staleness
        console.print(f"staleness {args.act} {s.version} vs {s.previous_version or 'none'}: {s.stale_questions} questions "
                      f"stale, {s.flagged_refs} refs flagged ({', '.join(f'{n} {k}' for k, n in s.by_reason.items()) or 'none'})")
        if report.evaluation is not None:
            from pipelines.benchmarks.retrieval_eval import METRICS

            e = report.evaluation
            t = Table(title=f"retrieval evaluation, {args.act} {e.version} (encoder {e.encoder}, {e.question_set})")
            for col in ("scope", "benchmark", "retriever", "query", "n", "skipped stale", "R@1", "R@5", "R@10", "R@50",
                        "MRR", "NDCG@5"):
                t.add_column(col)
            for row in e.rows:
                t.add_row(row["scope"], row["benchmark"], row["retriever"], row["query_style"], str(row["n"]),
                          str(row["skipped_stale"]), *("-" if row[m] is None else f"{row[m]:.3f}" for m in METRICS))
            console.print(t)
            console.print(("" if report.regression_passed else "[yellow]regression:[/] ") + (report.regression or ""))
            console.print(f"history: {e.path}  plot: {e.plot_path}")
        return 0
    state = pf.answers(version=version, home=home, max_questions=args.max_questions or 0, act_id=args.act,
                       return_state=True)
    run = state.result(raise_on_failure=False)
    if not state.is_completed():
        console.print(f"[red]prefect answers failed:[/] {run}")
        return 1
    t = Table(title=f"answers, {args.act} {run.version} ({run.run_id}, {run.answerer})")
    for col in ("questions", "n", "answer", "context", "joint", "failed", *_CITED_COLS):
        t.add_column(col)
    for group, v in run.scores.items():
        t.add_row(group, str(v["n"]), f"{v['answer']:.3f}", f"{v['context']:.3f}", f"{v['joint']:.3f}", str(v["failed"]),
                  *_cited(v))
    console.print(t)
    console.print(f"{run.stale_skipped} stale questions skipped; {run.path}")
    return 0


def _prefect_pl_cases(console, home: str | None, args: argparse.Namespace) -> int:
    from lexpipe.prefect_pl_cases import pl_cases

    state = pl_cases(home=home, max_pages=args.max_pages, index=not args.no_index, return_state=True)
    report = state.result(raise_on_failure=False)
    if not state.is_completed():
        console.print(f"[red]prefect pl-cases failed:[/] {report}")
        return 1
    console.print(f"SAOS: {report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
                  f"{report.quarantined} quarantined; {report.stored} judgments → {report.chunks} chunks"
                  f"{'' if report.indexed is None else f', {report.indexed} indexed'}")
    console.print(f"citation links: {report.links} cited units "
                  f"({', '.join(f'{n} {k}' for k, n in report.resolution.items())}); "
                  f"{report.cited_articles} articles cited")
    return 0


def _prefect_de_changesets(args: argparse.Namespace) -> int:
    from rich.table import Table

    from lexpipe.prefect_de_statutes import ChangesetsFailed, de_changesets

    console = _console()
    state = de_changesets(until=args.until, acts=args.acts or None, home=str(Path(args.home).resolve()) if args.home
                          else None, index=not args.no_index, return_state=True)
    outcome = state.result(raise_on_failure=False)
    report = outcome.report if isinstance(outcome, ChangesetsFailed) else outcome
    if isinstance(outcome, BaseException) and report is outcome:  # refused before any changeset ran
        console.print(f"[red]prefect de-changesets failed:[/] {outcome}")
        return 1
    table = Table(title="German federal law: gesetze changesets (Prefect)")
    for col in ("changeset", "kind", "gazette", "acts", "published", "unchanged", "quarantined", "check",
                "index rows +/−", "result"):
        table.add_column(col)
    for c in report.changesets:
        n = c.applied.counts if c.applied else {}
        check = "-" if c.check is None else "passed" if c.check.passed else f"warn: {c.check.quarantined} quarantined"
        idx = f"+{c.index['rows_added']} −{c.index['rows_closed']}" if c.index else "-"
        table.add_row(c.key, c.kind, c.gazette or "-", str(c.acts), str(n.get("published", "-")),
                      str(n.get("unchanged", "-")), str(n.get("quarantined", "-")), check, idx,
                      c.status if not c.error else f"{c.status}: {c.error}"[:160])
    console.print(table)
    if not report.changesets:
        console.print("nothing to apply: every changeset the source offers" + (f" up to {args.until}" if args.until
                                                                               else "") + " is applied")
    if isinstance(outcome, ChangesetsFailed):
        console.print(f"[red]FAILED:[/] {outcome}", markup=True, highlight=False, soft_wrap=True)
    return 0 if state.is_completed() else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lexpipe", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="materialize every asset for every known version of the chosen acts "
                                   "(default: the Polish acts of the registry; embedded defaults)")
    p.add_argument("--acts", action="append", metavar="ID[,ID]",
                   help="registry act ids, e.g. pl:kc,de:bgb; pl:cases / de:cases = the Polish (SAOS) / German "
                        "(Open Legal Data) case law (repeatable)")
    p.add_argument("--jurisdiction", action="append", metavar="pl|de",
                   help="every registry act of this jurisdiction (de also builds the case law; repeatable)")
    p.add_argument("--version", action="append", help="Polish acts: only this text-state version (repeatable)")
    p.add_argument("--no-index", action="store_true", help="publish the corpus without building search indexes")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.add_argument("--no-benchmarks", action="store_true", help="skip benchmark staleness and retrieval evaluation")
    p.add_argument("--no-eval", action="store_true", help="benchmark staleness only, no retrieval evaluation")
    p.add_argument("--eval-max-questions", type=int, default=None,
                   help="evaluate a stable sample of this many questions (default: all with in-corpus gold)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("load", help="the initial load of a jurisdiction's whole law from its source (German: "
                                    "every act of the gesetze repository's initial import)")
    p.add_argument("jurisdiction", choices=["de"], help="de: the gesetze repository (LEXPIPE_GESETZE_URL)")
    p.add_argument("--until", help="load up to this changeset key instead of the import (e.g. 0163-100ac536)")
    p.add_argument("--no-index", action="store_true", help="publish without writing the search index")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_load)
    p = sub.add_parser("embed", help="one budgeted step of the dense-vector backfill of a language's statute index "
                                     "(priority order, resumable)")
    p.add_argument("--language", default="de", choices=["de", "pl"], help="the language index (default de)")
    p.add_argument("--budget-min", type=float, default=50.0, help="stop after this many minutes (0: no limit)")
    p.add_argument("--max-chunks", type=int, default=0, help="stop after embedding this many chunks (0: no limit)")
    p.add_argument("--shard", help="i/n: embed only every n-th act from the i-th into the cache, commit nothing")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_embed)
    p = sub.add_parser("representations", help="build the search's last-stage stores (Polish: exam/LQAD questions "
                                               "and SAOS citation sentences, embedded; German: GerLayQA questions) "
                                               "from the published corpus; not part of `lexpipe run`")
    p.add_argument("--language", default="all", choices=["all", "pl", "de"])
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_representations)
    p = sub.add_parser("replay", help="replay the gesetze history commit by commit through the source_watch sensor "
                                      "(LEXPIPE_GESETZE_REPLAY): one run per commit, the acts it changed")
    p.add_argument("--steps", type=int, default=0, help="commits to replay (0: to the end)")
    p.add_argument("--report", help="write the per-commit report (JSON lines) to this file")
    p.add_argument("--no-index", action="store_true", help="publish without writing the search index")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("ui", help="the Dagster UI on 127.0.0.1")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3000)
    p.set_defaults(func=cmd_ui)
    p = sub.add_parser("search", help="ranked articles for a query")
    p.add_argument("query")
    p.add_argument("--retriever", default="hybrid", help="hybrid | bm25 | dense | gaius")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--act", action="append", help="act id, e.g. pl:kc (repeatable)")
    p.add_argument("--status", action="append", help="in_force | repealed | pending (repeatable)")
    p.add_argument("--as-of", help="search the newest version on or before this date (YYYY-MM-DD)")
    p.add_argument("--version", help="search exactly this corpus version")
    p.add_argument("--target", choices=("statutes", "cases", "both"), default="statutes",
                   help="statutes (default), court decisions of the query's language (Polish: pl:cases, SAOS "
                        "judgments; German: de:cases, Open Legal Data; --act pl:…/de:… picks the language), or "
                        "both: the 70/30 mix of statutes and decisions of that language after classifying the "
                        "query as law or case")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("index", help="(re)build the search index (embedded, or Elasticsearch when "
                                     "LEXPIPE_ELASTICSEARCH_URL is set) for published versions")
    p.add_argument("--act", required=True, help="the registry act whose published versions are indexed, e.g. "
                                                 "pl:kc (required: no act is assumed)")
    p.add_argument("--version", action="append")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("serve", help="the HTTP API on 127.0.0.1: search, point-in-time reads, exports (docs/api.md)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("mcp", help="the MCP server for agents: search, point-in-time reads, diffs, citations "
                                   "(docs/mcp.md)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default: an MCP client starts the server) or http (streamable HTTP at /mcp)")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="http: the port")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_mcp)
    p = sub.add_parser("deploy", help="the production profile (docs/deployment.md)")
    deploy = p.add_subparsers(dest="deploy_command", required=True)
    p = deploy.add_parser("check", help="validate a Dagster instance configuration before use (exit 2 naming "
                                        "each problem: bad YAML, schema, missing env vars, PostgreSQL, pools)")
    p.add_argument("--config", default="deploy/dagster.yaml", help="the dagster.yaml to check")
    p.set_defaults(func=cmd_deploy_check)
    p = deploy.add_parser("init", help="create the instance's tables in PostgreSQL and set the limits of the "
                                       "asset pools (index, llm) before the first run")
    p.add_argument("--config", default="deploy/dagster.yaml", help="the dagster.yaml of the instance")
    p.set_defaults(func=cmd_deploy_init)
    p = sub.add_parser("api-key", help="print a new API key for the HTTP API's writes and its sha256 digest "
                                       "(for LEXPIPE_API_KEY_HASHES)")
    p.set_defaults(func=cmd_api_key)
    p = sub.add_parser("notify", help="the webhook delivery worker: events of publications not yet in the outbox, "
                                      "retries, events a killed process left behind (docs/subscriptions.md)")
    p.add_argument("--once", action="store_true", help="one catch-up and one delivery run, then exit")
    p.add_argument("--interval", type=float, default=None,
                   help="seconds between two ticks (default LEXPIPE_WEBHOOK_WORKER_INTERVAL_S)")
    p.add_argument("--no-search", action="store_true", help="do not open a search backend: saved-query events "
                                                            "wait for a run that has one")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.set_defaults(func=cmd_notify)
    p = sub.add_parser("prefect", help="the corpus refresh, benchmark, answer or Polish case-law job as a "
                                       "Prefect flow (local ephemeral server, offline)")
    p.add_argument("flow", choices=["refresh", "benchmark", "answers", "pl-cases", "de-changesets"])
    p.add_argument("--versions", nargs="+", help="refresh: these text-state versions (default: every version "
                                                 "the source offers); benchmark/answers: this version "
                                                 "(default: the serving one)")
    p.add_argument("--home", help="override LEXPIPE_HOME")
    p.add_argument("--act", help="refresh/benchmark/answers: the Polish registry act refreshed, benchmarked or "
                                 "answered, e.g. pl:kc (required for these flows: no act is assumed)")
    p.add_argument("--no-index", action="store_true", help="refresh: publish without indexing")
    p.add_argument("--no-eval", action="store_true", help="benchmark: staleness only, no retrieval evaluation")
    p.add_argument("--eval-max-questions", type=int, default=None,
                   help="benchmark: evaluate a stable sample of this many questions")
    p.add_argument("--max-questions", type=int, default=0, help="answers: a stable sample of this many questions")
    p.add_argument("--max-pages", type=int, default=None, help="pl-cases: stop the SAOS pass after this many "
                                                               "dump pages (the next run resumes)")
    p.add_argument("--until", help="de-changesets: stop after this changeset key (e.g. 0163-100ac536), or 'import'")
    p.add_argument("--acts", nargs="+", metavar="ID", help="de-changesets: only the changesets touching these acts "
                                                           "(e.g. de:bgb), built for them only")
    p.set_defaults(func=cmd_prefect)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
