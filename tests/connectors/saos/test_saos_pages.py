"""Dump-page reading: a real page is read whole, a page broken by one record is split record by
record, and a page whose envelope cannot be read is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.saos import PageFormatError, parse_dump_page


def test_a_real_dump_page_is_read_with_its_links_and_every_record(saos_dir: Path) -> None:
    body = (saos_dir / "judgments-page-347.json").read_bytes()
    page = parse_dump_page(body)
    published = json.loads(body)
    assert not page.salvaged and len(page.records) == 100
    assert [r.obj for r in page.records] == published["items"]
    assert page.self_url == "https://www.saos.org.pl/api/dump/judgments?pageSize=100&pageNumber=347"
    assert page.next_url == "https://www.saos.org.pl/api/dump/judgments?pageSize=100&pageNumber=348"
    assert page.links["prev"].endswith("pageNumber=346")
    assert page.query_template is not None and page.query_template["pageSize"]["value"] == 100
    first = page.records[0]
    assert json.loads(first.text) == first.obj and first.obj["id"] == 283463  # exact text kept


def test_one_invalid_record_costs_only_itself() -> None:
    good = json.dumps({"id": 1, "textContent": 'tricky "}], [{" text \\" here'})
    bad = '{"id": 2, "textContent": "<p>z \\q akt</p>"}'  # \q: an invalid JSON escape
    body = ('{"links": [{"rel": "self", "href": "http://x/api/dump/judgments?pageSize=10&pageNumber=0"}], '
            f'"items": [{good}, {bad}, [1, {{"a": "]"}}]], "queryTemplate": {{}}, "info": null}}').encode()
    page = parse_dump_page(body)
    assert page.salvaged and page.next_url is None and page.self_url is not None
    assert [r.error is None for r in page.records] == [True, False, True]
    assert page.records[0].obj == json.loads(good)
    assert page.records[1].text == bad and "Invalid \\escape" in (page.records[1].error or "")
    assert page.records[2].obj == [1, {"a": "]"}]


@pytest.mark.parametrize("body", [
    b"<html><body>502 Bad Gateway</body></html>",  # an HTML error page served with 200
    b'{"links": [], "items": [{"id": 1}',  # cut short
    b'{"links": [], "info": null}',  # no items
    b'{"links": [], "items": {"id": 1}}',  # items not an array
    b'{"links": {"next": "x"}, "items": []}',  # links not a list
    b'{"links": [{"rel": "next"}], "items": []}',  # a link without href
    b"\xff\xfe{}",  # not UTF-8
])
def test_an_unreadable_envelope_is_refused(body: bytes) -> None:
    with pytest.raises(PageFormatError):
        parse_dump_page(body)
