"""The court list: ``/courts/`` read whole by ``limit``/``offset`` into one snapshot, all or nothing.

Why a module of its own: it is a different walk from the case sync (a short list paged by
offset, not by cursor, and replaced as a whole only when every page was read and the list did
not move under the offsets); it shares only the client, the landing zone, validation and
quarantine. What the live ``/courts/`` view does is in the ``sync`` module docstring.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Callable

from connectors.case_store import CaseStore
from connectors.http import redact_url
from connectors.landing import RawLandingZone
from connectors.openlegaldata.client import OpenLegalDataApi
from connectors.openlegaldata.errors import OpenLegalDataError, PageFormatError
from connectors.openlegaldata.pages import PAGE_SUFFIX, parse_page
from connectors.openlegaldata.records import (page_quarantine_row, record_quarantine_row,
                                              validate_court)
from connectors.openlegaldata.settings import COURTS_ACT_ID

log = logging.getLogger(__name__)


def sync_court_list(api: OpenLegalDataApi, store: CaseStore, landing: RawLandingZone, *,
                    now: Callable[[], datetime], max_pages: int) -> int:
    """Fetch the whole court list; replace the snapshot only when every page was read.

    ``/courts/`` pages by ``limit``/``offset`` (see ``OpenLegalDataApi.courts_url``): the
    first request asks ``limit=page_size``, later ones follow the server's ``next`` link
    (checked by ``follow_courts_link``) until it is null. All or nothing: the snapshot is
    replaced only when the pages' ``count`` stayed the same, the records read add up to it
    and no court came twice — otherwise the list changed under the offsets (a court added,
    removed or renamed moves the others across pages), a court may have been skipped, and
    the sync stops with ``OpenLegalDataError`` leaving the previous snapshot in place. Bad
    courts are quarantined (kind ``court``); an unreadable page (kind ``page``) stops the sync.
    Returns the number of courts written.
    """
    rows: dict[int, dict[str, Any]] = {}
    offset, count = 0, None
    url = api.courts_url(0)
    for request_no in range(1, max_pages + 1):
        body, headers = api.get(url)
        fetched_at = now()
        landed = landing.store(body, source_url=url, act_id=COURTS_ACT_ID,
                               version=f"offset={offset}", headers=headers, suffix=PAGE_SUFFIX)
        try:
            parsed = parse_page(body)
            if parsed.count is None:
                raise PageFormatError("no integer 'count' in the page; the court list cannot be "
                                      "checked for completeness without it")
        except PageFormatError as exc:
            store.write_quarantine([page_quarantine_row(body, url, request_no, landed.sha256,
                                                        str(exc), now())])
            raise PageFormatError(f"{redact_url(url)}: {exc}") from None
        if count is not None and parsed.count != count:
            raise OpenLegalDataError(
                f"{redact_url(url)}: the court list changed while paging (count {count}, now "
                f"{parsed.count}); the courts snapshot was not replaced, run the sync again")
        count = parsed.count
        refused = []
        for rec in parsed.records:
            row, reasons = ((None, [f"not valid JSON: {rec.error}"]) if rec.error
                            else validate_court(rec.obj))
            if row is None:
                refused.append(record_quarantine_row("court", rec, reasons, url, request_no,
                                                     landed.sha256, now()))
            elif row["court_id"] in rows:
                raise OpenLegalDataError(
                    f"{redact_url(url)}: court {row['court_id']} was already read on an earlier "
                    "page: the list moved under the offsets, so another court may have been "
                    "skipped; the courts snapshot was not replaced, run the sync again")
            else:
                rows[row["court_id"]] = {**row, "source_url": url, "raw_sha256": landed.sha256,
                                         "fetched_at": fetched_at}
        store.write_quarantine(refused)
        offset += len(parsed.records)
        if parsed.next_url is None:
            break
        if not parsed.records:
            raise OpenLegalDataError(f"{redact_url(url)}: an empty page with a next link "
                                     f"({redact_url(parsed.next_url)}); the walk would not advance")
        url = api.follow_courts_link(parsed.next_url, offset)
    else:
        raise OpenLegalDataError(f"court list longer than {max_pages} pages of "
                                 f"{api.params.page_size}")
    if offset != count:
        raise OpenLegalDataError(
            f"{redact_url(url)}: {offset} court record(s) read, but the list counts {count}; "
            "the courts snapshot was not replaced, run the sync again")
    store.write_courts(sorted(rows.values(), key=lambda r: r["court_id"]))
    log.info("openlegaldata courts: %d court(s) in %d page(s), %d quarantined", len(rows),
             request_no, offset - len(rows))
    return len(rows)
