"""The asset check of a changeset: every version it published, validated again with the suites.

Why again, after the build's own checks: the check is what an operator reads in the Dagster UI
and what gates the index. It reads the *published* files (not the staging the build checked), so a
promotion that lost or mixed files is caught; it is the same GX suites (articles, nodes, chunks)
run in batches (:mod:`pipelines.statutes.batch_checks`). Quarantined acts are reported as a
warning: their last good version serves and they block nothing.

What it does not do twice: a published version whose three files hash to what the build
validated, under suites with the same fingerprint (the changeset's record keeps both), passed
those very suites on those very bytes; running GX again on them can only repeat the answer. Such
versions are counted as validated by the build and GX runs on the rest (a file changed since, a
record from before the hashes, or suites that changed). The weekly revalidation (run tag
``lexpipe/revalidation``) passes ``trust_build=False`` and validates every version again. Why:
the suites were half of the initial load (456 of 756 s for 6,183 acts, twice: BENCHMARKS.md,
"German federal law: the initial load").

What blocks (ERROR, the index does not move, later changesets wait): a published version that fails
the suites, or a *systemic* quarantine — most acts of a changeset of at least
:data:`SYSTEMIC_MIN_ACTS` failing (a parser or source regression, not a bad act). A changeset whose
one act is quarantined is not systemic: it once blocked the whole stream (the wide slice's
``BGBl. I 2012 Nr. 17``, one act, quarantined: every later commit refused to run behind it), while
the import quarantines 3 of 6,183 acts (0.05 %) and a gazette issue at most 1 of its acts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from core.layout import Layout
from pipelines.statutes.batch_checks import check_batch, suites_fingerprint, validated_files
from pipelines.statutes.store import CorpusStore

BATCH = 300
SYSTEMIC_MIN_ACTS = 10  # a changeset at least this large, more than half of it quarantined: systemic


@dataclass
class ChangesetCheck:
    passed: bool
    blocking: bool  # a failure that must stop the index (else a warning)
    description: str
    published: int
    quarantined: int
    rows: int = 0
    expectations: int = 0
    failures: dict[str, list[str]] = field(default_factory=dict)
    trusted: int = 0  # published versions whose files and suites are the ones the build validated


def recheck_changeset(layout: Layout, jurisdiction: str, key: str, *, max_tokens: int,
                      trust_build: bool = True) -> ChangesetCheck:
    """The check of changeset ``key`` (see the module docstring); ``trust_build=False`` validates
    every published version again, also those the build validated on the same bytes."""
    path = layout.changesets(jurisdiction) / f"{key}.json"
    if not path.exists():
        return ChangesetCheck(False, True, f"{key}: no record: the changeset was not built", 0, 0)
    rec = json.loads(path.read_text(encoding="utf-8"))
    outcomes = rec.get("outcomes", [])
    published = [(o["act_id"], o["version"]) for o in outcomes if o["outcome"] == "published"]
    quarantined = [o for o in outcomes if o["outcome"] == "quarantined"]
    store = CorpusStore(layout)
    failures: dict[str, list[str]] = {}
    rows = expectations = 0
    if trust_build:
        fingerprint = suites_fingerprint(max_tokens=max_tokens)
        trusted = {(o["act_id"], o["version"]) for o in outcomes
                   if o["outcome"] == "published" and _same_as_validated(layout, o, fingerprint)}
        published = [p for p in published if p not in trusted]
    else:
        trusted = set()
    for i in range(0, len(published), BATCH):
        batch = published[i:i + BATCH]
        tables = {n: {a: store.read(a, v, n, published_only=True) for a, v in batch} for n in ("articles", "nodes", "chunks")}
        report = check_batch(tables["articles"], tables["nodes"], tables["chunks"], max_tokens=max_tokens)
        failures.update(report.failures)
        rows += sum(report.rows.values())
        expectations = max(expectations, sum(report.expectations.values()))
    reasons: dict[str, int] = {}
    for o in quarantined:
        reasons[o["reason"]] = reasons.get(o["reason"], 0) + 1
    parts = [f"{key}: {len(published)} published version(s) validated ({rows} rows)"
             + (f", {len(trusted)} validated by the build on the same files and suites" if trusted else "")]
    if failures:
        parts.append(f"{len(failures)} FAILED: " + "; ".join(f"{a}: {' | '.join(f)}" for a, f in list(failures.items())[:5]))
    if quarantined:
        parts.append(f"{len(quarantined)} quarantined ({', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))}), "
                     "e.g. " + "; ".join(f"{o['act_id']}: {o['message'][:150]}" for o in quarantined[:3]))
    blocking = bool(failures) or systemic(len(published) + len(trusted), len(quarantined))
    return ChangesetCheck(not failures and not quarantined, blocking, "; ".join(parts),
                          len(published) + len(trusted), len(quarantined), rows, expectations, failures, len(trusted))


def _same_as_validated(layout: Layout, outcome: dict, fingerprint: str) -> bool:
    """Whether a published version's files are the bytes its build validated, under these suites."""
    validated = outcome.get("validated") or {}
    if validated.get("suites") != fingerprint or not validated.get("files"):
        return False
    directory = layout.version_dir(outcome["act_id"], outcome["version"])
    try:
        return validated_files(directory) == validated["files"]
    except OSError:  # a file missing: validate, and let the suites say what is wrong
        return False


def systemic(published: int, quarantined: int) -> bool:
    """More than half of a changeset of at least :data:`SYSTEMIC_MIN_ACTS` acts quarantined."""
    return published + quarantined >= SYSTEMIC_MIN_ACTS and quarantined * 2 > published + quarantined
