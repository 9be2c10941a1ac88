"""The MCP server with the SDK's own client: in process (every tool, the TOC resources, bad
arguments answered as tool errors), and ``lexpipe mcp`` as a subprocess over stdio and over
streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from core.settings import Settings
from corpus_fixtures import NEW, OLD
from lexpipe.mcp import build_server
from pipelines.tools import Services, mcp_tool

REPO = Path(__file__).resolve().parents[2]
TOOLS = ["search", "get_unit", "law_at_date", "diff", "unit_history", "resolve_citation", "list_acts"]


@pytest.fixture(scope="module")
def server(corpus_home):
    return build_server(Services(settings=Settings(home=corpus_home, encoder="hashing")))


def session(server, steps):
    """Run ``steps(client)`` (async) against ``server`` with the SDK's in-process client."""
    async def main():
        async with Client(server) as client:
            return await steps(client)
    return anyio.run(main)


def result(r) -> dict:
    assert not r.is_error, r.content
    body = json.loads(r.content[0].text)
    assert body == r.structured_content
    return body


def test_lists_the_seven_shared_tools(server):
    async def steps(c):
        return (await c.list_tools()).tools
    listed = session(server, steps)
    assert [t.name for t in listed] == TOOLS
    for t in listed:
        wire = mcp_tool(t.name)
        assert t.input_schema == wire["inputSchema"] and t.description == wire["description"]
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False


def test_a_round_trip_per_tool(server):
    async def steps(c):
        call = c.call_tool
        return {
            "old": result(await call("get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": "2025-01-01"})),
            "new": result(await call("get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": NEW})),
            "diff": result(await call("diff", {"act": "pl:kc", "from": OLD, "to": NEW})),
            "law": result(await call("law_at_date", {"act": "pl:kc", "as_of": "2025-06-30"})),
            "history": result(await call("unit_history", {"unit_id": "pl:kc:art:709^2"})),
            "acts": result(await call("list_acts", {})),
            "search": result(await call("search", {"query": "umowa leasingu forma dokumentowa", "k": 5})),
            "cite": result(await call("resolve_citation", {"text": "art. 415 k.c.", "as_of": NEW})),
        }
    r = session(server, steps)
    assert (r["old"]["version"], r["old"]["text"]) == (OLD, "Umowa leasingu powinna być zawarta na piśmie pod "
                                                            "rygorem nieważności.")
    assert (r["new"]["version"], r["new"]["text"]) == (NEW, "Umowa leasingu wymaga zachowania formy dokumentowej.")
    assert "pl:kc:art:709^2" in [c["unit_id"] for c in r["diff"]["changes"]]
    assert (r["law"]["version"], r["law"]["next_version"]) == (OLD, NEW)
    assert [c["change"] for c in r["history"]["changes"]] == ["changed"]
    assert [a["act_id"] for a in r["acts"]["acts"]] == ["pl:kc"]
    assert r["search"]["hits"] and "pl:kc:art:709^2" in [h["article_id"] for h in r["search"]["hits"]]
    assert r["cite"]["citations"][0]["units"][0]["unit_id"] == "pl:kc:art:415"


def test_toc_resources(server):
    async def steps(c):
        listed = [str(x.uri) for x in (await c.list_resources()).resources]
        templates = [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
        today = json.loads((await c.read_resource("lexpipe://acts/pl:kc/toc")).contents[0].text)
        old = json.loads((await c.read_resource("lexpipe://acts/pl:kc/toc?as_of=2025-01-01")).contents[0].text)
        acts = json.loads((await c.read_resource("lexpipe://acts")).contents[0].text)
        try:
            await c.read_resource("lexpipe://acts/pl:zz/toc")
            unknown = None
        except Exception as exc:  # the SDK raises the server's error for a failed read
            unknown = str(exc)
        return listed, templates, today, old, acts, unknown
    listed, templates, today, old, acts, unknown = session(server, steps)
    assert listed == ["lexpipe://acts", "lexpipe://acts/pl:kc/toc"]
    assert templates == ["lexpipe://acts/{act_id}/toc{?as_of}"]
    assert today["version"] == NEW and old["version"] == OLD and today["articles"] > 1000
    assert [e["level"] for e in today["entries"]] == ["book"] * 4
    assert acts["acts"][0]["act_id"] == "pl:kc"
    assert unknown and "unknown act 'pl:zz'" in unknown


@pytest.mark.parametrize("name,args,field", [
    ("get_unit", {"unit_id": "pl:xx:art:1"}, "unit_id"),  # unknown act
    ("law_at_date", {"act": "pl:xx"}, "act"),
    ("get_unit", {"unit_id": "pl:kc:art:1", "as_of": "2025-02-30"}, "as_of"),  # bad date
    ("get_unit", {"unit_id": "pl:kc:art:1", "as_of": "yesterday"}, "as_of"),
    ("search", {"query": "umowa", "k": 0}, "k"),
    ("search", {"k": 3}, "query"),  # missing query
    ("diff", {"act": "pl:kc", "from": NEW, "to": OLD}, "from"),
    ("list_acts", {"jurisdiction": "fr"}, "jurisdiction"),
])
def test_bad_arguments_are_tool_errors(server, name, args, field):
    async def steps(c):
        return await c.call_tool(name, args)
    r = session(server, steps)
    assert r.is_error and r.content[0].text.startswith(f"{field}: ")


def test_unknown_tool_is_a_tool_error(server):
    async def steps(c):
        return await c.call_tool("delete_everything", {})
    r = session(server, steps)
    assert r.is_error and "delete_everything" in r.content[0].text


def _env(corpus_home) -> dict[str, str]:
    return {"LEXPIPE_HOME": str(corpus_home), "LEXPIPE_ENCODER": "hashing", "PYTHONPATH": str(REPO)}


def test_stdio_subprocess(corpus_home):
    env = {k: v for k, v in _env(corpus_home).items() if k != "LEXPIPE_HOME"}  # the home comes as --home
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                   args=["-m", "lexpipe.cli", "mcp", "--transport", "stdio", "--home", str(corpus_home)])

    async def main():
        async with Client(params, read_timeout_seconds=120) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            return names, await c.call_tool("get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": "2025-01-01"})
    names, r = anyio.run(main)
    assert names == TOOLS
    assert result(r)["version"] == OLD


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_subprocess(corpus_home, tmp_path):
    port = _free_port()
    log = (tmp_path / "mcp_http.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "lexpipe.cli", "mcp", "--transport", "http", "--port", str(port)],
                            env={**os.environ, **_env(corpus_home)}, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "mcp_http.log").read_text()
                assert time.monotonic() < deadline, "the HTTP server did not start in 90 s"
                time.sleep(0.3)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as c:
                names = [t.name for t in (await c.list_tools()).tools]
                ok = await c.call_tool("diff", {"act": "pl:kc"})
                bad = await c.call_tool("search", {"query": "umowa", "k": 0})
                return names, ok, bad
        names, ok, bad = anyio.run(main)
        assert names == TOOLS
        assert "pl:kc:art:709^2" in [c["unit_id"] for c in result(ok)["changes"]]
        assert bad.is_error and bad.content[0].text.startswith("k: ")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
