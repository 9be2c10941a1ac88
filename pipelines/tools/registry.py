"""Every tool by name, the one way to run one, and the exports for each kind of caller.

The MCP server (``lexpipe/mcp``) registers every definition of :func:`tools`; the gAIus agent's
``search`` tool is :func:`openai_tool` of the same definition. :func:`call` checks the arguments
against the definition's schema (:mod:`pipelines.tools.arguments`) and turns the read layer's and
the search service's refusals into ToolError: a caller gets a message, never a crash.
"""

from __future__ import annotations

from typing import Any

from pipelines.tools.arguments import validate
from pipelines.tools.citation_tool import RESOLVE_CITATION
from pipelines.tools.definitions import ToolDefinition
from pipelines.tools.errors import ToolError
from pipelines.tools.read_tools import DIFF, GET_UNIT, LAW_AT_DATE, LIST_ACTS, UNIT_HISTORY
from pipelines.tools.search_tool import SEARCH
from pipelines.tools.services import Services

# in the order a caller sees them
_TOOLS: dict[str, ToolDefinition] = {t.name: t for t in (SEARCH, GET_UNIT, LAW_AT_DATE, DIFF, UNIT_HISTORY,
                                                          RESOLVE_CITATION, LIST_ACTS)}


def tools() -> dict[str, ToolDefinition]:
    """Every tool by name, in the order they are listed to a caller."""
    return dict(_TOOLS)


def tool(name: str) -> ToolDefinition:
    found = tools().get(name)
    if found is None:
        raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(tools())}", "name")
    return found


def call(services: Services, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Run tool ``name``: validated arguments, the handler's result, or ToolError."""
    from pipelines.reads.errors import ReadError
    from pipelines.retrieval.service import InvalidRequest

    definition = tool(name)
    args = validate(definition.input_schema, arguments)
    try:
        return definition.handler(services, args)
    except ToolError:
        raise
    except ReadError as exc:  # the read layer's refusals name what was asked and what there is
        raise ToolError(str(exc)) from exc
    except InvalidRequest as exc:
        raise ToolError(str(exc)) from exc


def openai_tool(name: str, properties: tuple[str, ...] | None = None) -> dict:
    """The definition in OpenAI function-calling form (``tools=[...]`` of a chat completion)."""
    d = tool(name)
    return {"type": "function",
            "function": {"name": d.name, "description": d.description, "parameters": d.public_schema(properties)}}


def mcp_tool(name: str) -> dict:
    """The definition in MCP ``tools/list`` form (camelCase keys, as on the wire)."""
    d = tool(name)
    return {"name": d.name, "title": d.title, "description": d.description, "inputSchema": d.public_schema(),
            "annotations": {"title": d.title, "readOnlyHint": d.read_only, "destructiveHint": False,
                            "idempotentHint": True, "openWorldHint": d.open_world}}
