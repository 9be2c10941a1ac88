"""The one refusal a tool gives: a message for the caller (a model or a program) naming the field."""

from __future__ import annotations


class ToolError(ValueError):
    """Bad arguments, or a read the corpus cannot answer as asked. ``field`` is the argument at fault
    (None when no single one is); ``str(exc)`` then starts with ``"<field>: "``, so the caller knows
    what to change ("as_of must be a real date …" from the read layer reads "as_of: must be …")."""

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        if field is not None:
            if message.startswith(f"{field} "):
                message = message[len(field) + 1:]
            if not message.startswith(f"{field}: "):
                message = f"{field}: {message}"
        self.message = message
        super().__init__(message)
