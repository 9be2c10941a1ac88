"""Webhook signatures: HMAC-SHA256 over ``timestamp + "." + body``, as Stripe and GitHub sign.

Every delivery carries::

    Content-Type: application/json
    Lexpipe-Event-Id: evt_…            stable per (subscription, act, from, to): de-duplicate on it
    Lexpipe-Event-Type: act.changed | unit.changed | query.changed
    Lexpipe-Timestamp: 1764150000      Unix seconds when this attempt was signed
    Lexpipe-Signature: v1=<hex>        HMAC-SHA256(secret, f"{timestamp}.{body}") of the raw body bytes
    Lexpipe-Delivery-Attempt: 1        1-based attempt number

A receiver recomputes the HMAC over the raw body it received (before any JSON parsing), compares
in constant time and refuses a timestamp too far from its clock (replays). :func:`verify` does all
three. ``Lexpipe-Signature`` may carry several ``v1=`` values separated by commas (e.g. while a
secret is rotated); one match suffices.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Mapping

EVENT_ID_HEADER = "Lexpipe-Event-Id"
EVENT_TYPE_HEADER = "Lexpipe-Event-Type"
TIMESTAMP_HEADER = "Lexpipe-Timestamp"
SIGNATURE_HEADER = "Lexpipe-Signature"
ATTEMPT_HEADER = "Lexpipe-Delivery-Attempt"
SCHEME = "v1"
DEFAULT_TOLERANCE_S = 300


class SignatureError(ValueError):
    """Why a delivery does not verify (missing header, stale timestamp, wrong signature)."""


def _bytes(body: bytes | str) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def signature(secret: str, timestamp: int | str, body: bytes | str) -> str:
    """Hex HMAC-SHA256 of ``f"{timestamp}.".encode() + body`` keyed with the secret (UTF-8)."""
    return hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + _bytes(body), hashlib.sha256).hexdigest()


def signed_headers(secret: str, *, event_id: str, event_type: str, body: bytes | str, timestamp: int,
                   attempt: int) -> dict[str, str]:
    """Every header of one delivery attempt."""
    return {"Content-Type": "application/json", EVENT_ID_HEADER: event_id, EVENT_TYPE_HEADER: event_type,
            TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: f"{SCHEME}={signature(secret, timestamp, body)}",
            ATTEMPT_HEADER: str(attempt)}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    if hasattr(headers, "get") and headers.get(name) is not None:
        return headers.get(name)
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def verify_or_raise(secret: str, headers: Mapping[str, str], body: bytes | str, *,
                    tolerance_s: float = DEFAULT_TOLERANCE_S, now: float | None = None) -> None:
    """Raise :class:`SignatureError` unless the headers sign ``body`` with ``secret`` within
    ``tolerance_s`` seconds of ``now`` (header names are matched case-insensitively)."""
    stamp, sig = _header(headers, TIMESTAMP_HEADER), _header(headers, SIGNATURE_HEADER)
    if not stamp or not sig:
        raise SignatureError(f"missing {TIMESTAMP_HEADER} or {SIGNATURE_HEADER} header")
    try:
        ts = int(stamp)
    except ValueError:
        raise SignatureError(f"{TIMESTAMP_HEADER} is not Unix seconds: {stamp!r}") from None
    if abs((time.time() if now is None else now) - ts) > tolerance_s:
        raise SignatureError(f"timestamp {ts} is more than {tolerance_s:g} s from now (replayed or clock skew)")
    expected = signature(secret, ts, body)
    given = [v.strip()[len(SCHEME) + 1:] for v in sig.split(",") if v.strip().startswith(f"{SCHEME}=")]
    if not any(hmac.compare_digest(expected, g) for g in given):
        raise SignatureError("signature does not match the body")


def verify(secret: str, headers: Mapping[str, str], body: bytes | str, *,
           tolerance_s: float = DEFAULT_TOLERANCE_S, now: float | None = None) -> bool:
    """True when ``headers`` carry a valid signature of the raw ``body`` for ``secret``, made within
    ``tolerance_s`` of ``now``; False otherwise (:func:`verify_or_raise` says why)."""
    try:
        verify_or_raise(secret, headers, body, tolerance_s=tolerance_s, now=now)
    except SignatureError:
        return False
    return True
