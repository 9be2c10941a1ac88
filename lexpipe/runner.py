"""Run the jobs in-process: every known version of the chosen registry acts, oldest first."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from core.settings import Settings


def ensure_dagster_home(project_root: Path | None = None) -> Path:
    """A project-local DAGSTER_HOME with our dagster.yaml (telemetry off, SQLite storage)."""
    home = Path(os.environ.get("DAGSTER_HOME") or (Path.cwd() / ".dagster_home")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    src = (project_root or Path(__file__).resolve().parents[1]) / "dagster.yaml"
    dst = home / "dagster.yaml"
    if src.exists() and (not dst.exists() or (_managed(dst) and dst.read_bytes() != src.read_bytes())):
        # the project's file changed (e.g. new pools): an old copy must not keep the old instance
        # config; a file an operator wrote without the marker line is theirs and left alone
        shutil.copy(src, dst)
    return home


def _managed(path: Path) -> bool:
    with path.open("rb") as f:
        return f.readline().startswith(b"# lexpipe-managed")


@dataclass
class PartitionRun:
    version: str
    success: bool
    seconds: float
    failed_checks: list[str]
    skipped: list[str]
    error: str | None = None


def discover_polish_acts(settings: Settings, *, resources: dict | None = None, save: bool = True):
    """The ELI listing (offline: the held PDFs) into the home's ``catalogue/eli.json``, so the
    registry holds every listed act before acts are chosen (``connectors.eli_listing``);
    ``save=False`` only lists (nothing is written under the home)."""
    from assets import pl_statutes
    from assets.resources import default_resources

    resources = resources or default_resources(settings)
    layout = resources["storage"].layout
    return pl_statutes.discover(layout, resources["eli"].source(layout.raw), save=save)


def run_corpus(settings: Settings, *, act_id: str, versions: list[str] | None = None,
               instance: dg.DagsterInstance | None = None, resources: dict | None = None, progress=None,
               log_level: str = "INFO", index: bool = True) -> list[PartitionRun]:
    """Every version the ELI source offers of one Polish act of the home's registry (a curated row
    or an act the ELI listing discovered), or ``versions``, oldest first: each its ``pl_changesets``
    partition (``<version>_<slug>``) through ``pl_statutes_refresh`` (without ``index``: all but
    the search index). A version is a success when its changeset's record says it is published (or
    unchanged); a quarantined one reports the record's reason."""
    from assets import pl_statutes
    from assets.definitions import build_definitions
    from assets.resources import default_resources
    from connectors.eli import eli_for_act

    resources = resources or default_resources(settings)
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    layout = resources["storage"].layout
    source = resources["eli"].source(layout.raw)
    wanted = versions or source.available_versions(eli_for_act(act_id, layout.home))
    refs = pl_statutes.changeset_keys(layout, act_id, wanted)
    instance.add_dynamic_partitions(pl_statutes.changesets.name, [r.key for r in refs])
    job = defs.resolve_job_def(pl_statutes.refresh_job.name)
    selection = None if index else [a.key for a in pl_statutes.CORPUS_ASSETS]
    runs = []
    for ref in refs:
        if progress:
            progress(f"{act_id} {ref.version} ({ref.key}): raw → articles → checks → chunks → diff → publish"
                     + (" → index" if index else ""))
        result, failed_checks, skipped, err, seconds = _execute(job, log_level, partition_key=ref.key,
                                                                instance=instance, asset_selection=selection)
        outcome = _polish_outcome(layout, ref)
        ok = result.success and not failed_checks and outcome in ("published", "unchanged")
        if not ok and err is None and not failed_checks and outcome is not None:
            err = outcome
        runs.append(PartitionRun(ref.version, ok, seconds, failed_checks, skipped, err))
    return runs


def _polish_outcome(layout, ref) -> str | None:
    """What the changeset's record says of the act: "published", "unchanged", or
    "quarantined (<reason>): <message>"; None without a record."""
    import json

    path = layout.changesets("pl") / f"{ref.key}.json"
    if not path.exists():
        return None
    outcomes = {o["act_id"]: o for o in json.loads(path.read_text(encoding="utf-8")).get("outcomes", [])}
    o = outcomes.get(ref.act_id)
    if o is None:
        return None
    if o["outcome"] == "quarantined":
        return f"quarantined ({o['reason']}): {o['message']}"
    return o["outcome"]


