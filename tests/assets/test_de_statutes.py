"""German statutes in Dagster: a partition per act builds every text state, validates, indexes."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg

from assets import de_statutes
from assets.resources import CorpusStorage, ParseConfig, SearchConfig
from core.layout import Layout
from pipelines.statutes.store import CorpusStore
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest


def _run(home: Path, sample: Path, act: str = "gg") -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*de_statutes.ASSETS, *de_statutes.CHECKS], partition_key=act,
        resources={"storage": CorpusStorage(home=str(home)), "parse_config": ParseConfig(),
                   "search_config": SearchConfig(encoder="hashing")},
        run_config={"ops": {"de__statutes__published": {"config": {"sample_dir": str(sample)}}}},
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)


def _gg_only(sample_dir: Path, root: Path) -> Path:
    (root / "de" / "gesetze").mkdir(parents=True)
    shutil.copy(sample_dir / "de" / "gesetze" / "gg.md", root / "de" / "gesetze" / "gg.md")
    return root


def test_gg_partition_publishes_validates_and_indexes(tmp_path: Path, sample_dir: Path):
    sample = _gg_only(sample_dir, tmp_path / "samples")
    result = _run(tmp_path / "home", sample)
    assert result.success
    [mat] = result.asset_materializations_for_node("de__statutes__published")
    md = {k: v.value for k, v in mat.metadata.items()}
    version = CorpusStore(Layout(tmp_path / "home")).current_version("de:gg")
    assert md["serving_version"] == version and md["dagster/row_count"] > 140  # Art. 1–146 and more
    [check] = [e.asset_check_evaluation_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert check.passed and check.check_name == "german_served_valid"
    backend = open_embedded_backend(Layout(tmp_path / "home"), encoder=get_encoder("hashing"), lang="de", rerank=False)
    [hit] = backend.search(SearchRequest("Die Würde des Menschen ist unantastbar", k=1, retriever="bm25",
                                         filters=Filters(act_ids=("de:gg",))))
    assert hit.article_id == "de:gg:art:1"
    # a re-run reuses the build and embeds nothing new
    again = _run(tmp_path / "home", sample)
    [idx] = again.asset_materializations_for_node("de__statutes__search_index")
    assert idx.metadata["embedded_chunks"].value == 0


def test_broken_source_publishes_nothing(tmp_path: Path, sample_dir: Path):
    sample = tmp_path / "samples"
    (sample / "de" / "gesetze").mkdir(parents=True)
    (sample / "de" / "gesetze" / "gg.md").write_text("# Keine Verfassung\n\nNur ein Text.\n", encoding="utf-8")
    result = _run(tmp_path / "home", sample)
    assert not result.success
    assert CorpusStore(Layout(tmp_path / "home")).current_version("de:gg") is None
    assert not result.asset_materializations_for_node("de__statutes__search_index")


def test_gg_partition_publishes_the_2012_text_states_and_serves_the_newest(tmp_path: Path, sample_dir: Path):
    # issue 16, point 4: de/gesetze-versions/gg_<date>.md beside gg.md, through the same job
    sample = _gg_only(sample_dir, tmp_path / "samples")
    (sample / "de" / "gesetze-versions").mkdir()
    for v in ("2012-08-03", "2012-08-06"):
        shutil.copy(sample_dir / "de" / "gesetze-versions" / f"gg_{v}.md", sample / "de" / "gesetze-versions")
    result = _run(tmp_path / "home", sample)
    assert result.success
    [mat] = result.asset_materializations_for_node("de__statutes__published")
    md = {k: v.value for k, v in mat.metadata.items()}
    assert md["published_versions"] == "2012-08-03, 2012-08-06, 2020-09-29"
    assert md["serving_version"] == md["version"] == "2020-09-29"
    rows = [ln for ln in md["versions"].splitlines() if ln.startswith("| 2")]
    assert rows[0].startswith("| 2012-08-03 | markdown |") and rows[0].endswith("| built | first version |")
    assert rows[1].startswith("| 2012-08-06 | markdown |") and rows[1].endswith("| built | 1 changed |")  # Art. 93
    assert rows[2].startswith("| 2020-09-29 | markdown |")
    [check] = [e.asset_check_evaluation_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert check.passed and check.metadata["version"].value == "2020-09-29"
    # a re-run republishes nothing: every version reused, the same one served, nothing embedded
    again = _run(tmp_path / "home", sample)
    [mat] = again.asset_materializations_for_node("de__statutes__published")
    rows = [ln for ln in mat.metadata["versions"].value.splitlines() if ln.startswith("| 2")]
    assert len(rows) == 3 and all("| reused |" in r for r in rows)
    assert mat.metadata["serving_version"].value == "2020-09-29"
    [idx] = again.asset_materializations_for_node("de__statutes__search_index")
    assert idx.metadata["embedded_chunks"].value == 0 and idx.metadata["version"].value == "2020-09-29"
