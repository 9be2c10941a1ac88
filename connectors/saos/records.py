"""SAOS judgment validation: what a dump record must hold to become a ``SAOS_JUDGMENTS`` row, and
every reason it is refused when it does not.

Why a pure function of one record: the rules for refusal (missing id, date or text; HTML that
yields no text; wrong types) are read and tested here, apart from HTTP, cursor and store; the
sync only decides what to do with the verdict (store the row, or quarantine the record with the
reasons). Checked on the two real dump pages (``shared/data/pl/saos``): all 200 records pass.

The text check is deliberately a plain tag strip (stdlib ``html.parser``), not the case-law
cleaner of ``pipelines/``: connectors sit below pipelines, and "does this HTML hold any text at
all" needs no knowledge of judgment structure.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from html.parser import HTMLParser
from typing import Any

SOURCE = "saos"
COURT_TYPES = frozenset({"COMMON", "SUPREME", "ADMINISTRATIVE", "CONSTITUTIONAL_TRIBUNAL",
                         "NATIONAL_APPEAL_CHAMBER"})
JUDGMENT_TYPES = frozenset({"SENTENCE", "DECISION", "RESOLUTION", "REASONS", "REGULATION"})
# fields that become columns; every other field is kept verbatim in extra_json
_KNOWN = frozenset({"id", "courtType", "judgmentType", "courtCases", "judgmentDate", "division",
                    "judges", "keywords", "textContent", "referencedRegulations", "source"})
_MIN_TEXT_CHARS = 20  # "<p> </p>" or a lone "WYROK" is not a judgment
_INT64_MAX = 2**63 - 1  # judgment_id / division_id are int64 columns: a larger id cannot be stored


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(html: str) -> str:
    """The visible text of an HTML fragment, whitespace collapsed (for the emptiness check)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return " ".join(" ".join(parser.parts).split())


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def record_sha256(obj: Any) -> str:
    """Hash of the record as sent, independent of key order and whitespace."""
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _enum(obj: dict, name: str, allowed: frozenset[str], reasons: list[str]) -> str | None:
    value = obj.get(name)
    if name not in obj or value is None:
        reasons.append(f"{name}: {'missing' if name not in obj else 'null'}")
    elif not isinstance(value, str):
        reasons.append(f"{name}: expected text, got {type(value).__name__}")
    elif value not in allowed:
        reasons.append(f"{name}: unknown value {_short(value)} (known: {', '.join(sorted(allowed))})")
    else:
        return value
    return None


def _list_of_dicts(obj: dict, name: str, reasons: list[str], *, required: bool = False) -> list[dict]:
    value = obj.get(name)
    if value is None:
        if required:
            reasons.append(f"{name}: {'missing' if name not in obj else 'null'}")
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        reasons.append(f"{name}: expected a list of objects, got {_short(value)}")
        return []
    return value


def validate_judgment(obj: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """Dump record → the ``SAOS_JUDGMENTS`` fields it determines, or None and every reason.

    Required: positive integer ``id``; known ``courtType`` and ``judgmentType``; ``courtCases``
    with at least one non-empty ``caseNumber``; ISO ``judgmentDate``; ``textContent`` text whose
    HTML holds at least 20 characters of visible text. ``judges``, ``keywords``,
    ``referencedRegulations`` must have their documented types when present. The row lacks the
    fetch columns (``source_url``, ``raw_sha256``, ``page``, ``fetched_at``): the sync adds them.
    """
    if not isinstance(obj, dict):
        return None, [f"record is not a JSON object (got {type(obj).__name__})"]
    try:  # JSON may carry lone surrogate escapes ("\ud800"): such text cannot be hashed or stored
        sha = record_sha256(obj)
    except UnicodeEncodeError as exc:
        return None, [f"record holds text that is not valid Unicode (a lone surrogate): {exc.reason}"]
    reasons: list[str] = []
    jid = obj.get("id")
    if "id" not in obj or jid is None:
        reasons.append("id: missing" if "id" not in obj else "id: null")
    elif type(jid) is not int or not 0 < jid <= _INT64_MAX:
        reasons.append(f"id: expected a positive integer (at most 2^63-1), got {_short(jid)}")

    court_type = _enum(obj, "courtType", COURT_TYPES, reasons)
    judgment_type = _enum(obj, "judgmentType", JUDGMENT_TYPES, reasons)

    case_numbers: list[str] = []
    for cc in _list_of_dicts(obj, "courtCases", reasons, required=True):
        number = cc.get("caseNumber")
        if not isinstance(number, str):
            reasons.append(f"courtCases: caseNumber expected text, got {_short(number)}")
        elif number.strip():
            case_numbers.append(number.strip())
    if "courtCases" in obj and isinstance(obj.get("courtCases"), list) and not case_numbers \
            and not any(r.startswith("courtCases") for r in reasons):
        reasons.append("courtCases: no case number")

    judgment_date: date | None = None
    raw_date = obj.get("judgmentDate")
    if "judgmentDate" not in obj or raw_date in (None, ""):
        reasons.append("judgmentDate: missing" if "judgmentDate" not in obj else "judgmentDate: empty")
    elif not isinstance(raw_date, str):
        reasons.append(f"judgmentDate: expected text, got {type(raw_date).__name__}")
    else:
        try:
            judgment_date = date.fromisoformat(raw_date.strip())
        except ValueError:
            reasons.append(f"judgmentDate: not an ISO date (YYYY-MM-DD): {_short(raw_date)}")

    text = obj.get("textContent")
    if "textContent" not in obj or text is None:
        reasons.append("textContent: missing" if "textContent" not in obj else "textContent: null")
    elif not isinstance(text, str):
        reasons.append(f"textContent: expected text, got {type(text).__name__}")
    elif len(html_text(text)) < _MIN_TEXT_CHARS:
        reasons.append(f"textContent: the HTML yields no text ({len(html_text(text))} visible characters)")

    judges = [j.get("name") for j in _list_of_dicts(obj, "judges", reasons)]
    if any(not isinstance(n, str) for n in judges):
        reasons.append("judges: a judge without a text name")
    keywords = obj.get("keywords") or []
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        reasons.append(f"keywords: expected a list of text, got {_short(keywords)}")
    regulations = _list_of_dicts(obj, "referencedRegulations", reasons)
    division = obj.get("division")
    division_id = division.get("id") if isinstance(division, dict) else None
    if division is not None and (type(division_id) is not int
                                 or not -_INT64_MAX - 1 <= division_id <= _INT64_MAX):
        reasons.append(f"division: expected an object with an integer 'id', got {_short(division)}")
    source = obj.get("source")
    if source is not None and not isinstance(source, dict):
        reasons.append(f"source: expected an object, got {_short(source)}")

    if reasons:
        return None, reasons
    extra = {k: v for k, v in obj.items() if k not in _KNOWN}
    return {
        "source": SOURCE,
        "judgment_id": jid,
        "court_type": court_type,
        "judgment_type": judgment_type,
        "case_numbers": case_numbers,
        "judgment_date": judgment_date,
        "division_id": division_id,
        "judges": [n.strip() for n in judges],
        "keywords": keywords,
        "text_content": text,
        "content_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),  # type: ignore[union-attr]
        "record_sha256": sha,
        "referenced_regulations_json": json.dumps(regulations, ensure_ascii=False, sort_keys=True),
        "source_json": json.dumps(source, ensure_ascii=False, sort_keys=True) if source else None,
        "extra_json": json.dumps(extra, ensure_ascii=False, sort_keys=True),
    }, []
