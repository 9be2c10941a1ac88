"""``ReadService``: the read layer's one entry point, over one ``$LEXPIPE_HOME``.

Every method is a plain function of :mod:`pipelines.reads` bound to one cached
:class:`~pipelines.reads.corpus.CorpusReader`; keep one service per home for the life of a process
(the API app does) so warm reads stay in memory.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from core.layout import Layout
from pipelines.reads import citing, diffs, export, history, toc, units, versions
from pipelines.reads.corpus import CorpusReader


class ReadService:
    def __init__(self, reader: CorpusReader):
        self.reader = reader

    @classmethod
    def at(cls, home: Path | str) -> "ReadService":
        return cls(CorpusReader(Layout(Path(home))))

    @classmethod
    def from_layout(cls, layout: Layout) -> "ReadService":
        return cls(CorpusReader(layout))

    @property
    def home(self) -> Path:
        return self.reader.layout.home

    def acts(self) -> list[versions.ActSummary]:
        return versions.list_acts(self.reader)

    def act(self, act_id: str) -> versions.ActSummary:
        return versions.act_summary(self.reader, act_id)

    def versions(self, act_id: str) -> list[versions.VersionSummary]:
        return versions.list_versions(self.reader, act_id)

    def version(self, act_id: str, version: str) -> versions.VersionSummary:
        return versions.version_summary(self.reader, act_id, version)

    def toc(self, act_id: str, as_of: str | dt.date | None = None) -> toc.TableOfContents:
        return toc.toc_at(self.reader, act_id, as_of)

    def unit(self, unit_id: str, as_of: str | dt.date | None = None) -> units.UnitAtDate:
        return units.unit_at(self.reader, unit_id, as_of)

    def history(self, unit_id: str) -> history.UnitHistory:
        return history.unit_history(self.reader, unit_id)

    def diff(self, act_id: str, from_version: str, to_version: str) -> diffs.ActDiff:
        return diffs.act_diff(self.reader, act_id, from_version, to_version)

    def export(self, act_id: str, version: str, table: str = "articles", fmt: str = "parquet") -> export.Export:
        return export.export(self.reader, act_id, version, table, fmt)

    def cited_by(self, unit_id: str) -> citing.CitedBy:
        """The court decisions citing an article / § (``held=False`` when the home has no case law)."""
        return citing.cited_by(self.reader, unit_id)
