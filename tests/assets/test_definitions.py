"""What `lexpipe ui` loads: one Definitions with the Polish statutes as one group partitioned by
changeset, their blocking checks and jobs, and everything else."""

import dagster as dg
import pytest

from assets.definitions import defs

POLISH = ("kc", "kpc", "kp", "kk")  # the curated Polish codes: each has a benchmark family
STEPS = ("raw_pdf", "articles", "chunks", "diff", "published", "search_index")


def test_definitions_load_like_the_ui_does():
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    # the Polish statutes: one group of six steps whatever the catalogue holds (no asset per act)
    polish = {f"pl/statutes/{n}" for n in STEPS}
    benchmarks = {f"benchmarks/pl/{a}/{n}" for a in POLISH for n in ("staleness", "retrieval_eval", "answers")}
    assert keys == polish | benchmarks | {
        "benchmarks/questions", "sources/pl_eli", "sources/de_openlegaldata", "sources/de_gesetze", "sources/pl_saos",
        "cases/openlegaldata", "cases/chunks", "cases/search_index", "cases/citation_counts", "de/statutes/published",
        "de/statutes/search_index", "de/statutes/embeddings", "index/representations/de", "index/representations/pl"} | {
        f"cases/pl/{n}" for n in ("saos", "chunks", "search_index", "citation_links", "cited_by")} | {
        "notifications/pl/statutes", "notifications/de/statutes"}
    assert not any(k.startswith(("pl/kc/", "pl/kk/", "sources/pl_kc")) for k in keys)  # the per-act families are gone
    assert {graph.get(dg.AssetKey(["pl", "statutes", n])).group_name for n in STEPS} == {"pl_statutes"}
    assert {graph.get(dg.AssetKey(["pl", "statutes", n])).partitions_def.name for n in STEPS} == {"pl_changesets"}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == {(f"benchmarks/pl/{a}/retrieval_eval", "retrieval_no_regression") for a in POLISH} | {
        ("pl/statutes/articles", "articles_valid"), ("pl/statutes/chunks", "chunks_valid"),
        ("benchmarks/questions", "benchmark_questions_valid"),
        ("sources/pl_eli", "polled_within_window"), ("sources/de_gesetze", "polled_within_window"),
        ("sources/de_openlegaldata", "polled_within_window"), ("sources/pl_saos", "polled_within_window"),
        ("cases/openlegaldata", "quarantine_contract"), ("cases/chunks", "case_chunks_valid"),
        ("de/statutes/published", "de_changeset_valid"),
        ("cases/pl/saos", "saos_quarantine_contract"), ("cases/pl/chunks", "pl_case_chunks_valid"),
        ("cases/pl/citation_links", "pl_citation_links_resolved")}
    specs = {s.key: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert all(specs[dg.AssetCheckKey(dg.AssetKey(["pl", "statutes", a]), n)].blocking
               for a, n in (("articles", "articles_valid"), ("chunks", "chunks_valid")))
    parents = {n: {k.to_user_string() for k in graph.get(dg.AssetKey(["pl", "statutes", n])).parent_keys}
               for n in STEPS}
    assert parents == {"raw_pdf": {"sources/pl_eli"}, "articles": {"pl/statutes/raw_pdf"},
                       "chunks": {"pl/statutes/articles"}, "diff": {"pl/statutes/articles"},
                       "published": {"pl/statutes/articles", "pl/statutes/chunks", "pl/statutes/diff"},
                       "search_index": {"pl/statutes/published"}}
    job = defs.resolve_job_def("pl_statutes_refresh")
    assert job.partitions_def.name == "pl_changesets" and job.tags["lexpipe/source"] == "eli"
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == polish
    assert graph.get(dg.AssetKey(["pl", "statutes", "search_index"])).pools == {"index"}
    assert defs.resolve_job_def("pl_statutes_notify").partitions_def.name == "pl_changesets"
    assert defs.resolve_job_def("pl_statutes_revalidate").partitions_def.name == "pl_changesets"
    for gone in ("pl_kc_corpus", "pl_kc_corpus_and_index", "pl_kc_refresh", "pl_kc_notify", "pl_kc_revalidate"):
        with pytest.raises(Exception):
            defs.resolve_job_def(gone)


def test_german_statutes_are_one_group_partitioned_by_gesetze_changeset():
    """Every German act in one group of three steps, partitioned by changeset (one commit of the
    gesetze history: thousands of acts, one run); the dense backfill apart, by its own job."""
    graph = defs.resolve_asset_graph()
    steps = ("published", "search_index", "embeddings")
    nodes = {n: graph.get(dg.AssetKey(["de", "statutes", n])) for n in steps}
    assert {n.group_name for n in nodes.values()} == {"de_statutes"}
    assert nodes["published"].partitions_def.name == nodes["search_index"].partitions_def.name == "de_changesets"
    assert nodes["embeddings"].partitions_def is None  # resumable over the whole corpus, not per changeset
    assert {k.to_user_string() for k in nodes["search_index"].parent_keys} == {"de/statutes/published"}
    assert nodes["search_index"].pools == {"index"}
    job = defs.resolve_job_def("de_statutes_refresh")
    assert job.partitions_def.name == "de_changesets" and job.tags["lexpipe/source"] == "gesetze"
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {
        "de/statutes/published", "de/statutes/search_index"}
    assert {k.to_user_string() for k in defs.resolve_job_def("de_embedding_backfill").asset_layer.selected_asset_keys} \
        == {"de/statutes/embeddings"}
    schedule = defs.resolve_schedule_def("de_embedding_schedule")
    assert schedule.job_name == "de_embedding_backfill"
    assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED  # hours of CPU: an operator's choice
    specs = {s.key: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert specs[dg.AssetCheckKey(dg.AssetKey(["de", "statutes", "published"]), "de_changeset_valid")].blocking


def test_polish_case_law_group_lineage_checks_and_schedule():
    graph = defs.resolve_asset_graph()
    parents = {k: {p.to_user_string() for p in graph.get(dg.AssetKey(k.split("/"))).parent_keys}
               for k in ("cases/pl/chunks", "cases/pl/search_index", "cases/pl/citation_links", "cases/pl/cited_by")}
    assert parents == {"cases/pl/chunks": {"cases/pl/saos"}, "cases/pl/search_index": {"cases/pl/chunks"},
                       "cases/pl/citation_links": {"cases/pl/saos"}, "cases/pl/cited_by": {"cases/pl/citation_links"}}
    assert {graph.get(dg.AssetKey(["cases", "pl", n])).group_name for n in ("saos", "chunks", "cited_by")} == {"pl_cases"}
    specs = {s.key.name: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert specs["saos_quarantine_contract"].blocking and specs["pl_case_chunks_valid"].blocking
    schedule = defs.resolve_schedule_def("pl_cases_nightly_schedule")
    assert schedule.job_name == "pl_cases_refresh"
    assert graph.get(dg.AssetKey(["cases", "pl", "search_index"])).pools == {"index"}


def test_benchmark_job_schedule_and_lineage():
    graph = defs.resolve_asset_graph()
    parents = {k: {p.to_user_string() for p in graph.get(dg.AssetKey(k.split("/"))).parent_keys}
               for k in ("benchmarks/pl/kp/staleness", "benchmarks/pl/kp/retrieval_eval", "benchmarks/pl/kp/answers")}
    assert parents == {"benchmarks/pl/kp/staleness": {"benchmarks/questions", "pl/statutes/articles",
                                                      "pl/statutes/diff"},
                       "benchmarks/pl/kp/retrieval_eval": {"benchmarks/questions", "benchmarks/pl/kp/staleness",
                                                           "pl/statutes/search_index"},
                       "benchmarks/pl/kp/answers": {"benchmarks/questions", "benchmarks/pl/kp/staleness",
                                                    "pl/statutes/search_index"}}
    staleness = dg.AssetKey(["benchmarks", "pl", "kp", "staleness"])
    mapping = graph.get_partition_mapping(staleness, dg.AssetKey(["pl", "statutes", "articles"]))
    assert isinstance(mapping, dg.IdentityPartitionMapping)  # "2025-12-10_kp" reads that pl_changesets partition
    for a in POLISH:  # each act's benchmark follows that act's changesets (a subset of pl_changesets)
        assert graph.get(dg.AssetKey(["benchmarks", "pl", a, "staleness"])).partitions_def.name == f"pl_{a}_changesets"
    assert graph.get(dg.AssetKey(["benchmarks", "questions"])).partitions_def is None
    specs = {s.key.name: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert specs["benchmark_questions_valid"].blocking and not specs["retrieval_no_regression"].blocking
    for a in POLISH:
        job = defs.resolve_job_def(f"benchmark_nightly_pl_{a}")
        assert job.partitions_def.name == f"pl_{a}_changesets"
        schedule = defs.resolve_schedule_def(f"benchmark_nightly_pl_{a}_schedule")
        assert (schedule.cron_schedule, schedule.job_name) == ("0 2 * * *", f"benchmark_nightly_pl_{a}")
        answers = defs.resolve_schedule_def(f"answers_nightly_pl_{a}_schedule")
        assert (answers.cron_schedule, answers.job_name) == ("0 3 * * *", f"answers_nightly_pl_{a}")


def test_every_job_runs_its_steps_in_the_configured_executor(monkeypatch):
    """``LEXPIPE_RUN_EXECUTOR``: one process per run by default (a refresh's steps are a chain);
    ``multiprocess`` gives each step its own process, as Dagster's default would."""
    from assets.definitions import build_definitions

    jobs = [j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__")]
    assert {"pl_statutes_refresh", "de_statutes_refresh", "cases_refresh", "webhook_deliver"} <= set(jobs)
    assert {defs.resolve_job_def(j).executor_def.name for j in jobs} == {"in_process"}
    monkeypatch.setenv("LEXPIPE_RUN_EXECUTOR", "multiprocess")
    other = build_definitions()
    assert {other.resolve_job_def(j).executor_def.name for j in jobs} == {"multiprocess"}


def test_an_unknown_run_executor_is_refused_naming_the_setting(monkeypatch):
    from pydantic import ValidationError

    from core.settings import Settings

    monkeypatch.setenv("LEXPIPE_RUN_EXECUTOR", "threads")
    with pytest.raises(ValidationError) as err:
        Settings()
    assert "run_executor" in str(err.value) and "in_process" in str(err.value)
