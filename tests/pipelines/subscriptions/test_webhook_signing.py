"""Signatures: HMAC-SHA256 over timestamp + "." + body, verified in constant time with a replay window."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from pipelines.subscriptions.signing import (SIGNATURE_HEADER, TIMESTAMP_HEADER, SignatureError, signature,
                                             signed_headers, verify, verify_or_raise)

SECRET = "whsec_test_0123456789"
BODY = '{"id":"evt_1","act_id":"pl:kc","changes":[{"unit_id":"pl:kc:art:709^2"}]}'.encode()


def test_the_signature_is_the_documented_hmac():
    expected = hmac.new(SECRET.encode(), b"1764150000." + BODY, hashlib.sha256).hexdigest()
    assert signature(SECRET, 1764150000, BODY) == expected
    headers = signed_headers(SECRET, event_id="evt_1", event_type="act.changed", body=BODY, timestamp=1764150000,
                             attempt=2)
    assert headers[SIGNATURE_HEADER] == f"v1={expected}"
    assert headers["Lexpipe-Event-Id"] == "evt_1" and headers["Lexpipe-Delivery-Attempt"] == "2"


def test_verify_accepts_the_right_secret_and_body_only():
    headers = signed_headers(SECRET, event_id="evt_1", event_type="act.changed", body=BODY, timestamp=1000, attempt=1)
    assert verify(SECRET, headers, BODY, now=1000)
    # header names are case-insensitive, as HTTP servers hand them over
    assert verify(SECRET, {k.lower(): v for k, v in headers.items()}, BODY, now=1010)
    assert not verify("whsec_other_0123456789", headers, BODY, now=1000)
    assert not verify(SECRET, headers, BODY.replace(b"709^2", b"709^3"), now=1000)  # one byte of body
    assert not verify(SECRET, {**headers, TIMESTAMP_HEADER: "1001"}, BODY, now=1000)  # timestamp is signed
    assert not verify(SECRET, headers, BODY, now=1000 + 301)  # replayed outside the window


def test_verify_or_raise_says_why_and_accepts_one_of_several_signatures():
    headers = signed_headers(SECRET, event_id="evt_1", event_type="act.changed", body=BODY, timestamp=1000, attempt=1)
    with pytest.raises(SignatureError, match="missing"):
        verify_or_raise(SECRET, {}, BODY, now=1000)
    with pytest.raises(SignatureError, match="more than 300"):
        verify_or_raise(SECRET, headers, BODY, now=2000)
    with pytest.raises(SignatureError, match="does not match"):
        verify_or_raise("whsec_other_0123456789", headers, BODY, now=1000)
    rotated = {**headers, SIGNATURE_HEADER: f"v1={signature('old_secret_000000', 1000, BODY)}, {headers[SIGNATURE_HEADER]}"}
    verify_or_raise(SECRET, rotated, BODY, now=1000)
