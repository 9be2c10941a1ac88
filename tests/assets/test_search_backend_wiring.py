"""One factory decides the search backend: the index asset, ``lexpipe search`` and the search
service all use Elasticsearch when a cluster URL is configured and the embedded backend otherwise,
and the asset reports the same metadata for both. Elasticsearch is the loopback fake of
tests/fake_elasticsearch.py (its request bodies are checked in the retrieval tests)."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets import pl_statutes
from assets.resources import CorpusStorage, SearchConfig, default_resources
from core.layout import Layout
from core.settings import Settings
from schemas.arrow import CHUNKS, from_rows

from fake_elasticsearch import FakeElasticsearch  # tests/, on sys.path via conftest

V = "2025-11-13"
KEY = f"{V}_kc"  # the Civil Code's text state as a pl_changesets partition
TEXTS = {
    "2": "(uchylony)",
    "22^1": "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej.",
    "659": "Przez umowę najmu wynajmujący zobowiązuje się oddać najemcy rzecz do używania.",
}


@pytest.fixture
def published(tmp_path) -> Layout:
    """A home whose pl:kc 2025-11-13 is published (just the chunks the index step reads)."""
    layout = Layout(tmp_path / "home")
    d = layout.version_dir("pl:kc", V)
    d.mkdir(parents=True)
    rows = [{"chunk_id": f"pl:kc:art:{n}#0", "article_id": f"pl:kc:art:{n}", "act_id": "pl:kc",
             "version": dt.date.fromisoformat(V), "chunk_index": 0, "chunk_count": 1, "heading_path": f"Art. {n}",
             "text": t, "token_count": len(t.split()), "status": "repealed" if n == "2" else "in_force",
             "content_hash": n} for n, t in TEXTS.items()]
    pq.write_table(from_rows(rows, CHUNKS), d / "chunks.parquet")
    (d / "manifest.json").write_text("{}")
    return layout


@pytest.fixture
def fake(httpserver) -> FakeElasticsearch:
    return FakeElasticsearch(httpserver)


def materialize(layout: Layout, search_config: SearchConfig) -> dict:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(pl_statutes.changesets.name, [KEY])
    result = dg.materialize([pl_statutes.search_index], partition_key=KEY, instance=instance, resources={
        "storage": CorpusStorage(home=str(layout.home)), "search_config": search_config})
    assert result.success
    (event,) = result.get_asset_materialization_events()
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_index_asset_defaults_to_the_embedded_backend(published):
    md = materialize(published, SearchConfig(encoder="hashing"))
    assert md["backend"] == "EmbeddedBackend" and md["serving_version"] == V
    assert md["documents"] == md["vectors"] == len(TEXTS)
    # one index per language: the act's version is a generation of the Polish statute index
    assert md["physical_index"] == md["table"] and md["table"].startswith("statutes_pl@g")
    assert md["alias"].endswith("statutes_pl/CURRENT") and md["build_seconds"] >= 0


def test_index_asset_loads_into_elasticsearch_when_configured(published, fake, httpserver):
    md = materialize(published, SearchConfig(encoder="hashing", elasticsearch_url=httpserver.url_for("/")))
    assert md["backend"] == "ElasticsearchBackend" and md["serving_version"] == V
    assert md["documents"] == md["vectors"] == len(TEXTS)
    assert md["physical_index"] == "lexpipe-statutes-pl-1" and md["alias"] == "lexpipe-statutes-pl"
    assert fake.aliases_of(md["alias"]) == {md["physical_index"]}
    assert len(fake.visible(md["alias"])) == len(TEXTS)
    assert not (published.home / "index").exists()  # nothing went to the embedded backend


def test_search_config_names_the_backend(httpserver):
    assert SearchConfig().backend_name == "embedded"
    assert SearchConfig(elasticsearch_url="http://es:9200").backend_name == "elasticsearch"
    assert SearchConfig(backend="embedded", elasticsearch_url="http://es:9200").backend_name == "embedded"
    with pytest.raises(ValueError, match="needs elasticsearch_url"):
        SearchConfig(backend="elasticsearch").backend_name
    with pytest.raises(ValueError, match="'solr'"):
        SearchConfig(backend="solr").backend_name
    resources = default_resources(Settings(elasticsearch_url="http://es:9200"))
    assert resources["search_config"].backend_name == "elasticsearch"
    assert default_resources(Settings())["search_config"].backend_name == "embedded"


def test_open_backend_follows_the_settings(tmp_path, httpserver):
    from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend
    from pipelines.retrieval.embedded_backend import EmbeddedBackend
    from pipelines.retrieval.index_build import open_backend
    from pipelines.retrieval.service import SearchService

    embedded = open_backend(Settings(home=tmp_path, encoder="hashing"), lang="pl")
    assert isinstance(embedded, EmbeddedBackend)
    with pytest.raises(TypeError, match="none is assumed"):  # neither an act nor a language
        open_backend(Settings(home=tmp_path, encoder="hashing"))
    es = open_backend(Settings(home=tmp_path, encoder="hashing", elasticsearch_url=httpserver.url_for("/")),
                      act_id="pl:kp", keep_versions=2)
    assert isinstance(es, ElasticsearchBackend)
    assert (es.lang, es.settings.vector_dims, es.settings.keep_versions) == ("pl", 384, 2)
    assert es.analyze_query is not None and es.encode_query is not None
    service = SearchService.from_settings(Settings(home=tmp_path, encoder="hashing",
                                                   elasticsearch_url=httpserver.url_for("/")))
    assert isinstance(service.backend, ElasticsearchBackend)


def test_cli_index_and_search_use_elasticsearch_when_configured(published, fake, httpserver, monkeypatch, capsys):
    from lexpipe.cli import main

    monkeypatch.setenv("LEXPIPE_ENCODER", "hashing")
    monkeypatch.setenv("LEXPIPE_ELASTICSEARCH_URL", httpserver.url_for("/"))
    assert main(["index", "--act", "pl:kc", "--home", str(published.home)]) == 0
    assert "ElasticsearchBackend lexpipe-statutes-pl-1" in capsys.readouterr().out
    fake.rankings["bm25"] = ["pl:kc:art:659#0", "pl:kc:art:22^1#0"]
    assert main(["search", "umowa najmu", "--retriever", "bm25", "--json", "--home", str(published.home)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [h["article_id"] for h in out["hits"]] == ["pl:kc:art:659", "pl:kc:art:22^1"]
    assert out["versions"] == {"pl:kc": V}
    assert main(["search", "umowa", "--act", "pl:kk", "--home", str(published.home)]) == 2
    assert "unknown act" in capsys.readouterr().err
    assert not (published.home / "index").exists()
