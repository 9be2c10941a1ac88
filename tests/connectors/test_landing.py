"""RawLandingZone: content addressing, immutability, sidecars, lookups."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from connectors.landing import LandingError, RawLandingZone
from core.layout import Layout

PDF = b"%PDF-1.7\nhello\n%%EOF\n"
URL = "https://api.sejm.gov.pl/eli/acts/DU/1964/93/text/U/D19640093Lj.pdf"


class Ticker:
    """Deterministic retrieved_at: each call is one minute later."""

    def __init__(self) -> None:
        self.t = datetime(2025, 11, 20, 8, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.t += timedelta(minutes=1)
        return self.t


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture
def zone(tmp_home: Layout) -> RawLandingZone:
    return RawLandingZone(tmp_home.raw, now=Ticker())


def test_store_writes_blob_and_sidecar(zone: RawLandingZone) -> None:
    sha = hashlib.sha256(PDF).hexdigest()
    landed = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13",
                        headers={"Content-Type": "application/pdf", "ETag": '"x"',
                                 "Set-Cookie": "s=1", "Authorization": "Bearer t"})
    assert landed.created and landed.sha256 == sha and landed.size == len(PDF)
    assert landed.path == zone.root / "sha256" / sha[:2] / f"{sha}.pdf"
    assert landed.path.read_bytes() == PDF
    assert not os.access(landed.path, os.W_OK) or os.geteuid() == 0  # read-only blob
    side = json.loads(landed.sidecar_path.read_text())
    assert landed.sidecar_path == landed.path.with_suffix(".json")
    assert side["sha256"] == sha and side["size"] == len(PDF)
    assert (side["source_url"], side["act_id"], side["version"]) == (URL, "pl:kc", "2025-11-13")
    assert datetime.fromisoformat(side["retrieved_at"]).utcoffset() == timedelta(0)
    assert side["headers"] == {"content-type": "application/pdf", "etag": '"x"'}
    assert all_files(zone.root) == sorted([landed.path, landed.sidecar_path])  # no temp files


def test_identical_bytes_stored_once(zone: RawLandingZone) -> None:
    first = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in all_files(zone.root)}
    again = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert not again.created and again.sha256 == first.sha256
    assert again.retrieved_at == first.retrieved_at  # original provenance
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in all_files(zone.root)}
    assert after == before


def test_same_bytes_new_version_adds_sighting_keeps_blob(zone: RawLandingZone) -> None:
    first = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2024-12-19")
    blob_mtime = first.path.stat().st_mtime_ns
    again = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert not again.created and again.version == "2025-11-13"
    assert first.path.stat().st_mtime_ns == blob_mtime
    side = zone.read_sidecar(first.sha256)
    assert side["version"] == "2024-12-19"  # original provenance untouched
    assert [s["version"] for s in side["sightings"]] == ["2025-11-13"]
    assert zone.find("pl:kc", "2025-11-13").sha256 == first.sha256  # type: ignore[union-attr]
    assert zone.find("pl:kc", "2024-12-19").version == "2024-12-19"  # type: ignore[union-attr]
    zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert len(zone.read_sidecar(first.sha256)["sightings"]) == 1  # not duplicated


def test_get_find_verify(zone: RawLandingZone) -> None:
    a = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2024-12-19")
    b = zone.store(PDF + b"\n", source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert zone.get(a.sha256) == replace(a, created=False)
    assert zone.get("0" * 64) is None
    assert zone.find("pl:kc", "2025-11-13").sha256 == b.sha256  # type: ignore[union-attr]
    assert zone.find("pl:kc", "1999-01-01") is None
    assert zone.find("pl:other", "2025-11-13") is None
    assert zone.verify(a.sha256) and zone.verify(b.sha256)
    assert not zone.verify("f" * 64)


def test_find_prefers_latest_retrieval(zone: RawLandingZone) -> None:
    zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    newer = zone.store(PDF + b"re-rendered", source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert zone.find("pl:kc", "2025-11-13").sha256 == newer.sha256  # type: ignore[union-attr]


def test_verify_detects_tampering(zone: RawLandingZone) -> None:
    landed = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    landed.path.chmod(0o644)
    landed.path.write_bytes(PDF.replace(b"hello", b"HELLO"))
    assert not zone.verify(landed.sha256)


def test_missing_blob_with_sidecar_is_an_error(zone: RawLandingZone) -> None:
    landed = zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    landed.path.unlink()
    with pytest.raises(LandingError, match="missing"):
        zone.store(PDF, source_url=URL, act_id="pl:kc", version="2025-11-13")
    assert not zone.verify(landed.sha256)


def test_custom_suffix_and_bad_suffix(zone: RawLandingZone) -> None:
    landed = zone.store(b"<html/>", source_url=URL, act_id="pl:kc", version="v", suffix=".html")
    assert landed.path.name.endswith(".html") and zone.get(landed.sha256).path == landed.path  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        zone.store(b"x", source_url=URL, act_id="pl:kc", version="v", suffix="../evil")


def test_json_suffix_is_refused_because_it_is_the_sidecar(zone: RawLandingZone) -> None:
    with pytest.raises(ValueError, match="reserved for the provenance sidecar"):
        zone.store(b'{"a": 1}', source_url=URL, act_id="de:oldp", version="v", suffix=".JSON")
    assert not [f for f in zone.root.rglob("*") if f.is_file()]  # nothing written
