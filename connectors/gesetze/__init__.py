"""The gesetze connector: a bundestag/gesetze-style git repository of German federal law, one module per concern.

    git        ``GitRepo``: the repository through the ``git`` command (clone/fetch, blobs, diffs)
    history    first-parent commits → ``Changeset``s: kind (import, bgbl, banz, fixes, refresh),
               gazette (``BGBl. I 2012 Nr. 63``), the acts changed and their version ids
    catalogue  the acts at a commit (``<letter>/<slug>/index.md``, front matter of any era)
    settings   ``LEXPIPE_GESETZE_*``: the repository URL, branch, replay mode
    source     ``GesetzeSource``: what the source offers (replay cursor), texts, the home's catalogue
"""

from connectors.gesetze.git import GitError, GitRepo
from connectors.gesetze.history import act_id_of, changesets, classify, commit_records, slug_of
from connectors.gesetze.settings import GesetzeSettings
from connectors.gesetze.source import SOURCE, GesetzeSource, ReplayError

__all__ = ["GitError", "GitRepo", "GesetzeSettings", "GesetzeSource", "ReplayError", "SOURCE", "act_id_of",
           "changesets", "classify", "commit_records", "slug_of"]
