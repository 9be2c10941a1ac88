"""Property-based tests of the whole API from its OpenAPI schema (schemathesis).

Every operation, over a writable copy of the session's published home (the k.c. at two versions,
hashing encoder), with a valid API key: no answer is a 5xx, and every answer's status code, content
type, headers and body conform to what the schema documents. The examples are bounded (a few per
operation, no shrinking) so the module stays well under 90 s on a shared 2-core machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import schemathesis
from schemathesis import GenerationMode
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import checks

from core.layout import Layout
from core.settings import Settings
from lexpipe.api import create_app
from lexpipe.api.security import new_key
from pipelines.reads import ReadService
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.service import SearchService

KEY, DIGEST = new_key()
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance, checks.response_headers_conformance]
MAX_EXAMPLES = 8


@pytest.fixture(scope="module")
def api_schema(corpus_home: Path, tmp_path_factory):
    home = tmp_path_factory.mktemp("api_schema") / "home"
    shutil.copytree(corpus_home, home, symlinks=True)  # subscriptions write under the home
    layout, encoder = Layout(home), get_encoder("hashing")
    service = SearchService(open_embedded_backend(layout, encoder=encoder, lang="pl"),
                            backend_for=lambda lang: open_embedded_backend(layout, encoder=encoder, lang=lang))
    api = Settings(home=home, api_key_hashes=DIGEST, api_rate_read_burst=1_000_000, api_rate_write_burst=1_000_000,
                   api_webhook_allow_networks="127.0.0.1")
    app = create_app(service, reads=ReadService.at(home), layout=layout, settings=api,
                     resolve=lambda host: ["93.184.215.14"])  # no DNS in tests: every name is "public"
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def _operations() -> list[tuple[str, str, bool]]:
    """(method, path, has inputs) of every operation: the schema does not depend on the data, so an
    app with no services gives them at collection time."""
    plain = schemathesis.openapi.from_asgi("/openapi.json", create_app(settings=Settings()))
    return [(op.method.upper(), op.path, bool(list(op.iter_parameters()) or list(op.body)))
            for op in (r.ok() for r in plain.get_all_operations())]


_ALL = _operations()
OPERATIONS = [(m, p) for m, p, _ in _ALL]
# invalid requests only where there is a parameter or a body to break (/health, /acts have none)
RUNS = [(m, p, mode) for m, p, inputs in _ALL
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if inputs or mode is GenerationMode.POSITIVE]
SEEN: dict[str, int] = {}


def test_every_operation_is_covered():
    assert len(OPERATIONS) >= 22 and ("POST", "/subscriptions") in OPERATIONS and ("GET", "/changes.atom") in OPERATIONS


@pytest.mark.parametrize("method,path,mode", RUNS, ids=[
    f"{m} {p} {'valid' if mode is GenerationMode.POSITIVE else 'invalid'}" for m, p, mode in RUNS])
def test_operation_conforms(api_schema, method, path, mode):
    """Valid requests (by the schema) and invalid ones (a parameter or the body breaking it)."""
    operation = api_schema[path][method]
    calls = []

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def run(case):
        response = case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"}, checks=CHECKS)
        calls.append(response.status_code)

    run()
    assert calls
    SEEN[f"{method} {path} {mode.value}"] = len(calls)  # examples run (pytest -s prints the total at the end)


def test_the_documented_subscription_examples_are_created(api_schema):
    """Random bodies rarely name a known act; the schema's own examples must be valid, conforming 201s."""
    operation = api_schema["/subscriptions"]["POST"]
    examples = api_schema.raw_schema["components"]["schemas"]["SubscriptionBody"]["examples"]
    assert len(examples) == 3
    for body in examples:
        case = operation.Case(body=body, media_type="application/json")
        response = case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"}, checks=CHECKS)
        assert response.status_code == 201, response.text
        assert response.json()["secret"]


def teardown_module():
    if SEEN:
        print(f"\nschemathesis: {len(SEEN)} operation/mode runs, {sum(SEEN.values())} examples")
