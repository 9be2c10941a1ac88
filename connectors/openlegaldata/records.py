"""Record validation and quarantine: what an API record must hold to become a CASES or COURTS
row, and the quarantine row (every reason, the record's exact text) when it does not.

Why a module of its own: validation is a pure function of one record (no HTTP, no cursor, no
store), so the rules for schema drift and refusal are read and tested here; the syncs only
decide what to do with the verdict.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date, datetime, timezone
from typing import Any, Iterator, Mapping

from connectors.case_store import CaseStore
from connectors.openlegaldata.pages import RawRecord
from connectors.openlegaldata.settings import SOURCE

_PAGE_EXCERPT = 4096
_CASE_FIELDS = frozenset({"id", "slug", "court", "file_number", "date", "created_date",
                          "updated_date", "type", "ecli", "content"})
_COURT_FIELDS = frozenset({"id", "name", "code", "slug", "court_type", "city", "state",
                           "jurisdiction", "level_of_appeal", "updated_date"})
_ID_GUESS = re.compile(r'"(?:id|pk)"\s*:\s*(\d+)')


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 text → aware UTC datetime; naive values are taken as UTC; anything else → None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def text_or_none(value: Any) -> str | None:
    """Optional text field: strings as sent ('' → None); other scalars as JSON text."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _required_text(obj: Mapping[str, Any], name: str, reasons: list[str]) -> str | None:
    if name not in obj:
        reasons.append(f"{name}: missing")
    elif obj[name] is None:
        reasons.append(f"{name}: null")
    elif not isinstance(obj[name], str):
        reasons.append(f"{name}: expected text, got {type(obj[name]).__name__}")
    elif not obj[name].strip():
        reasons.append(f"{name}: empty")
    else:
        return obj[name]
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _extra(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def validate_case(obj: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """API record → the CASES row fields it determines, or None and every reason it is refused.

    Required: integer ``id``; ``court`` (object with integer ``id``, or a bare integer);
    non-empty ``file_number``; ISO ``date``; ISO ``updated_date``; non-empty ``content``.
    Optional fields with unreadable values become null and keep their value in ``extra_json``.
    """
    if not isinstance(obj, dict):
        return None, [f"record is not a JSON object (got {type(obj).__name__})"]
    reasons: list[str] = []
    extra = _extra(obj, _CASE_FIELDS)

    cid = obj.get("id")
    if "id" not in obj:
        reasons.append("id: missing")
    elif cid is None:
        reasons.append("id: null")
    elif type(cid) is not int or cid <= 0:
        reasons.append(f"id: expected a positive integer, got {_short(cid)}")

    court = obj.get("court")
    court_id: int | None = None
    court_obj: dict[str, Any] | None = None
    if "court" not in obj or court is None:
        reasons.append("court: missing" if "court" not in obj else "court: null")
    elif type(court) is int:
        court_id = court
    elif isinstance(court, dict) and type(court.get("id")) is int:
        court_id, court_obj = court["id"], court
    else:
        reasons.append(f"court: expected an object with an integer 'id' or an integer, "
                       f"got {_short(court)}")

    file_number = _required_text(obj, "file_number", reasons)

    decision_date: date | None = None
    raw_date = _required_text(obj, "date", reasons)
    if raw_date is not None:
        try:
            decision_date = date.fromisoformat(raw_date.strip())
        except ValueError:
            reasons.append(f"date: not an ISO date (YYYY-MM-DD): {_short(raw_date)}")

    updated_raw = _required_text(obj, "updated_date", reasons)
    updated = parse_timestamp(updated_raw) if updated_raw is not None else None
    if updated_raw is not None and updated is None:
        reasons.append(f"updated_date: not an ISO timestamp: {_short(updated_raw)}")

    content = _required_text(obj, "content", reasons)

    if reasons:
        return None, reasons

    created = parse_timestamp(obj.get("created_date"))
    if obj.get("created_date") not in (None, "") and created is None:
        extra["created_date"] = obj["created_date"]
    row = {
        "source": SOURCE,
        "case_id": cid,
        "slug": text_or_none(obj.get("slug")),
        "court_id": court_id,
        "court_name": text_or_none(court_obj.get("name")) if court_obj else None,
        "court_slug": text_or_none(court_obj.get("slug")) if court_obj else None,
        "court_jurisdiction": text_or_none(court_obj.get("jurisdiction")) if court_obj else None,
        "court_level_of_appeal": text_or_none(court_obj.get("level_of_appeal")) if court_obj else None,
        "court_json": (json.dumps(court_obj, ensure_ascii=False, sort_keys=True)
                       if court_obj else None),
        "file_number": file_number,
        "date": decision_date,
        "created_date": created,
        "updated_date": updated,
        "updated_date_raw": updated_raw,
        "type": text_or_none(obj.get("type")),
        "ecli": text_or_none(obj.get("ecli")),
        "content": content,
        "content_sha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),  # type: ignore[union-attr]
        "record_sha256": record_sha256(obj),
        "extra_json": json.dumps(extra, ensure_ascii=False, sort_keys=True),
    }
    return row, []


def record_sha256(obj: Any) -> str:
    """Hash of the record as sent, independent of key order and whitespace.

    Covers every field (not just ``updated_date`` + content): a server-side bulk ``update()``
    changes fields without touching Django's ``auto_now`` ``updated_date``."""
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def validate_court(obj: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """API court → COURTS row fields, or None and reasons (required: integer id, name)."""
    if not isinstance(obj, dict):
        return None, [f"record is not a JSON object (got {type(obj).__name__})"]
    reasons: list[str] = []
    if type(obj.get("id")) is not int:
        reasons.append("id: missing" if "id" not in obj
                       else f"id: expected an integer, got {_short(obj.get('id'))}")
    name = _required_text(obj, "name", reasons)
    if reasons:
        return None, reasons
    extra = _extra(obj, _COURT_FIELDS)
    updated = parse_timestamp(obj.get("updated_date"))
    if obj.get("updated_date") not in (None, "") and updated is None:
        extra["updated_date"] = obj["updated_date"]
    row = {"source": SOURCE, "court_id": obj["id"], "name": name,
           **{k: text_or_none(obj.get(k)) for k in ("code", "slug", "court_type", "city", "state",
                                             "jurisdiction", "level_of_appeal")},
           "updated_date": updated,
           "extra_json": json.dumps(extra, ensure_ascii=False, sort_keys=True)}
    return row, []


def record_id_of(record: RawRecord) -> str | None:
    obj = record.obj
    if isinstance(obj, dict):
        value = obj.get("id", obj.get("pk"))
        if isinstance(value, (int, str)) and not isinstance(value, bool) and value != "":
            return str(value)
        return None
    match = _ID_GUESS.search(record.text) if record.error else None
    return match.group(1) if match else None


# -- quarantine rows ----------------------------------------------------------------------------


def record_quarantine_row(kind: str, rec: RawRecord, reasons: list[str], url: str, page: int,
                          raw_sha: str, quarantined_at: datetime) -> dict[str, Any]:
    return {"quarantine_id": hashlib.sha256(f"{kind}\n{rec.text}".encode()).hexdigest(),
            "source": SOURCE, "kind": kind, "record_id": record_id_of(rec), "reasons": reasons,
            "raw_record": rec.text, "source_url": url, "page": page,
            "record_index": rec.index, "raw_sha256": raw_sha, "quarantined_at": quarantined_at}


def page_quarantine_row(body: bytes, url: str, page: int, raw_sha: str, reason: str,
                        quarantined_at: datetime) -> dict[str, Any]:
    return {"quarantine_id": hashlib.sha256(b"page\n" + body).hexdigest(), "source": SOURCE,
            "kind": "page", "record_id": None, "reasons": [reason],
            "raw_record": body[:_PAGE_EXCERPT].decode("utf-8", errors="replace"),
            "source_url": url, "page": page, "record_index": None, "raw_sha256": raw_sha,
            "quarantined_at": quarantined_at}


def iter_quarantine_reasons(store: CaseStore) -> Iterator[tuple[str, str | None, list[str]]]:
    """(kind, record id, reasons) per quarantined record: a convenience for reports and tests."""
    table = store.quarantine()
    for kind, rid, reasons in zip(table.column("kind").to_pylist(),
                                  table.column("record_id").to_pylist(),
                                  table.column("reasons").to_pylist()):
        yield kind, rid, reasons
