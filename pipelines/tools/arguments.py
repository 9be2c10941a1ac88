"""Tool arguments checked against the tool's own JSON Schema, with a message naming the field.

Why not the ``jsonschema`` package: its messages name the failing *keyword* ("0 is less than the
minimum of 1") and the path only as a deque; a model that called a tool wrongly needs "k: must be
an integer from 1 to 200, got 0" to correct itself. The schemas use a small subset of JSON Schema
(object, string, integer, boolean, array of strings; enum, pattern, length and range bounds,
``required``, ``additionalProperties: false``), and this checks exactly that subset, so the schema
an agent is shown and the checks it meets are one text. The tests cross-check both against
``jsonschema``'s Draft 2020-12 validator.
"""

from __future__ import annotations

import re
from typing import Any

from pipelines.tools.errors import ToolError

_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(field: str, schema: dict, value: Any) -> Any:
    kind = schema.get("type")
    expected = _TYPES.get(kind)
    # bool is an int in Python, not in JSON
    if expected is not None and (not isinstance(value, expected) or (kind == "integer" and isinstance(value, bool))):
        raise ToolError(f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {_describe(value)}", field)
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"must be one of {', '.join(map(str, schema['enum']))}, got {_describe(value)}", field)
    if kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        if len(value) < lo or (lo and not value.strip()):
            raise ToolError("must not be empty", field)
        if hi is not None and len(value) > hi:
            raise ToolError(f"is {len(value)} characters; the limit is {hi}", field)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            hint = schema.get("x-format-hint") or f"the pattern {schema['pattern']}"
            raise ToolError(f"must look like {hint}, got {_describe(value)}", field)
    elif kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ToolError(f"must be an integer from {lo} to {hi}, got {value}", field)
    elif kind == "array":
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ToolError(f"has {len(value)} items; the limit is {schema['maxItems']}", field)
        return [_check(f"{field}[{i}]", schema.get("items", {}), v) for i, v in enumerate(value)]
    return value


def validate(schema: dict, arguments: Any) -> dict[str, Any]:
    """``arguments`` checked against ``schema`` with its defaults filled in; ToolError naming the
    first bad field otherwise."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError(f"arguments must be a JSON object, got {_describe(arguments)}")
    props: dict[str, dict] = schema.get("properties", {})
    unknown = [k for k in arguments if k not in props]
    if unknown and schema.get("additionalProperties") is False:
        raise ToolError(f"unknown argument; the arguments are {', '.join(props) or 'none'}", str(unknown[0]))
    for name in schema.get("required", ()):
        if arguments.get(name) is None:
            raise ToolError("is required", name)
    out: dict[str, Any] = {}
    for name, prop in props.items():
        value = arguments.get(name)
        if value is None:
            out[name] = prop.get("default")
            continue
        out[name] = _check(name, prop, value)
    return out
