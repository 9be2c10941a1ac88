"""What `lexpipe ui` loads: one Definitions with the act's assets, blocking checks and job."""

import dagster as dg

from assets.definitions import defs


def test_definitions_load_like_the_ui_does():
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {"pl/kc/raw_pdf", "pl/kc/articles", "pl/kc/chunks", "pl/kc/diff", "pl/kc/published",
                    "pl/kc/search_index"}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert checks == {("pl/kc/articles", "articles_valid"), ("pl/kc/chunks", "chunks_valid")}
    published = graph.get(dg.AssetKey(["pl", "kc", "published"]))
    assert {k.to_user_string() for k in published.parent_keys} == {"pl/kc/articles", "pl/kc/chunks", "pl/kc/diff"}
    assert defs.resolve_job_def("pl_kc_corpus").partitions_def.name == "pl_kc_versions"
    index = graph.get(dg.AssetKey(["pl", "kc", "search_index"]))
    assert {k.to_user_string() for k in index.parent_keys} == {"pl/kc/published"}
