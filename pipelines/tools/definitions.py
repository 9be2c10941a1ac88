"""A tool, defined once: name, description, input JSON Schema, handler.

Descriptions are English and language-neutral: the tools serve Polish and German law alike, and a
caller that wants guidance in the user's language (the gAIus agent: Polish) gives it in its own
prompt. A handler is ``(services, arguments) -> JSON-able dict`` over already validated arguments;
it raises :class:`~pipelines.tools.errors.ToolError` for anything the corpus cannot answer as asked.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from pipelines.tools.services import Services

Handler = Callable[[Services, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    title: str
    description: str
    input_schema: dict
    handler: Handler
    read_only: bool = True
    open_world: bool = False  # the tools read the local corpus, never the internet

    def public_schema(self, properties: tuple[str, ...] | None = None) -> dict:
        """The input schema as shown to callers: lexpipe's own ``x-`` hints left out, and, when
        ``properties`` is given, only those arguments (a caller that fills in the rest itself)."""
        schema = _without_hints(copy.deepcopy(self.input_schema))
        if properties is not None:
            unknown = set(properties) - set(schema["properties"])
            if unknown:
                raise ValueError(f"{self.name} has no argument(s) {', '.join(sorted(unknown))}")
            schema["properties"] = {k: v for k, v in schema["properties"].items() if k in properties}
            schema["required"] = [r for r in schema["required"] if r in properties]
        return schema


def _without_hints(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_hints(v) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_without_hints(v) for v in node]
    return node
