"""What `lexpipe ui` loads: one Definitions with the act's assets, blocking checks and job."""

import dagster as dg

from assets.definitions import defs

POLISH = ("kc", "kpc", "kp", "kk")  # the registry's Polish codes


def test_definitions_load_like_the_ui_does():
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    per_act = {f"{p}/{a}/{n}" for a in POLISH for p, n in (
        *(("pl", n) for n in ("raw_pdf", "articles", "chunks", "diff", "published", "search_index")),
        *(("benchmarks/pl", n) for n in ("staleness", "retrieval_eval", "answers")))}
    assert keys == per_act | {f"sources/pl_{a}_eli" for a in POLISH} | {"benchmarks/questions", "sources/de_openlegaldata", "sources/de_statutes", "sources/pl_saos", "cases/openlegaldata", "cases/chunks",
                    "cases/search_index", "cases/citation_counts", "de/statutes/published",
                    "de/statutes/search_index"} | {
                    f"cases/pl/{n}" for n in ("saos", "chunks", "search_index", "citation_links", "cited_by")} | {
                    *(f"notifications/pl/{a}" for a in POLISH), "notifications/de/statutes"}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == {c for a in POLISH for c in (
        (f"pl/{a}/articles", "articles_valid"), (f"pl/{a}/chunks", "chunks_valid"),
        (f"benchmarks/pl/{a}/retrieval_eval", "retrieval_no_regression"), (f"sources/pl_{a}_eli", "polled_within_window"))} | {
                      ("benchmarks/questions", "benchmark_questions_valid"),
                      ("sources/de_openlegaldata", "polled_within_window"),
                      ("sources/de_statutes", "polled_within_window"),
                      ("sources/pl_saos", "polled_within_window"),
                      ("cases/openlegaldata", "quarantine_contract"), ("cases/chunks", "case_chunks_valid"),
                      ("de/statutes/published", "german_served_valid"),
                      ("cases/pl/saos", "saos_quarantine_contract"), ("cases/pl/chunks", "pl_case_chunks_valid"),
                      ("cases/pl/citation_links", "pl_citation_links_resolved")}
    published = graph.get(dg.AssetKey(["pl", "kc", "published"]))
    assert {k.to_user_string() for k in published.parent_keys} == {"pl/kc/articles", "pl/kc/chunks", "pl/kc/diff"}
    assert defs.resolve_job_def("pl_kc_corpus").partitions_def.name == "pl_kc_versions"
    index = graph.get(dg.AssetKey(["pl", "kc", "search_index"]))
    assert {k.to_user_string() for k in index.parent_keys} == {"pl/kc/published"}


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
    assert parents == {"benchmarks/pl/kp/staleness": {"benchmarks/questions", "pl/kp/articles", "pl/kp/diff"},
                       "benchmarks/pl/kp/retrieval_eval": {"benchmarks/questions", "benchmarks/pl/kp/staleness",
                                                           "pl/kp/search_index"},
                       "benchmarks/pl/kp/answers": {"benchmarks/questions", "benchmarks/pl/kp/staleness",
                                                    "pl/kp/search_index"}}
    for a in POLISH:  # each act's benchmark follows that act's versions
        assert graph.get(dg.AssetKey(["benchmarks", "pl", a, "staleness"])).partitions_def.name == f"pl_{a}_versions"
    assert graph.get(dg.AssetKey(["benchmarks", "questions"])).partitions_def is None
    specs = {s.key.name: s for cd in defs.asset_checks or [] for s in cd.check_specs}
    assert specs["benchmark_questions_valid"].blocking and not specs["retrieval_no_regression"].blocking
    for a in POLISH:
        job = defs.resolve_job_def(f"benchmark_nightly_pl_{a}")
        assert job.partitions_def.name == f"pl_{a}_versions"
        schedule = defs.resolve_schedule_def(f"benchmark_nightly_pl_{a}_schedule")
        assert (schedule.cron_schedule, schedule.job_name) == ("0 2 * * *", f"benchmark_nightly_pl_{a}")
        answers = defs.resolve_schedule_def(f"answers_nightly_pl_{a}_schedule")
        assert (answers.cron_schedule, answers.job_name) == ("0 3 * * *", f"answers_nightly_pl_{a}")
