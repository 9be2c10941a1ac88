"""The SAOS connector's exceptions, apart from the code that raises them.

Why a module of its own: the cursor store, the page reader, the client and the sync all raise
them, and callers catch ``SaosError`` for all of them; here they import nothing, so no layer has
to import another just to raise or catch its error.
"""

from __future__ import annotations


class SaosError(Exception):
    """The sync stopped; the cursor still points at the last fully committed page."""


class PageFormatError(SaosError):
    """A dump page whose envelope (``links`` / ``items``) cannot be read at all."""


class ContractError(SaosError):
    """A page that does not answer the query we sent: its ``self``/``next`` links name another
    query or page, it holds more items than ``pageSize``, or a record's judgment date lies outside
    the requested ``judgmentStartDate``..``judgmentEndDate``. Paging on by our cursor would then
    skip or repeat records, so the sync stops before writing anything of the page."""


class SyncLockedError(SaosError):
    """Another SAOS sync holds the lock for this LEXPIPE_HOME."""