@dataclass
class ChangesetRun:
    """One changeset's run: the record's counts and what Dagster said."""
    key: str
    kind: str
    gazette: str
    acts: int
    success: bool
    seconds: float
    counts: dict
    reasons: dict
    diff: dict
    failed_checks: list[str]
    skipped: list[str]
    error: str | None = None
    index: dict | None = None


def run_changeset(settings: Settings, key: str, *, acts: list[str] | None = None, index: bool = True,
                  instance: dg.DagsterInstance | None = None, resources: dict | None = None, defs=None,
                  log_level: str = "INFO", tags: dict | None = None) -> ChangesetRun:
    """One ``de_changesets`` partition through ``de_statutes_refresh`` (with ``index``: its search
    index too), in process; ``acts`` restricts it to some acts of the changeset."""
    import json

    from assets import de_statutes
    from assets.definitions import build_definitions
    from assets.resources import default_resources
    from core.layout import Layout

    resources = resources or default_resources(settings)
    defs = defs or build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    instance.add_dynamic_partitions(de_statutes.changesets.name, [key])
    job = defs.resolve_job_def(de_statutes.de_statutes_job.name)
    selection = None if index else [de_statutes.german_published.key]
    config = {"ops": {"de__statutes__published": {"config": {"acts": list(acts or [])}}}}
    t0 = time.perf_counter()
    result = job.execute_in_process(raise_on_error=False, partition_key=key, instance=instance,
                                    asset_selection=selection, tags=tags or {},
                                    run_config={**config, "loggers": {"console": {"config": {"log_level": log_level}}}})
    failed_checks, skipped, err = _outcome(result)
    path = Layout(Path(resources["storage"].home)).changesets(de_statutes.JURISDICTION) / f"{key}.json"
    rec = json.loads(path.read_text()) if path.exists() else {}
    cs = rec.get("changeset", {})
    index_md = None
    for e in result.all_events:
        if e.event_type_value == "ASSET_MATERIALIZATION" and e.asset_key == de_statutes.german_search_index.key:
            index_md = {k: getattr(v, "value", v) for k, v in e.step_materialization_data.materialization.metadata.items()}
    blocking = [e for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
                and not e.asset_check_evaluation_data.passed
                and e.asset_check_evaluation_data.severity == dg.AssetCheckSeverity.ERROR]
    return ChangesetRun(key, cs.get("kind", "?"), cs.get("gazette", ""), len(cs.get("members", [])),
                        result.success and not blocking, time.perf_counter() - t0,
                        rec.get("counts", {}), rec.get("reasons", {}), rec.get("diff", {}), failed_checks, skipped, err,
                        index_md)


def run_german_changesets(settings: Settings, *, acts: list[str] | None = None, until: str | None = None,
                          index: bool = True, instance: dg.DagsterInstance | None = None,
                          resources: dict | None = None, progress=None, log_level: str = "INFO") -> list[ChangesetRun]:
    """Every changeset the gesetze source offers that is not applied yet, oldest first (``until``:
    stop after this key, or "import" for the initial import), each through ``de_statutes_refresh``;
    ``acts``: only the changesets touching these acts, built for these acts only."""
    from assets.definitions import build_definitions
    from assets.resources import default_resources
    from core.layout import Layout
    from pipelines.statutes.changeset_order import changesets_to_apply

    resources = resources or default_resources(settings)
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    layout = Layout(Path(resources["storage"].home))
    source = resources["gesetze"].source(layout)
    runs = []
    for planned in changesets_to_apply(layout, source.changesets(), acts=acts, until=until):
        cs, wanted = planned.changeset, planned.acts
        if progress:
            progress(f"{cs.key} {cs.kind} {cs.gazette or cs.title}: {len(wanted or cs.members)} act(s) → parse → checks "
                     f"→ chunks → diff → publish" + (" → index" if index else ""))
        run = run_changeset(settings, cs.key, acts=list(wanted) if wanted is not None else None, index=index,
                            instance=instance, resources=resources, defs=defs, log_level=log_level)
        runs.append(run)
        if not run.success:
            break
    return runs


