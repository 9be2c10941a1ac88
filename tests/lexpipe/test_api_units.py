"""``/units/{unit_id}?as_of=`` and ``/units/{unit_id}/history`` over the real published k.c. versions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app
from pipelines.reads import ReadService

OLD_709_2 = "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności."
NEW_709_2 = "Umowa leasingu wymaga zachowania formy dokumentowej."


@pytest.fixture(scope="module")
def reads(corpus_home: Path) -> ReadService:
    return ReadService.at(corpus_home)


@pytest.fixture(scope="module")
def client(reads: ReadService) -> TestClient:
    return TestClient(create_app(reads=reads))


def unit(client: TestClient, unit_id: str, as_of: str | None = None, status: int = 200) -> dict:
    r = client.get(f"/units/{unit_id}", params={"as_of": as_of} if as_of else {})
    assert r.status_code == status, r.text
    return r.json()


@pytest.mark.parametrize("as_of,version,next_version,text", [
    (OLD, OLD, NEW, OLD_709_2), ("2025-06-30", OLD, NEW, OLD_709_2), (NEW, NEW, None, NEW_709_2),
    ("2031-01-01", NEW, None, NEW_709_2),
])
def test_a_changed_article_in_each_version_and_between(client, as_of, version, next_version, text):
    u = unit(client, "pl:kc:art:709^2", as_of)
    assert (u["version"], u["next_version"], u["newest_version"], u["covered"]) == (version, next_version, NEW, True)
    assert (u["text"], u["status"], u["level"], u["as_of"]) == (text, "in_force", "article", as_of)
    assert [p["id"] for p in u["path"]] == ["pl:kc:book:TRZECIA", "pl:kc:book:TRZECIA:title:XVII^1"]


def test_the_response_is_the_read_layer_answer(client, reads):
    for unit_id in ("pl:kc:art:647^1", "pl:kc:art:42:par:4:pt:1", "pl:kc:book:PIERWSZA:title:II"):
        assert unit(client, unit_id, "2025-12-04") == dataclasses.asdict(reads.unit(unit_id, "2025-12-04"))


def test_a_superscript_id_percent_encoded_or_not(client):
    raw = client.get("/units/pl:kc:art:22^1", params={"as_of": NEW})
    encoded = client.get("/units/pl%3Akc%3Aart%3A22%5E1", params={"as_of": NEW})
    assert raw.status_code == encoded.status_code == 200 and raw.json() == encoded.json()
    assert raw.json()["text"].startswith("Za konsumenta uważa się osobę fizyczną")


def test_a_paragraph_a_point_and_a_letter(client):
    par = unit(client, "pl:kc:art:709^13:par:2", "2025-06-30")
    assert (par["level"], par["number"], par["version"]) == ("paragraph", "2", OLD)
    assert "wyznaczyć na piśmie korzystającemu" in par["text"]
    assert "korzystającemu, w formie dokumentowej," in unit(client, "pl:kc:art:709^13:par:2", NEW)["text"]
    pt = unit(client, "pl:kc:art:42:par:4:pt:1", NEW)
    assert (pt["level"], pt["article_id"]) == ("point", "pl:kc:art:42")
    assert pt["text"].startswith("1) nabycie i zbycie przedsiębiorstwa")
    lit = unit(client, "pl:kc:art:1031^2:par:2:pt:1:lit:a", NEW)
    assert (lit["level"], lit["text"]) == ("letter", "a) dane, o których mowa w art. 1031^1 § 3,")


def test_a_repealed_unit(client):
    art = unit(client, "pl:kc:art:2", NEW)
    assert (art["status"], art["status_note"], art["text"]) == ("repealed", "(uchylony)", "(uchylony)")
    assert unit(client, "pl:kc:art:8:par:2", OLD)["status"] == "repealed"


def test_an_announced_wording_with_its_date(client):
    before, on = unit(client, "pl:kc:art:647^1:par:1", "2025-12-03"), unit(client, "pl:kc:art:647^1:par:1", "2025-12-04")
    assert before["pending_effective_date"] == on["pending_effective_date"] == "2025-12-04"
    assert (before["pending_applies"], on["pending_applies"]) == (False, True)
    assert "chyba że inwestor złożył" in on["text_pending"] and "chyba że w ciągu trzydziestu dni" in on["text"]
    added = unit(client, "pl:kc:art:647^1:par:1^1", "2025-12-04")
    assert (added["status"], added["text"]) == ("pending", None) and added["text_pending"].startswith("§ 1^1.")


def test_history_of_a_unit_that_changed(client, corpus_home):
    import pyarrow.parquet as pq

    diff = pq.read_table(corpus_home / "corpus" / "pl" / "kc" / NEW / f"diff_from_{OLD}.parquet").to_pylist()
    changed = [r["article_id"] for r in diff if r["change"] == "changed"]
    assert "pl:kc:art:709^2" in changed
    for article_id in changed:  # every article the published diff calls changed
        r = client.get(f"/units/{article_id}/history")
        assert r.status_code == 200, r.text
        [c] = r.json()["changes"]
        row = next(d for d in diff if d["article_id"] == article_id)
        assert (c["from_version"], c["to_version"], c["change"], c["word_diff"]) == (OLD, NEW, "changed",
                                                                                   row["unified_diff"])
    [c] = client.get("/units/pl:kc:art:709^2/history").json()["changes"]
    assert c["word_diff"] == ("Umowa leasingu [-powinna być zawarta na piśmie pod rygorem nieważności.-] "
                              "{+wymaga zachowania formy dokumentowej.+}")
    assert (c["old_text"], c["new_text"], c["source"]) == (OLD_709_2, NEW_709_2, "stored")


def test_history_of_a_paragraph_and_of_an_unchanged_unit(client):
    h = client.get("/units/pl:kc:art:709^13:par:2/history").json()
    [c] = h["changes"]
    assert c["source"] == "computed" and "[-na piśmie korzystającemu-] {+korzystającemu, w formie dokumentowej,+}" \
        in c["word_diff"]
    same = client.get("/units/pl:kc:art:22^1/history").json()
    assert (same["changes"], same["present_in"], same["held_versions"]) == ([], [OLD, NEW], [OLD, NEW])


@pytest.mark.parametrize("path,status,fragment", [
    ("/units/pl:kc:art:99999?as_of=2025-01-01", 404, "no held version of pl:kc"),
    ("/units/pl:kc:art:415:par:1", 404, "unknown unit"),  # art. 415 k.c. has no §
    ("/units/pl:xx:art:1", 404, "unknown act 'pl:xx'"),
    ("/units/nonsense", 422, "unit_id must be a unit id like pl:kc:art:415"),
    ("/units/pl:kc:art:647^1:par:1^1?as_of=2025-01-01", 404, "it is in version(s) 2025-11-13"),
    ("/units/pl:kc:art:1?as_of=2024-12-18", 404, "before the oldest held version of pl:kc (2024-12-19)"),
    ("/units/pl:kc:art:1?as_of=1900-01-01", 404, "before the oldest held version"),
    ("/units/pl:kc:art:1?as_of=2024-13-45", 422, "as_of must be a real date"),
    ("/units/pl:kc:art:1?as_of=2025-02-29", 422, "as_of must be a real date"),
    ("/units/pl:kc:art:1?as_of=31.12.2024", 422, "as_of must be a date YYYY-MM-DD"),
    ("/units/pl:kc:art:1?as_of=20241231", 422, "as_of must be a date YYYY-MM-DD"),
    ("/units/pl:kc:art:99999/history", 404, "no held version of pl:kc"),
    ("/units/pl:yy:art:1/history", 404, "unknown act"),
])
def test_bad_input_is_404_or_422_with_a_message(client, path, status, fragment):
    r = client.get(path)
    assert r.status_code == status and fragment in r.json()["detail"], r.text


def test_an_empty_as_of_is_today_as_documented(client):
    """The issue: ``as_of=`` was 422 though the docs say the date defaults to today."""
    empty, absent = client.get("/units/pl:kc:art:1?as_of="), client.get("/units/pl:kc:art:1")
    assert empty.status_code == absent.status_code == 200 and empty.json() == absent.json()


def test_refusals_have_the_one_shape(client):
    for path, status, field in (("/units/pl:kc:art:1?as_of=2025-02-30", 422, "as_of"),
                                ("/units/pl:kc:art:99999", 404, "unit_id"), ("/units/pl:zz:art:1", 404, "act"),
                                ("/units/pl:kc:art:1?as_of=1990-01-01", 404, "as_of")):
        body = client.get(path).json()
        assert body == {"status": status, "field": field, "message": body["message"], "detail": body["message"]}
