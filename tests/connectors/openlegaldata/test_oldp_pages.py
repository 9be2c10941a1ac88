"""Page parsing: a page broken by one record is split record by record; a broken envelope is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.openlegaldata import PageFormatError, parse_page


def test_parse_page_splits_a_page_broken_by_one_record(oldp_dir: Path) -> None:
    bad = (oldp_dir / "invalid_cases_cannot_read_json_with_missing_escaping.json").read_text()
    good = json.dumps({"id": 1, "content": 'tricky "}], [{" text \\" here'})
    body = ('{"count": 3, "next": "http://x/api/cases/?page=2", "previous": null, '
            f'"results": [{good}, {bad}, [1, {{"a": "]"}}]]}}').encode()
    page = parse_page(body)
    assert page.salvaged and page.next_url == "http://x/api/cases/?page=2" and page.count == 3
    assert [r.error is None for r in page.records] == [True, False, True]
    assert page.records[0].obj == json.loads(good)
    assert page.records[1].text == bad.strip() and "Invalid \\escape" in page.records[1].error
    assert page.records[2].obj == [1, {"a": "]"}]

    for garbage in (b"<html>502</html>", b'{"count": 1, "results": [{"id": 1}', b'{"next": 5}',
                    b"\xff\xfe{}", b'{"results": {"id": 1}}'):
        with pytest.raises(PageFormatError):
            parse_page(garbage)