def run_replay(settings: Settings, *, steps: int = 0, report: Path | None = None, index: bool = True,
               notify: bool = True, instance: dg.DagsterInstance | None = None, resources: dict | None = None,
               progress=None, log_level: str = "WARNING") -> list[ChangesetRun]:
    """The gesetze history replayed through the ``source_watch`` sensor, in process: each tick
    moves the replay cursor (``LEXPIPE_GESETZE_REPLAY``) once the last offered commit is applied;
    the run requests the sensor makes for the gesetze source are executed (``de_statutes_refresh``,
    then the changeset's webhook notifications), one per commit. ``steps``: stop after that many
    commits (0: at the end of the history). ``report``: one JSON line per commit (the record's
    counts, timings, index rows, notification events)."""
    import json

    from assets import de_statutes
    from assets.definitions import build_definitions
    from assets.resources import default_resources
    from core.layout import Layout

    resources = resources or default_resources(settings)
    if not resources["gesetze"].replay:
        resources = {**resources, "gesetze": resources["gesetze"].model_copy(update={"replay": True})}
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    sensor = defs.get_sensor_def("source_watch")
    layout = Layout(Path(resources["storage"].home))
    cursor_file = layout.source_state("gesetze") / "replay_sensor_cursor.json"
    cursor = json.loads(cursor_file.read_text())["cursor"] if cursor_file.exists() else None
    runs: list[ChangesetRun] = []
    idle, offered = 0, -1
    while not steps or len(runs) < steps:
        with dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources,
                                     definitions=defs) as ctx:
            result = sensor(ctx)
        cursor = result.cursor
        from core.atomic import atomic_write_json

        atomic_write_json(cursor_file, {"cursor": cursor})
        requests = [r for r in (result.run_requests or []) if r.job_name == de_statutes.de_statutes_job.name]
        if not requests:
            # a commit that changes no act (a README merge) requests nothing but moves the cursor:
            # go on while it moves; two ticks without a move are the end (or nothing left to apply)
            now = len(resources["gesetze"].source(layout, sync=False).changesets())
            idle = idle + 1 if now == offered else 0
            offered = now
            if idle >= 2:
                break
            continue
        idle = 0
        for req in requests:
            if steps and len(runs) >= steps:
                break
            if progress:
                progress(f"{req.partition_key}: {req.tags.get('lexpipe/changeset_kind')} "
                         f"{req.tags.get('lexpipe/gazette', '')} — {req.tags.get('lexpipe/acts')} act(s)")
            pub_log = layout.home / "corpus" / ".publications.jsonl"
            log_from = _lines(pub_log)
            run = run_changeset(settings, req.partition_key, index=index, instance=instance, resources=resources,
                                defs=defs, log_level=log_level, tags=dict(req.tags))
            log_to = _lines(pub_log)
            events = _notify_changeset(defs, instance, req.partition_key, log_level) if notify and run.success else {}
            runs.append(run)
            if report is not None:
                report.parent.mkdir(parents=True, exist_ok=True)
                with report.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": run.key, "kind": run.kind, "gazette": run.gazette, "acts": run.acts,
                                         "success": run.success, "seconds": round(run.seconds, 3),
                                         "counts": run.counts, "reasons": run.reasons, "diff": run.diff,
                                         "index": run.index, "notifications": events,
                                         "publications_log": [log_from, log_to]}, default=str) + "\n")
            if not run.success:
                return runs
    return runs


def _lines(path: Path) -> int:
    """Lines of a file (0 when it does not exist): where a run's publications start in the log."""
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def _notify_changeset(defs, instance, key: str, log_level: str) -> dict:
    """The changeset's webhook notifications (``de_statutes_notify``), in process: their metadata."""
    job = defs.resolve_job_def("de_statutes_notify")
    result = job.execute_in_process(raise_on_error=False, partition_key=key, instance=instance,
                                    run_config={"loggers": {"console": {"config": {"log_level": log_level}}}})
    for e in result.all_events:
        if e.event_type_value == "ASSET_MATERIALIZATION":
            md = e.step_materialization_data.materialization.metadata
            return {k: getattr(v, "value", v) for k, v in md.items()}
    return {"error": _outcome(result)[2]}


