"""Quarantine rows (``schemas.cases.QUARANTINE``) for refused SAOS records and unreadable pages.

Why a module of its own: ``records.py`` decides *whether* a record is a judgment (a pure function
of the parsed object); this module turns a refusal into evidence — the record's exact text as
received, every reason, the page URL and the landed page's hash — so a quarantined record can
always be traced back to the byte-identical page in the raw landing zone.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from connectors.saos.pages import RawRecord
from connectors.saos.records import SOURCE

JUDGMENT_KIND = "judgment"
PAGE_KIND = "page"
_PAGE_EXCERPT = 4096
_ID_GUESS = re.compile(r'"id"\s*:\s*(\d+)')


def record_id_of(record: RawRecord) -> str | None:
    """The record's id as text if one can be read (a guess from the text for invalid JSON)."""
    obj = record.obj
    if isinstance(obj, dict):
        value = obj.get("id")
        if isinstance(value, (int, str)) and not isinstance(value, bool) and value != "":
            return str(value)
        return None
    match = _ID_GUESS.search(record.text) if record.error else None
    return match.group(1) if match else None


def record_quarantine_row(rec: RawRecord, reasons: list[str], url: str, page: int,
                          raw_sha: str, quarantined_at: datetime) -> dict[str, Any]:
    """A refused dump record; the same record text is one quarantine row however often read."""
    return {"quarantine_id": hashlib.sha256(f"{JUDGMENT_KIND}\n{rec.text}".encode()).hexdigest(),
            "source": SOURCE, "kind": JUDGMENT_KIND, "record_id": record_id_of(rec),
            "reasons": reasons, "raw_record": rec.text, "source_url": url, "page": page,
            "record_index": rec.index, "raw_sha256": raw_sha, "quarantined_at": quarantined_at}


def page_quarantine_row(body: bytes, url: str, page: int, raw_sha: str, reason: str,
                        quarantined_at: datetime) -> dict[str, Any]:
    """A page whose envelope could not be read: its first 4 KB as evidence (whole body landed)."""
    return {"quarantine_id": hashlib.sha256(f"{PAGE_KIND}\n".encode() + body).hexdigest(),
            "source": SOURCE, "kind": PAGE_KIND, "record_id": None, "reasons": [reason],
            "raw_record": body[:_PAGE_EXCERPT].decode("utf-8", errors="replace"),
            "source_url": url, "page": page, "record_index": None, "raw_sha256": raw_sha,
            "quarantined_at": quarantined_at}
