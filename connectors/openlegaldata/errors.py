"""The connector's exceptions, apart from the code that raises them.

Why a module of its own: every layer raises them (the cursor store, the page parser, the
client, both syncs) and callers catch ``OpenLegalDataError`` for all of them; here they import
nothing, so no layer has to import another just to raise or catch its error."""

from __future__ import annotations


class OpenLegalDataError(Exception):
    """The sync stopped; the cursor still points at the last fully committed page."""


class CursorContractError(OpenLegalDataError):
    """The server's page is not sorted by (updated_date, id) or lies below the cursor filter, or
    (date windows) holds a record whose decision date is outside the requested window."""


class PageFormatError(OpenLegalDataError):
    """A page body whose envelope (count/next/results) cannot be read at all."""


class SyncLockedError(OpenLegalDataError):
    """Another sync holds the lock for this LEXPIPE_HOME."""