def run_cases(settings: Settings, *, instance: dg.DagsterInstance | None = None, resources: dict | None = None,
              progress=None, log_level: str = "INFO", index: bool = True, collection: str = "de:cases") -> PartitionRun:
    """A case-law collection's refresh job: ``de:cases`` (``cases_refresh``: Open Legal Data) or
    ``pl:cases`` (``pl_cases_refresh``: SAOS) — sync (the offline sample by default), quarantine
    bad records, section and chunk the decisions through their check, link or count citations and
    (with ``index``) index them. Run ``pl:cases`` after the Polish statutes: its citation links
    resolve against the published versions."""
    from assets import de_cases, pl_cases
    from assets.definitions import build_definitions
    from assets.resources import default_resources

    jobs = {"de:cases": (de_cases.cases_job, de_cases.ASSETS, de_cases.case_search_index,
                         "sync → quarantine check → sections → chunks → citations"),
            "pl:cases": (pl_cases.pl_cases_job, pl_cases.ASSETS, pl_cases.pl_case_search_index,
                         "SAOS sync → quarantine check → sections → chunks → citation links → cited by")}
    if collection not in jobs:
        raise KeyError(f"unknown case-law collection {collection!r}; known: {', '.join(jobs)}")
    job, assets, index_asset, steps = jobs[collection]
    resources = resources or default_resources(settings)
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    if progress:
        progress(f"{collection}: {steps}" + (" → index" if index else ""))
    selection = None if index else [a.key for a in assets if a.key != index_asset.key]
    result, failed_checks, skipped, err, seconds = _execute(
        defs.resolve_job_def(job.name), log_level, instance=instance, asset_selection=selection)
    return PartitionRun(collection, result.success and not failed_checks, seconds,
                        failed_checks, skipped, err)


def run_representations(settings: Settings, *, languages: tuple[str, ...] = ("pl", "de"),
                        instance: dg.DagsterInstance | None = None, resources: dict | None = None,
                        log_level: str = "INFO") -> tuple[PartitionRun, dict[str, dict]]:
    """The search's last-stage stores (``representations_refresh``, group ``representations``) for
    ``languages``, in process: the run and each store's materialisation metadata (rows, per kind,
    embedded / cached, seconds). Not part of ``lexpipe run``: from an empty embedding cache the Polish
    store embeds ~9,400 texts (~10 min at 12–16 texts/s); the German one embeds nothing (6–39 s)."""
    from assets import representations
    from assets.definitions import build_definitions
    from assets.resources import default_resources

    by_lang = {"pl": representations.pl_representations, "de": representations.de_representations}
    unknown = [lang for lang in languages if lang not in by_lang]
    if unknown:
        raise KeyError(f"no representation store for {', '.join(unknown)}; known: {', '.join(by_lang)}")
    resources = resources or default_resources(settings)
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    result, failed_checks, skipped, err, seconds = _execute(
        defs.resolve_job_def(representations.representations_job.name), log_level, instance=instance,
        asset_selection=[by_lang[lang].key for lang in languages])
    stores = {}
    for e in result.all_events:
        if e.event_type_value == "ASSET_MATERIALIZATION":
            lang = e.asset_key.path[-1]
            stores[lang] = {k: getattr(v, "value", v) for k, v in e.step_materialization_data.materialization.metadata.items()}
    return PartitionRun("representations", result.success and not failed_checks, seconds, failed_checks, skipped,
                        err), stores


def _execute(job, log_level: str, **kwargs):
    """One in-process run of ``job`` with the console log level: (result, failed checks, skipped
    steps, first step error, seconds)."""
    t0 = time.perf_counter()
    result = job.execute_in_process(raise_on_error=False, **kwargs,
                                    run_config={"loggers": {"console": {"config": {"log_level": log_level}}}})
    return (result, *_outcome(result), time.perf_counter() - t0)


