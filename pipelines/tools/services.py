"""What the tools read through: one ReadService, one SearchService, one CitationResolver per home.

Each is opened on first use and kept for the life of the process (the reads cache per file, the
search backends hold their index in memory): an MCP session that only reads units never opens the
search index (opening the embedded index of the real corpus with its encoder takes seconds, a unit
read about a millisecond once warm). Opening is guarded by a lock because the MCP server runs
tool handlers in worker threads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from pipelines.tools.errors import ToolError


class Services:
    def __init__(self, *, settings: Any = None, reads: Any = None, search: Any = None, resolver: Any = None):
        """``settings``: a ``core.settings.Settings`` (its ``home`` is the corpus); services passed in
        are used as given (tests, an app that already holds them)."""
        self.settings = settings
        self._reads, self._search, self._resolver = reads, search, resolver
        self._lock = threading.Lock()

    @classmethod
    def at(cls, home: Path | str | None = None, **overrides: Any) -> "Services":
        """Over ``home`` (default: ``LEXPIPE_HOME``), other settings from the environment or ``overrides``
        (e.g. ``encoder="hashing"``)."""
        from core.settings import get_settings

        update = dict(overrides)
        if home is not None:
            update["home"] = Path(home)
        return cls(settings=get_settings().model_copy(update=update))

    @property
    def home(self) -> Path:
        if self.settings is not None:
            return Path(self.settings.home)
        return self.reads.home

    def _open(self, attr: str, make: Callable[[], Any]) -> Any:
        value = getattr(self, attr)
        if value is None:
            with self._lock:
                value = getattr(self, attr)
                if value is None:
                    value = make()
                    setattr(self, attr, value)
        return value

    @property
    def reads(self):
        from pipelines.reads import ReadService

        return self._open("_reads", lambda: ReadService.at(self.settings.home))

    @property
    def search(self):
        from pipelines.retrieval.service import SearchService

        return self._open("_search", lambda: SearchService.from_settings(self.settings))

    @property
    def resolver(self):
        return self._open("_resolver", self._make_resolver)

    def _make_resolver(self):
        try:
            from pipelines.resolver import CitationResolver
        except ImportError as exc:
            raise ToolError(f"the citation resolver is not available in this installation ({exc})") from None
        return CitationResolver(self.reads)
