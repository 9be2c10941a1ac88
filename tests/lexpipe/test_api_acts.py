"""``/acts``, ``/acts/{act}/versions``, ``/acts/{act}/toc`` and ``/acts/{act}/diff`` over the real
published k.c. versions."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app
from pipelines.reads import ReadService
from schemas.acts import registry


@pytest.fixture(scope="module")
def client(corpus_home: Path) -> TestClient:
    return TestClient(create_app(reads=ReadService.at(corpus_home)))


def kc(home: Path, version: str) -> Path:
    return home / "corpus" / "pl" / "kc" / version


def test_acts(client):
    r = client.get("/acts")
    assert r.status_code == 200
    acts = {a["act_id"]: a for a in r.json()}
    assert list(acts) == list(registry().ids())
    assert (acts["pl:kc"]["served_version"], acts["pl:kc"]["versions"]) == (NEW, [OLD, NEW])
    assert acts["pl:kp"]["versions"] == [] and acts["pl:kp"]["served_version"] is None
    assert client.get("/acts/pl:kc").json() == acts["pl:kc"]


def test_versions(client, corpus_home):
    r = client.get("/acts/pl:kc/versions")
    assert r.status_code == 200
    old, new = r.json()
    for v, got in ((OLD, old), (NEW, new)):
        manifest = json.loads((kc(corpus_home, v) / "manifest.json").read_text())
        assert (got["version"], got["source_sha256"], got["published_at"], got["counts"]) == (
            v, manifest["source_sha256"], manifest["published_at"], manifest["stats"])
    assert (old["counts"]["articles"], old["counts"]["repealed"], new["counts"]["pending_changes"]) == (1296, 100, 4)
    assert (old["served"], new["served"], new["previous_version"], new["diff_from"]) == (False, True, OLD, [OLD])
    assert client.get(f"/acts/pl:kc/versions/{NEW}").json() == new
    assert client.get("/acts/pl:kk/versions").json() == []  # registered, nothing published yet


@pytest.mark.parametrize("as_of,version", [(OLD, OLD), ("2025-06-30", OLD), (NEW, NEW), ("2030-01-01", NEW)])
def test_toc_at_a_date(client, corpus_home, as_of, version):
    r = client.get("/acts/pl:kc/toc", params={"as_of": as_of})
    assert r.status_code == 200, r.text
    toc = r.json()
    assert (toc["version"], toc["articles"], toc["repealed"]) == (version, 1296, 100)
    assert [e["number"] for e in toc["entries"]] == ["PIERWSZA", "DRUGA", "TRZECIA", "CZWARTA"]

    def articles(entries):
        for e in entries:
            yield from ([e["id"]] if e["level"] == "article" else articles(e["children"]))

    published = pq.read_table(kc(corpus_home, version) / "articles.parquet", columns=["id"]).column("id").to_pylist()
    assert list(articles(toc["entries"])) == published


def test_diff_between_the_versions(client, corpus_home):
    r = client.get("/acts/pl:kc/diff", params={"from": OLD, "to": NEW})
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["consecutive"], d["source"]) == (True, "stored")
    assert d["counts"] == {"added": 0, "changed": 7, "repealed": 0, "removed": 0, "editorial": 3}
    stored = pq.read_table(kc(corpus_home, NEW) / f"diff_from_{OLD}.parquet").to_pylist()
    assert [(e["unit_id"], e["change"], e["word_diff"]) for e in d["changes"] + d["editorial"]] == sorted(
        [(s["article_id"], s["change"], s["unified_diff"]) for s in stored], key=lambda t: t[1] == "editorial")
    assert {e["change"] for e in d["editorial"]} == {"editorial"}
    parts = {e["unit_id"]: e["parts"] for e in d["changes"]}
    assert [p["unit_id"] for p in parts["pl:kc:art:709^13"]] == ["pl:kc:art:709^13:par:2"]


@pytest.mark.parametrize("params,status,fragment", [
    ({"from": NEW, "to": OLD}, 404, "must be older than"),  # no such diff: diffs run from older to newer
    ({"from": NEW, "to": NEW}, 404, "the same version"),
    ({"from": OLD, "to": "2025-01-01"}, 404, "no published version 2025-01-01"),
    ({"from": "2024-12-1", "to": NEW}, 422, "from must be a date"),
    ({"from": OLD, "to": "newest"}, 422, "to must be a date"),
])
def test_diff_refusals(client, params, status, fragment):
    r = client.get("/acts/pl:kc/diff", params=params)
    assert r.status_code == status and fragment in r.json()["detail"], r.text


@pytest.mark.parametrize("path,status,fragment", [
    ("/acts/pl:xx", 404, "unknown act 'pl:xx'; known acts: pl:kc"),
    ("/acts/pl:xx/versions", 404, "unknown act"),
    ("/acts/pl:kc/versions/2020-01-01", 404, "no published version 2020-01-01; held: 2024-12-19, 2025-11-13"),
    ("/acts/pl:kc/versions/current", 422, "version must be a date"),
    ("/acts/pl:kk/toc", 404, "no published version of pl:kk"),
    ("/acts/pl:kc/toc?as_of=2024-01-01", 404, "before the oldest held version"),
    ("/acts/PL-KC", 422, "act must be an act id like pl:kc"),
    ("/acts/pl:kc/toc?as_of=2024-1-1", 422, "as_of must be a date"),
    ("/acts/pl:xx/diff?from=2024-12-19&to=2025-11-13", 404, "unknown act"),
])
def test_refusals(client, path, status, fragment):
    r = client.get(path)
    assert r.status_code == status and fragment in r.json()["detail"], r.text


def test_diff_without_its_parameters_is_422(client):
    r = client.get("/acts/pl:kc/diff", params={"from": OLD})
    assert r.status_code == 422 and r.json()["field"] == "to" and r.json()["message"] == "to is required"


def test_openapi_describes_the_read_endpoints(client):
    spec = client.get("/openapi.json").json()
    for path in ("/acts", "/acts/{act}/versions", "/acts/{act}/toc", "/acts/{act}/diff", "/units/{unit_id}",
                 "/units/{unit_id}/history", "/acts/{act}/versions/{version}/download", "/search", "/health"):
        assert path in spec["paths"], path
    schemas = spec["components"]["schemas"]
    assert {"UnitOut", "TocOut", "TocEntryOut", "DiffOut", "HistoryOut", "VersionOut", "ActOut", "ErrorOut"} <= set(schemas)
    unit = spec["paths"]["/units/{unit_id}"]["get"]["responses"]
    assert unit["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/UnitOut")
    assert unit["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorOut")
    assert "pending_applies" in schemas["UnitOut"]["properties"]
