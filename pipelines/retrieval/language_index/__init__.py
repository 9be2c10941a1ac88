"""One embedded search index per language: acts and versions as fields (issue 24, point 6).

(The full description of the on-disk format and the measurements is written below once measured.)
"""

from pipelines.retrieval.language_index.index import LanguageIndex
from pipelines.retrieval.language_index.lock import IndexLocked
from pipelines.retrieval.language_index.snapshot import Resolution, Snapshot
from pipelines.retrieval.language_index.writer import CommitReport, IndexWriter

__all__ = ["LanguageIndex", "IndexWriter", "Snapshot", "Resolution", "CommitReport", "IndexLocked"]
