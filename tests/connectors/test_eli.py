"""ELI connector end to end: local HTTP server serving the real sample PDFs + API-shaped JSON."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from schemas.acts import registry
from connectors.eli import (EliSource, HttpEliSource, InvalidMetadataError,
                            InvalidPdfError, SampleEliSource, VersionUnavailableError,
                            download_act, eli_for_act, eli_source_from_settings)
from connectors.http import HttpFetchError, PoliteHttpClient
from connectors.landing import RawLandingZone
from core.layout import Layout
from core.settings import Settings

ELI = "DU/1964/93"
ACT = "pl:kc"
META_PATH = "/eli/acts/DU/1964/93"
PDF_PATH = "/eli/acts/DU/1964/93/text/U/D19640093Lj.pdf"
OLD, NEW = "2024-12-19", "2025-11-13"


def api_metadata(version: str = NEW, **changes: Any) -> dict[str, Any]:
    """Shaped like GET /eli/acts/DU/1964/93 (plus one unknown field that must be kept)."""
    data: dict[str, Any] = {
        "ELI": ELI, "address": "WDU19640160093", "publisher": "DU", "year": 1964, "pos": 93,
        "title": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny",
        "displayAddress": "Dz.U. 1964 nr 16 poz. 93", "announcementDate": "1964-05-18",
        "promulgation": "1964-05-18", "changeDate": f"{version}T10:22:31",
        "textPDF": True, "textHTML": False, "status": "obowiązujący", "inForce": "IN_FORCE",
        "entryIntoForce": "1965-01-01", "type": "Ustawa", "keywords": [], "references": {},
        "texts": [{"fileName": "D19640093Lj.pdf", "type": "U"}],
        "someFutureField": {"kept": True},
    }
    data.update(changes)
    return data


@pytest.fixture(scope="module")
def pdfs(sample_dir: Path) -> dict[str, bytes]:
    return {v: (sample_dir / "pl" / "isap" / f"D19640093Lj_{v}.pdf").read_bytes()
            for v in (OLD, NEW)}


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def source(httpserver: HTTPServer, tmp_home: Layout, sleeps: list[float]) -> HttpEliSource:
    client = PoliteHttpClient(user_agent="lexpipe-tests/0", timeout_s=5.0, max_retries=2,
                              backoff_base_s=0.5, backoff_max_s=8.0, min_interval_s=0.0,
                              cache_path=tmp_home.raw / "http_cache.json", sleep=sleeps.append,
                              rng=random.Random(1))
    return HttpEliSource(client, httpserver.url_for("/eli"))


@pytest.fixture
def landing(tmp_home: Layout) -> RawLandingZone:
    return RawLandingZone(tmp_home.raw)


def landed_files(landing: RawLandingZone) -> list[Path]:
    base = landing.root / "sha256"
    return sorted(p for p in base.rglob("*") if p.is_file()) if base.exists() else []


def serve_metadata(httpserver: HTTPServer, data: dict[str, Any] | None = None) -> None:
    httpserver.expect_request(META_PATH).respond_with_json(data or api_metadata())


def sequence(*responses: Response) -> Callable[[Request], Response]:
    calls = {"n": 0}

    def handler(request: Request) -> Response:
        calls["n"] += 1
        return responses[min(calls["n"], len(responses)) - 1]

    return handler


def pdf_requests(httpserver: HTTPServer) -> list[Request]:
    return [req for req, _ in httpserver.log if req.path == PDF_PATH]


# -- happy path ---------------------------------------------------------------------------------


def test_metadata_parsed_and_raw_kept(httpserver: HTTPServer, source: HttpEliSource) -> None:
    serve_metadata(httpserver)
    meta = source.metadata(ELI)
    assert (meta.eli, meta.version, meta.text_pdf, meta.in_force, meta.status) == (
        ELI, NEW, True, "IN_FORCE", "obowiązujący")
    assert meta.change_date == f"{NEW}T10:22:31" and meta.unified_pdf_file == "D19640093Lj.pdf"
    assert meta.raw["someFutureField"] == {"kept": True}
    assert httpserver.log[0][0].headers["Accept"] == "application/json"


def test_download_happy_path_lands_real_pdf(httpserver: HTTPServer, source: HttpEliSource,
                                            landing: RawLandingZone,
                                            pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_data(
        pdfs[NEW], content_type="application/pdf",
        headers={"ETag": '"u-2025"', "Set-Cookie": "tracking=1"})
    landed = download_act(source, landing, ELI, ACT)

    sha = hashlib.sha256(pdfs[NEW]).hexdigest()
    assert landed.created and landed.sha256 == sha and landed.size == len(pdfs[NEW])
    assert landed.path == landing.root / "sha256" / sha[:2] / f"{sha}.pdf"
    assert landed.path.read_bytes() == pdfs[NEW] and landing.verify(sha)
    side = json.loads(landed.sidecar_path.read_text())
    assert side["source_url"] == httpserver.url_for(PDF_PATH)
    assert (side["act_id"], side["version"], side["sha256"], side["size"]) == (
        ACT, NEW, sha, len(pdfs[NEW]))
    assert side["headers"]["etag"] == '"u-2025"'
    assert side["headers"]["content-type"] == "application/pdf"
    assert "set-cookie" not in side["headers"] and side["retrieved_at"].endswith("+00:00")
    assert landed_files(landing) == sorted([landed.path, landed.sidecar_path])


def test_falls_back_to_text_pdf_without_unified_text(httpserver: HTTPServer,
                                                     source: HttpEliSource,
                                                     landing: RawLandingZone,
                                                     pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver, api_metadata(texts=[{"fileName": "D19640093.pdf", "type": "O"}]))
    httpserver.expect_request("/eli/acts/DU/1964/93/text.pdf").respond_with_data(pdfs[OLD])
    landed = download_act(source, landing, ELI, ACT)
    assert landed.source_url.endswith("/acts/DU/1964/93/text.pdf")


# -- conditional / idempotent -------------------------------------------------------------------


def etag_pdf(body: bytes, etag: str) -> Callable[[Request], Response]:
    def handler(request: Request) -> Response:
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        return Response(body, content_type="application/pdf", headers={"ETag": etag})
    return handler


def test_second_download_304_writes_nothing(httpserver: HTTPServer, source: HttpEliSource,
                                            landing: RawLandingZone,
                                            pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_handler(etag_pdf(pdfs[NEW], '"u-2025"'))
    first = download_act(source, landing, ELI, ACT)
    snapshot = {p: p.stat().st_mtime_ns for p in landed_files(landing)}

    second = download_act(source, landing, ELI, ACT)
    reqs = pdf_requests(httpserver)
    assert len(reqs) == 2 and reqs[1].headers["If-None-Match"] == '"u-2025"'
    assert httpserver.log[-1][1].status_code == 304
    assert not second.created and second.sha256 == first.sha256
    assert {p: p.stat().st_mtime_ns for p in landed_files(landing)} == snapshot


def test_304_but_bytes_missing_refetches(httpserver: HTTPServer, source: HttpEliSource,
                                         tmp_path: Path, landing: RawLandingZone,
                                         pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_handler(etag_pdf(pdfs[NEW], '"u-2025"'))
    download_act(source, landing, ELI, ACT)
    fresh = RawLandingZone(tmp_path / "other_raw")  # same HTTP cache, empty landing zone
    landed = download_act(source, fresh, ELI, ACT)
    assert landed.created and landed.path.read_bytes() == pdfs[NEW]
    reqs = pdf_requests(httpserver)
    assert [("If-None-Match" in r.headers) for r in reqs] == [False, True, False]


def test_identical_bytes_downloaded_twice_one_file(httpserver: HTTPServer, source: HttpEliSource,
                                                   landing: RawLandingZone,
                                                   pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_data(pdfs[NEW])  # no validators → 200 twice
    a = download_act(source, landing, ELI, ACT)
    files = landed_files(landing)
    b = download_act(source, landing, ELI, ACT)
    assert len(pdf_requests(httpserver)) == 2
    assert a.created and not b.created and a.sha256 == b.sha256
    assert landed_files(landing) == files and len(files) == 2  # one blob + one sidecar


def test_new_version_lands_new_file(httpserver: HTTPServer, source: HttpEliSource,
                                    landing: RawLandingZone, pdfs: dict[str, bytes]) -> None:
    httpserver.expect_request(META_PATH).respond_with_handler(sequence(
        Response(json.dumps(api_metadata(OLD)), content_type="application/json"),
        Response(json.dumps(api_metadata(NEW)), content_type="application/json")))
    httpserver.expect_request(PDF_PATH).respond_with_handler(sequence(
        Response(pdfs[OLD], headers={"ETag": '"a"'}), Response(pdfs[NEW], headers={"ETag": '"b"'})))
    old = download_act(source, landing, ELI, ACT)
    new = download_act(source, landing, ELI, ACT)
    assert (old.version, new.version) == (OLD, NEW) and old.sha256 != new.sha256
    assert landing.find(ACT, OLD) == replace(old, created=False)
    assert len(landed_files(landing)) == 4


# -- failures: nothing lands --------------------------------------------------------------------


def test_429_retry_after_then_success(httpserver: HTTPServer, source: HttpEliSource,
                                      landing: RawLandingZone, sleeps: list[float],
                                      pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_handler(sequence(
        Response("Too Many Requests", status=429, headers={"Retry-After": "4"}),
        Response(pdfs[NEW], content_type="application/pdf")))
    landed = download_act(source, landing, ELI, ACT)
    assert landed.created and sleeps == [4.0] and len(pdf_requests(httpserver)) == 2


def test_500_until_exhausted_nothing_landed(httpserver: HTTPServer, source: HttpEliSource,
                                            landing: RawLandingZone, sleeps: list[float]) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_data("Internal Server Error", status=500)
    with pytest.raises(HttpFetchError) as err:
        download_act(source, landing, ELI, ACT)
    assert err.value.status == 500 and err.value.attempts == 3 and len(sleeps) == 2
    assert PDF_PATH in str(err.value)
    assert landed_files(landing) == []


def test_truncated_pdf_nothing_landed(httpserver: HTTPServer, source: HttpEliSource,
                                      landing: RawLandingZone, pdfs: dict[str, bytes]) -> None:
    serve_metadata(httpserver)

    def cut(request: Request) -> Response:
        resp = Response(pdfs[NEW][: len(pdfs[NEW]) // 2], content_type="application/pdf")
        resp.headers["Content-Length"] = str(len(pdfs[NEW]))  # announces the full size
        return resp

    httpserver.expect_request(PDF_PATH).respond_with_handler(cut)
    with pytest.raises(HttpFetchError) as err:
        download_act(source, landing, ELI, ACT)
    assert "RemoteProtocolError" in err.value.reason and err.value.attempts == 3
    assert landed_files(landing) == []


@pytest.mark.parametrize("body, problem", [
    (b"<!DOCTYPE html><html><body>Przerwa techniczna</body></html>", "not a PDF"),
    (None, "%%EOF"),  # a PDF cut short but with a consistent Content-Length
])
def test_invalid_pdf_body_nothing_landed(httpserver: HTTPServer, source: HttpEliSource,
                                         landing: RawLandingZone, pdfs: dict[str, bytes],
                                         body: bytes | None, problem: str) -> None:
    serve_metadata(httpserver)
    httpserver.expect_request(PDF_PATH).respond_with_data(
        body if body is not None else pdfs[NEW][:-4096])
    with pytest.raises(InvalidPdfError, match=problem) as err:
        download_act(source, landing, ELI, ACT)
    assert err.value.url == httpserver.url_for(PDF_PATH) and err.value.url in str(err.value)
    assert landed_files(landing) == []


@pytest.mark.parametrize("body, problem", [
    ("<html>not json</html>", "not JSON"),
    (json.dumps({"title": "no ELI here"}), "lacks the 'ELI'"),
    (json.dumps(api_metadata(ELI="DU/1964/94")), "metadata says ELI"),
])
def test_bad_metadata_clear_error(httpserver: HTTPServer, source: HttpEliSource,
                                  landing: RawLandingZone, body: str, problem: str) -> None:
    httpserver.expect_request(META_PATH).respond_with_data(body, content_type="application/json")
    with pytest.raises(InvalidMetadataError, match=problem) as err:
        download_act(source, landing, ELI, ACT)
    assert err.value.url == httpserver.url_for(META_PATH)
    assert pdf_requests(httpserver) == [] and landed_files(landing) == []


def test_http_source_cannot_serve_old_versions(httpserver: HTTPServer,
                                               source: HttpEliSource) -> None:
    serve_metadata(httpserver)
    assert source.available_versions(ELI) == [NEW]
    with pytest.raises(VersionUnavailableError, match="current text state"):
        source.fetch_pdf(ELI, OLD)


# -- offline sample source ----------------------------------------------------------------------


def test_sample_source_serves_both_versions(sample_dir: Path, pdfs: dict[str, bytes]) -> None:
    src = SampleEliSource(sample_dir)
    assert isinstance(src, EliSource)
    assert src.available_versions(ELI) == [OLD, NEW]
    latest = src.fetch_pdf(ELI)
    assert latest.version == NEW and latest.content == pdfs[NEW]
    assert latest.url.startswith("file://") and latest.url.endswith(f"D19640093Lj_{NEW}.pdf")
    assert src.fetch_pdf(ELI, OLD).content == pdfs[OLD]
    meta = src.metadata(ELI)
    assert meta.change_date == f"{NEW}T00:00:00" and meta.version == NEW
    assert meta.unified_pdf_file == "D19640093Lj.pdf" and meta.raw["address"] == "WDU19640160093"
    assert src.metadata(ELI, OLD).change_date == f"{OLD}T00:00:00"


def test_sample_source_restriction_replays_history(sample_dir: Path,
                                                   pdfs: dict[str, bytes]) -> None:
    step1 = SampleEliSource(sample_dir, versions=[OLD])
    assert step1.available_versions(ELI) == [OLD]
    assert step1.fetch_pdf(ELI).content == pdfs[OLD] and step1.metadata(ELI).version == OLD
    with pytest.raises(VersionUnavailableError, match="not visible"):
        step1.fetch_pdf(ELI, NEW)
    step2 = step1.restricted([OLD, NEW])
    assert step2.fetch_pdf(ELI).version == NEW
    assert SampleEliSource(sample_dir, up_to="2025-01-31").available_versions(ELI) == [OLD]
    assert SampleEliSource(sample_dir, up_to=NEW).available_versions(ELI) == [OLD, NEW]
    with pytest.raises(ValueError, match="1999-01-01"):
        SampleEliSource(sample_dir, versions=["1999-01-01"])
    with pytest.raises(KeyError):
        SampleEliSource(sample_dir).available_versions("DU/2000/1")


def test_download_from_sample_is_idempotent(sample_dir: Path, landing: RawLandingZone) -> None:
    first = download_act(SampleEliSource(sample_dir, versions=[OLD]), landing, ELI, ACT)
    again = download_act(SampleEliSource(sample_dir, versions=[OLD]), landing, ELI, ACT)
    newer = download_act(SampleEliSource(sample_dir), landing, ELI, ACT)
    assert first.created and not again.created and newer.created
    assert (first.version, newer.version) == (OLD, NEW)
    assert len(landed_files(landing)) == 4


def test_known_acts_and_settings_factory(sample_dir: Path, tmp_home: Layout,
                                         landing: RawLandingZone) -> None:
    assert eli_for_act(ACT) == ELI and registry().get(ACT).citation == "k.c."
    with pytest.raises(ValueError, match="is ELI"):
        download_act(SampleEliSource(sample_dir), landing, "DU/1964/94", ACT)
    offline = eli_source_from_settings(Settings(offline=True, sample_dir=sample_dir), tmp_home.raw)
    assert isinstance(offline, SampleEliSource)
    online = eli_source_from_settings(Settings(offline=False), tmp_home.raw)
    assert isinstance(online, HttpEliSource) and online.base_url == "https://api.sejm.gov.pl/eli"
    online.client.close()
