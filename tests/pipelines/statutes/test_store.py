import json

import pyarrow as pa
import pytest

from pipelines.statutes.store import CorpusError, CorpusStore
from tests.pipelines.statutes.test_diff import _art
from schemas.arrow import ARTICLES, from_rows


def _stage(store, version, n):
    store.stage_table("pl:kc", version, "articles", from_rows([_art(str(i), "T.") for i in range(n)], ARTICLES))


def test_stage_publish_and_current(tmp_home):
    store = CorpusStore(tmp_home)
    _stage(store, "2024-12-19", 3)
    assert store.current_version("pl:kc") is None  # staged is not served
    store.publish("pl:kc", "2024-12-19", {"source_sha256": "a"})
    _stage(store, "2025-11-13", 4)
    store.publish("pl:kc", "2025-11-13", {"source_sha256": "b"})
    assert store.current_version("pl:kc") == "2025-11-13"
    assert store.previous_version("pl:kc", "2025-11-13") == "2024-12-19"
    assert store.read("pl:kc", "2024-12-19", "articles", published_only=True).num_rows == 3
    assert not tmp_home.staging_dir("pl:kc", "2025-11-13").exists()
    # publishing an older version again does not move current backwards
    store.publish("pl:kc", "2024-12-19", {"source_sha256": "a"})
    assert json.loads(tmp_home.current_file("pl:kc").read_text())["version"] == "2025-11-13"


def test_republish_swaps_whole_folder(tmp_home):
    store = CorpusStore(tmp_home)
    _stage(store, "2025-11-13", 2)
    store.publish("pl:kc", "2025-11-13", {"source_sha256": "a"})
    _stage(store, "2025-11-13", 5)
    store.publish("pl:kc", "2025-11-13", {"source_sha256": "a2"})
    assert store.read("pl:kc", "2025-11-13", "articles", published_only=True).num_rows == 5
    assert not list((tmp_home.act_dir("pl:kc") / ".trash").iterdir())


def test_schema_violation_is_refused_before_anything_is_written(tmp_home):
    store = CorpusStore(tmp_home)
    with pytest.raises(ValueError, match="missing columns"):
        store.stage_table("pl:kc", "2025-11-13", "articles", pa.table({"id": ["x"]}))
    assert not (tmp_home.staging_dir("pl:kc", "2025-11-13") / "articles.parquet").exists()
    with pytest.raises(CorpusError, match="nothing staged"):
        store.publish("pl:kc", "2025-11-13", {})


def test_version_in_force_is_the_newest_on_or_before_the_day():
    from pipelines.statutes.store import version_in_force

    versions = ["2016-09-22", "2025-12-10"]
    assert version_in_force(versions, "2016-09-22") == 0
    assert version_in_force(versions, "2020-01-01") == 0
    assert version_in_force(versions, "2025-12-10") == 1
    assert version_in_force(versions, "2030-01-01") == 1
    assert version_in_force(versions, "2011-03-17") == -1
    assert version_in_force([], "2020-01-01") == -1
