"""The API against its own OpenAPI schema, with schemathesis as its CLI runs it (``schemathesis run``):
every operation, every phase (the schema's examples, coverage, fuzzing, and the stateful phase that
follows the schema's links: a created subscription → get, test event, dead letters, delete; a test event
→ its status, redelivery) and every check — no 5xx, documented statuses, content types, headers and
bodies, schema-valid requests accepted and schema-invalid ones refused, 405 with a full ``Allow``, auth
honoured, nothing usable after DELETE. Zero failures of any check.

Over a writable copy of the session's published home (the k.c. at two versions, hashing encoder), with
an API key (the subscriptions' phase needs one) and dictionaries that make a share of the generated act
ids, unit ids and dates real ones, so requests reach the 200s and not only the 404s. Bounded by the
examples per operation (no time budget: one pass of each phase); the summary — operations, checks,
requests, seconds — is printed (``pytest -s``) and kept for BENCHMARKS-style reporting. Test events
and redeliveries post through a mock transport: no network.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema

from core.layout import Layout
from core.settings import Settings
from lexpipe.api import create_app
from lexpipe.api.security import new_key
from pipelines.reads import ReadService
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.service import SearchService

KEY, DIGEST = new_key()
OLD, NEW = "2024-12-19", "2025-11-13"
MAX_EXAMPLES = 12
STATEFUL_STEPS = 12


def _app(home: Path | None = None):
    if home is None:  # the schema does not depend on the data
        return create_app(settings=Settings())
    layout, encoder = Layout(home), get_encoder("hashing")
    service = SearchService(open_embedded_backend(layout, encoder=encoder, lang="pl"),
                            backend_for=lambda lang: open_embedded_backend(layout, encoder=encoder, lang=lang))
    api = Settings(home=home, api_key_hashes=DIGEST, api_rate_read_burst=1_000_000, api_rate_write_burst=1_000_000,
                   api_rate_auth_fail_burst=1_000_000, webhook_timeout_s=2.0)
    receiver = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(204)))
    return create_app(service, reads=ReadService.at(home), layout=layout, settings=api,
                      resolve=lambda host: ["93.184.215.14"],  # no DNS in tests: every name is "public"
                      webhook_client=receiver)


CONFIG = {
    "seed": 20261126,
    "workers": 1,
    "request-timeout": 120,  # a request slower than that on a loaded machine is not a failure of the API
    "headers": {"Authorization": f"Bearer {KEY}"},
    "generation": {"max-examples": MAX_EXAMPLES, "mode": "all", "deterministic": True, "no-shrink": True,
                   "database": "none"},
    "checks": {"enabled": True},
    "phases": {"stateful": {"max-steps": STATEFUL_STEPS}},
    "dictionaries": {"acts": {"values": ["pl:kc", "pl:kk", "de:bgb"]},
                     "units": {"values": ["pl:kc:art:415", "pl:kc:art:709^2", "pl:kc:art:647^1:par:1^1",
                                          "pl:kc:book:PIERWSZA:title:II"]},
                     "days": {"values": [OLD, NEW, "2025-06-30"]}},
    "parameters": {**{name: {"dictionary": "acts", "probability": 0.5} for name in ("act", "body.act")},
                   **{name: {"dictionary": "units", "probability": 0.5} for name in ("unit_id", "body.unit_id")},
                   **{name: {"dictionary": "days", "probability": 0.5}
                      for name in ("as_of", "version", "from", "to", "body.as_of", "body.version")}},
}


def _operations() -> list[str]:
    plain = schemathesis.openapi.from_asgi("/openapi.json", _app())
    return sorted(op.label for op in (r.ok() for r in plain.get_all_operations()))


def test_every_operation_is_in_the_schema():
    ops = _operations()
    assert len(ops) >= 23, ops
    for label in ("POST /subscriptions", "POST /subscriptions/{subscription_id}/test",
                  "POST /events/{event_id}/redeliver", "GET /changes.atom", "POST /citations/resolve"):
        assert label in ops


def test_parameters_are_typed():
    """The issue: as_of, since and act were bare strings, so schema-valid values were refused."""
    spec = _app().openapi()

    def param(path: str, name: str, method: str = "get") -> dict:
        return next(p["schema"] for p in spec["paths"][path][method]["parameters"] if p["name"] == name)

    assert param("/units/{unit_id}", "as_of")["anyOf"] == [{"type": "string", "format": "date"},
                                                           {"type": "string", "maxLength": 0}]
    assert {"type": "string", "format": "date-time"} in param("/changes", "since")["anyOf"]
    act = param("/changes", "act")
    assert act["pattern"] == r"^[a-z]{2}:[a-z0-9][a-z0-9_-]{0,59}$" and act == param("/acts/{act}", "act")
    assert param("/changes/{act}/{version}", "version")["format"] == "date"
    assert param("/events/{event_id}", "event_id")["pattern"] == r"^evt_[0-9a-f]{32}$"
    body = spec["components"]["schemas"]["SubscriptionBody"]
    assert [b["title"] for b in body["oneOf"]] == ["act", "unit", "query"]
    assert "@" not in body["properties"]["url"]["pattern"].split("//")[1].split("(?:[/?]")[0]  # no user:pass@
    assert spec["components"]["schemas"]["ErrorOut"]["required"] == ["status", "field", "message", "detail"]
    links = spec["paths"]["/subscriptions"]["post"]["responses"]["201"]["links"]
    assert {"GetSubscription", "DeleteSubscription", "TestSubscription", "DeadLetters"} <= set(links)


@pytest.fixture(scope="module")
def home(corpus_home: Path, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("api_schema") / "home"
    shutil.copytree(corpus_home, home, symlinks=True)  # subscriptions write under the home
    return home


def run_schemathesis(app) -> dict:
    """One ``schemathesis run`` over the app: every phase, every check. The summary and every failure."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=SchemathesisConfig.from_dict(CONFIG))
    started = time.monotonic()
    checks: Counter = Counter()
    requests: Counter = Counter()
    statuses: Counter = Counter()
    seconds: Counter = Counter()  # time answering, per operation
    operations: set[str] = set()
    stateful_links: set[str] = set()
    failures: list[str] = []
    errors: list[str] = []
    phases: dict[str, str] = {}
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            rec = event.recorder
            for case_checks in rec.checks.values():
                for check in case_checks:
                    checks[check.status.value] += 1
                    if check.failure_info is not None:
                        f = check.failure_info.failure
                        failures.append(f"{event.phase.value} {rec.label}: {check.name}: {f.title}: {f.message} "
                                        f"| {check.failure_info.code_sample[:400]}")
            for interaction in rec.interactions.values():
                requests[event.phase.value] += 1
                if interaction.response is not None:
                    statuses[interaction.response.status_code] += 1
                    seconds[rec.label or "stateful"] += interaction.response.elapsed
            # a stateful scenario's recorder is labelled "Stateful tests" (in whichever phase it ends)
            if event.phase.value != "stateful_testing" and rec.label and rec.label != "Stateful tests":
                operations.add(rec.label)
            for node in rec.cases.values():
                if node.transition is not None and node.is_transition_applied:
                    stateful_links.add(node.transition.id)
        elif isinstance(event, events.PhaseFinished):
            phases[event.phase.name.value] = event.status.value
        elif isinstance(event, (events.NonFatalError, events.FatalError)):
            errors.append(str(getattr(event, "info", None) and event.info.message or event))
        elif isinstance(event, events.EngineFinished):
            failures += [f"run: {f.title}" for f in event.failures if f"run: {f.title}" not in failures]
    return {"seconds": round(time.monotonic() - started, 1), "operations": sorted(operations),
            "checks": dict(checks), "requests": dict(requests), "statuses": dict(sorted(statuses.items())),
            "stateful_links": sorted(stateful_links), "phases": phases, "failures": failures, "errors": errors,
            "slowest": {k: round(v, 1) for k, v in seconds.most_common(8)}}


def test_schemathesis_finds_no_failure(home, tmp_path_factory):
    summary = run_schemathesis(_app(home))
    print("\nschemathesis:", json.dumps({k: v for k, v in summary.items() if k != "operations"}, indent=1))
    (tmp_path_factory.getbasetemp() / "schemathesis_summary.json").write_text(json.dumps(summary, indent=1))
    assert summary["errors"] == [], summary["errors"]
    assert summary["failures"] == [], "\n".join(summary["failures"])
    assert summary["operations"] == _operations()  # every operation ran
    assert summary["checks"].get("success", 0) > 1000
    phases = summary["phases"]
    assert all(phases.get(p) == "success" for p in ("examples", "coverage", "fuzzing", "stateful")), phases
    # the stateful phase followed the subscriptions' links: created ones were read, tested, deleted
    links = " ".join(summary["stateful_links"])
    for name in ("GetSubscription", "TestSubscription", "DeleteSubscription", "GetEvent"):
        assert name in links, summary["stateful_links"]
    assert 500 not in summary["statuses"]
