"""The one refusal a tool gives: a message for the caller (a model or a program) naming the field."""

from __future__ import annotations


class ToolError(ValueError):
    """Bad arguments, or a read the corpus cannot answer as asked. ``field`` is the argument at fault
    (None when no single one is); ``str(exc)`` starts with it, so the caller knows what to change."""

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        self.message = message
        super().__init__(message if field is None or message.startswith(f"{field}") else f"{field}: {message}")
