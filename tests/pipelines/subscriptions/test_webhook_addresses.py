"""Where a delivery may connect (pipelines/subscriptions/addresses.py, transport.py): the receiver's host
is resolved once at connect time, every address checked, and the socket opened to exactly a checked
address, the name kept in the Host header and the TLS SNI. No DNS: every resolver here is a stub that
counts its calls; receivers listen on 127.0.0.1 (allowed by the settings, as in every test)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipelines.subscriptions import delivery
from pipelines.subscriptions.addresses import AddressGuard, AddressRefused, HostNotFound, networks
from pipelines.subscriptions.delivery import Deliverer
from pipelines.subscriptions.events import Event, event_id
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.signing import verify
from pipelines.subscriptions.store import SubscriptionStore
from pipelines.subscriptions.transport import guarded_client
from subscription_fixtures import PAST, SECRET, FakeClock, Receiver, webhook_settings

NAME = "hooks.example.test"


class StubDNS:
    """Answers from a script (one list of addresses per lookup, the last one repeated); counts lookups."""

    def __init__(self, *answers: list[str]):
        self.answers = list(answers)
        self.calls: list[str] = []

    def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


def _event(home, url: str) -> Event:
    sub = SubscriptionStore(home, clock=lambda: PAST).create(url=url, act_id="pl:kc", secret=SECRET).subscription
    eid = event_id(sub.id, "pl:kc", "2024-12-19", "2025-11-13")
    ev = Event(eid, sub.id, "act.changed", "pl:kc", "2024-12-19", "2025-11-13", url, "2025-11-13T00:00:00Z", {"id": eid})
    outbox = Outbox(home)
    outbox.add([ev], now=0.0)
    outbox.close()
    return ev


def test_the_guard_refuses_internal_names_and_addresses():
    guard = AddressGuard(networks("127.0.0.1"), StubDNS(["93.184.215.14"]))
    assert guard.addresses("hooks.example.com") == [ipaddress.ip_address("93.184.215.14")]
    assert guard.addresses("127.0.0.1") == [ipaddress.ip_address("127.0.0.1")]  # allowed: no lookup for a literal
    for host in ("localhost", "api.localhost", "metadata.google.internal", "10.0.0.1", "169.254.169.254",
                 "127.0.0.2", "0.0.0.0", "::1", "::ffff:10.0.0.1"):
        with pytest.raises(AddressRefused, match="public address"):
            guard.addresses(host)
    mixed = AddressGuard([], StubDNS(["93.184.215.14", "10.0.0.7"]))  # one internal answer is enough
    with pytest.raises(AddressRefused, match="10.0.0.7"):
        mixed.addresses("both.example.com")

    def nxdomain(host):
        raise OSError("Name or service not known")

    with pytest.raises(HostNotFound, match="does not resolve"):
        AddressGuard([], nxdomain).addresses("gone.example.com")


def test_a_name_that_resolves_inside_at_delivery_is_never_posted_to(home):
    """DNS rebinding: the name was public when the subscription was made (the API checked it) and
    resolves to 10.0.0.7 now: the delivery refuses it at connect time, posts nothing, and parks the event
    with the reason (retrying would ask the same resolver again)."""
    with Receiver() as rx:
        url = f"http://{NAME}:{rx.server.server_port}/hook"
        ev = _event(home, url)
        dns = StubDNS(["10.0.0.7"])
        d = Deliverer(home, settings=webhook_settings(home.home), clock=FakeClock(), resolve=dns)
        report = d.run()
        d.close()
    assert rx.received == [] and dns.calls == [NAME]
    assert (report.attempts, report.dead_lettered) == (1, 1)
    parked = delivery.event_status(home, ev.id)
    assert parked.status == "dead" and "refused at connect time" in parked.last_error and "10.0.0.7" in parked.last_error


def test_the_connection_goes_to_the_address_that_was_checked(home):
    """Resolved once: a resolver answering 127.0.0.1 (allowed) and then 10.0.0.7 is asked once per
    connection, and the POST reaches 127.0.0.1 with the name in its Host header."""
    with Receiver() as rx:
        port = rx.server.server_port
        ev = _event(home, f"http://{NAME}:{port}/hook")
        dns = StubDNS(["127.0.0.1"], ["10.0.0.7"])
        d = Deliverer(home, settings=webhook_settings(home.home), clock=FakeClock(), resolve=dns)
        assert d.run().delivered == 1
        d.close()
    assert dns.calls == [NAME]  # one lookup: the address checked is the address connected to
    (got,) = rx.received
    assert got.headers["Host"] == f"{NAME}:{port}" and got.event_id == ev.id
    assert verify(SECRET, got.headers, got.body)


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_tls_keeps_the_name_for_sni_and_the_certificate(home, tmp_path):
    """Over HTTPS the socket goes to the checked address while the TLS handshake names the host (SNI)
    and the certificate is verified against the name, not the address."""
    cert, key = _self_signed(tmp_path)
    seen = {"sni": [], "host": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen["host"].append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    server_ctx.sni_callback = lambda sock, name, ctx: seen["sni"].append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_port
        ev = _event(home, f"https://{NAME}:{port}/hook")
        dns = StubDNS(["127.0.0.1"])
        settings = webhook_settings(home.home)
        client_ctx = ssl.create_default_context(cafile=str(cert))
        d = Deliverer(home, settings=settings, clock=FakeClock(), resolve=dns,
                      client=guarded_client(AddressGuard.from_settings(settings, dns), timeout_s=5, user_agent="t",
                                            verify=client_ctx))
        report = d.run()
        d.close()
    finally:
        server.shutdown()
        server.server_close()
    assert report.delivered == 1, delivery.event_status(home, ev.id).last_error
    assert seen == {"sni": [NAME], "host": [f"{NAME}:{port}"]} and dns.calls == [NAME]
