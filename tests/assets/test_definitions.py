"""What `lexpipe ui` loads: one Definitions with the act's assets, blocking checks and job."""

import dagster as dg

from assets.definitions import defs


def test_definitions_load_like_the_ui_does():
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {"pl/kc/raw_pdf", "pl/kc/articles", "pl/kc/chunks", "pl/kc/diff", "pl/kc/published",
                    "pl/kc/search_index", "benchmarks/questions", "benchmarks/staleness", "benchmarks/retrieval_eval",
                    "benchmarks/answers", "sources/pl_kc_eli", "sources/de_openlegaldata", "sources/de_statutes", "cases/openlegaldata", "cases/chunks",
                    "cases/search_index", "cases/citation_counts", "de/statutes/published",
                    "de/statutes/search_index"}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == {("pl/kc/articles", "articles_valid"), ("pl/kc/chunks", "chunks_valid"),
                      ("benchmarks/questions", "benchmark_questions_valid"),
                      ("benchmarks/retrieval_eval", "retrieval_no_regression"),
                      ("sources/pl_kc_eli", "polled_within_window"),
                      ("sources/de_openlegaldata", "polled_within_window"),
                      ("sources/de_statutes", "polled_within_window"),
                      ("cases/openlegaldata", "quarantine_contract"), ("cases/chunks", "case_chunks_valid"),
                      ("de/statutes/published", "german_served_valid")}
    published = graph.get(dg.AssetKey(["pl", "kc", "published"]))
    assert {k.to_user_string() for k in published.parent_keys} == {"pl/kc/articles", "pl/kc/chunks", "pl/kc/diff"}
    assert defs.resolve_job_def("pl_kc_corpus").partitions_def.name == "pl_kc_versions"
    index = graph.get(dg.AssetKey(["pl", "kc", "search_index"]))
    assert {k.to_user_string() for k in index.parent_keys} == {"pl/kc/published"}


def test_benchmark_job_schedule_and_lineage():
    graph = defs.resolve_asset_graph()
    parents = {k: {p.to_user_string() for p in graph.get(dg.AssetKey(k.split("/"))).parent_keys}
               for k in ("benchmarks/staleness", "benchmarks/retrieval_eval")}
    assert parents == {"benchmarks/staleness": {"benchmarks/questions", "pl/kc/articles", "pl/kc/diff"},
                       "benchmarks/retrieval_eval": {"benchmarks/questions", "benchmarks/staleness",
                                                     "pl/kc/search_index"}}
    assert graph.get(dg.AssetKey(["benchmarks", "staleness"])).partitions_def.name == "pl_kc_versions"
    assert graph.get(dg.AssetKey(["benchmarks", "questions"])).partitions_def is None
    specs = {s.key.name: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert specs["benchmark_questions_valid"].blocking and not specs["retrieval_no_regression"].blocking
    job = defs.resolve_job_def("benchmark_nightly")
    assert job.partitions_def.name == "pl_kc_versions"
    schedule = defs.resolve_schedule_def("benchmark_nightly_schedule")
    assert (schedule.cron_schedule, schedule.job_name) == ("0 2 * * *", "benchmark_nightly")
