"""The tools lexpipe offers agents, defined once for every caller: the MCP server (``lexpipe mcp``)
and the gAIus agent see the same names, descriptions and input schemas, and the same validation.

    definitions.py    ToolDefinition: name, description, input schema, handler
    registry.py       tools(), tool(name), call(), openai_tool(), mcp_tool()
    fields.py         shared schema fragments and bounds (the HTTP API's limits)
    arguments.py      arguments checked against a tool's schema, errors naming the field
    services.py       Services: ReadService, SearchService, CitationResolver opened lazily from a home
    search_tool.py    search
    read_tools.py     get_unit, law_at_date, diff, unit_history, list_acts
    citation_tool.py  resolve_citation
    errors.py         ToolError
"""

from pipelines.tools.definitions import ToolDefinition
from pipelines.tools.registry import call, mcp_tool, openai_tool, tool, tools
from pipelines.tools.errors import ToolError
from pipelines.tools.services import Services

__all__ = ["Services", "ToolDefinition", "ToolError", "call", "mcp_tool", "openai_tool", "tool", "tools"]