def _outcome(result) -> tuple[list[str], list[str], str | None]:
    """Failed checks, skipped steps and the first step error of an in-process run."""
    failed_checks = [f"{e.asset_check_evaluation_data.check_name}: {e.asset_check_evaluation_data.description}"
                     for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
                     and not e.asset_check_evaluation_data.passed]
    skipped = [e.step_key for e in result.all_events if e.event_type_value == "STEP_SKIPPED"]
    err = None
    for e in result.all_events:
        if e.event_type_value == "STEP_FAILURE":
            info = e.event_specific_data.error
            # Dagster wraps the user error: report the first error that is not Dagster's own
            while info.cause is not None and (info.cls_name or "").startswith("Dagster"):
                info = info.cause
            err = f"{e.step_key}: {info.message.strip()}"
            break
    return failed_checks, skipped, err


@dataclass
class BenchmarkRun:
    version: str
    steps: list[str]  # benchmark assets materialized in this run: questions, staleness, retrieval_eval
    success: bool
    seconds: float
    failed_checks: list[str]
    skipped: list[str]
    error: str | None
    run_id: str
    act_id: str


def run_benchmarks(settings: Settings, *, act_id: str, versions: list[str] | None = None,
                   instance: dg.DagsterInstance | None = None, resources: dict | None = None, progress=None,
                   log_level: str = "INFO", evaluate: bool = True, questions: bool = True) -> list[BenchmarkRun]:
    """One act's ``benchmark_nightly_<act>`` job after a corpus run: the question table (once, with
    ``questions``), staleness for every published version of the act (oldest first), and — with
    ``evaluate`` — the retrieval evaluation and the answer job of its serving version. Stops after
    a failed question-table check (nothing downstream would be trustworthy)."""
    from assets import benchmarks
    from assets.definitions import build_definitions
    from assets.resources import default_resources
    from core.layout import Layout
    from pipelines.statutes.store import CorpusStore

    bench = benchmarks.of_act(act_id)
    resources = resources or default_resources(settings)
    defs = build_definitions(resources)
    instance = instance or dg.DagsterInstance.get()
    store = CorpusStore(Layout(Path(resources["storage"].home)))
    published = store.published_versions(act_id)
    wanted = sorted(v for v in (versions or published) if v in published)
    serving = store.current_version(act_id)
    if not wanted:
        return []
    # an act's benchmark partitions are its pl_changesets keys ("2025-11-13_kc"), which the corpus run added
    instance.add_dynamic_partitions(bench.versions.name, [bench.key(v) for v in wanted])
    job = defs.resolve_job_def(bench.job.name)
    runs: list[BenchmarkRun] = []
    for i, v in enumerate(wanted):
        steps = (["questions"] if i == 0 and questions else []) + ["staleness"] + (
            ["retrieval_eval"] if evaluate and v == serving else [])
        if progress:
            progress(f"benchmarks {act_id} {v}: " + " → ".join(steps))
        keys = [benchmarks.questions.key if s == "questions" else getattr(bench, s).key for s in steps]
        result, failed_checks, skipped, err, seconds = _execute(
            job, log_level, partition_key=bench.key(v), instance=instance, asset_selection=keys)
        blocking = [c for c in failed_checks if c.startswith("benchmark_questions_valid")]
        runs.append(BenchmarkRun(v, steps, result.success and not blocking, seconds,
                                 failed_checks, skipped, err, result.run_id, act_id))
        if blocking or not result.success:
            break
        if evaluate and v == serving:
            runs.append(_run_answers(defs, instance, act_id, v, log_level, progress))
    return runs


def _run_answers(defs, instance, act_id: str, version: str, log_level: str, progress) -> BenchmarkRun:
    """The act's answer job for the serving version (offline answerer unless an LLM is configured)."""
    from assets import answers

    if progress:
        progress(f"answers {act_id} {version}: every exam question citing it answered and scored")
    bench = answers.ANSWERS[act_id].bench
    result, failed_checks, skipped, err, seconds = _execute(
        defs.resolve_job_def(answers.ANSWERS[act_id].job.name), log_level, partition_key=bench.key(version),
        instance=instance)
    return BenchmarkRun(version, ["answers"], result.success, seconds, failed_checks, skipped,
                        err, result.run_id, act_id)
