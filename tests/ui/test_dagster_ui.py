"""Issue 6: what operators see in the Dagster UI, proven in a real browser.

``lexpipe ui`` runs over a DAGSTER_HOME where the corpus job published 2024-12-19 and 2025-11-13
and then built a newer version from a broken PDF (most pages missing), which the blocking
``articles_valid`` check stopped. Headless Chromium (the system package) opens the asset graph,
the served version's pages and the checks, and the test compares what is *shown* with what the
corpus on disk says — a missing asset, check or metadata entry fails it. Screenshots of every
page go to ``$LEXPIPE_UI_SCREENSHOTS`` (``docs/ui`` for the README's images).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import expect

from core.layout import Layout
from core.settings import Settings
from pipelines.statutes.store import CorpusStore
from pipelines.retrieval.index_build import open_backend
from ui_world import BROKEN, NEW, OLD, metadata_table, save_screenshot, table_rows  # tests/ui

ACT = "pl:kc"
LOCATION = "assets.definitions"  # the code location `lexpipe ui` loads (dagster dev -m …)
CHANGES = ("added", "changed", "repealed", "removed", "editorial")
# The UI renders after its GraphQL queries answer; on two shared cores that can take tens of
# seconds, far over expect()'s 5 s default. Waits end as soon as the text is there.
expect.set_options(timeout=60_000)


@dataclass(frozen=True)
class Expected:
    """An asset the UI must show: its key (as the UI's URLs spell it), its checks, and the
    metadata an operator needs on a version's page — which entry carries the version, the row
    count and the timing (the issue's list), plus further entries that must be there."""

    key: str
    checks: tuple[str, ...] = ()
    row_count: str | None = "dagster/row_count"
    timing: str = "seconds"
    version: str = "version"
    metadata: tuple[str, ...] = ()

    @property
    def shown(self) -> tuple[str, ...]:
        return tuple(k for k in (self.version, self.row_count, self.timing, *self.metadata) if k)


# Extend per source/job module: group name → the assets of that group the UI must show.
EXPECTED: dict[str, tuple[Expected, ...]] = {
    "pl_statutes": (  # the Polish statutes: one group, partitioned by changeset (assets/pl_statutes.py)
        Expected("pl/statutes/raw_pdf", row_count=None, metadata=("sha256", "bytes", "source_url")),
        Expected("pl/statutes/articles", checks=("articles_valid",), timing="parse_seconds",
                 metadata=("article_count", "pages", "reused_previous_parse", "count_superscript_articles",
                           "count_repealed", "preview")),
        Expected("pl/statutes/chunks", checks=("chunks_valid",), metadata=("max_tokens", "mean_tokens", "preview")),
        Expected("pl/statutes/diff", metadata=("previous_version", *(f"{c}_articles" for c in CHANGES), "summary")),
        Expected("pl/statutes/published", metadata=("serving_version", "published_versions", "validation")),
        Expected("pl/statutes/search_index", timing="build_seconds",
                 metadata=("documents", "embedded_chunks", "embed_seconds", "encoder", "serving_version")),
    ),
}
ALL = {e.key: e for group in EXPECTED.values() for e in group}
KEY = {v: f"{v}_kc" for v in (OLD, NEW, BROKEN)}  # a version of the Civil Code → its pl_changesets partition
VALIDATION_METADATA = ("validation_result", "validation_suite", "validation_expectations", "validation_failed",
                       "validation_rows", "validation_ms")


def _goto(page, url: str) -> None:
    page.goto(url, wait_until="networkidle")


def _wait_for_metadata(page, keys: tuple[str, ...]) -> dict[str, str]:
    """The metadata table once it shows every key (or the first missing one fails, by name)."""
    for key in keys:
        expect(page.get_by_text(key, exact=True).first, f"metadata entry {key!r} not shown").to_be_visible()
    return metadata_table(page)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.fixture(scope="module")
def corpus(ui_world) -> dict:
    """What the corpus on disk says about the served version: the UI must show the same."""
    layout = Layout(ui_world.home)
    store = CorpusStore(layout)
    vdir = layout.version_dir(ACT, NEW)
    diff = pq.read_table(vdir / f"diff_from_{OLD}.parquet")["change"].to_pylist()
    acts = pq.read_table(vdir / "acts.parquet").to_pylist()[0]
    return {
        "store": store, "layout": layout,
        "articles": pq.read_metadata(vdir / "articles.parquet").num_rows,
        "chunks": pq.read_metadata(vdir / "chunks.parquet").num_rows,
        "pages": acts["pages"], "sha256": store.manifest(vdir)["source_sha256"],
        "pdf_bytes": (ui_world.samples / "pl" / "isap" / f"D19640093Lj_{NEW}.pdf").stat().st_size,
        "diff": {c: diff.count(c) for c in CHANGES}, "diff_rows": len(diff),
        "diff_md": (vdir / f"diff_from_{OLD}.md").read_text(),
        "broken_articles": pq.read_metadata(layout.staging_dir(ACT, BROKEN) / "articles.parquet").num_rows,
    }


@pytest.mark.parametrize("group", sorted(EXPECTED))
def test_asset_graph_shows_every_asset_and_its_checks(group, page, ui_url, screenshot_dir):
    """The group's lineage graph draws a full node (status rows, not just a name) for every
    expected asset, and each node counts the asset's checks."""
    page.set_viewport_size({"width": 2300, "height": 1000})  # wide enough for full nodes
    try:
        _goto(page, f"{ui_url}/locations/{LOCATION}/asset-groups/{group}")
        for e in EXPECTED[group]:
            # a full node links its partitions; the href carries the whole key (pl/statutes/…)
            expect(page.locator(f'foreignObject a[href="/assets/{e.key}?view=partitions"]').first,
                   f"asset {e.key} missing from the {group} graph").to_be_visible()
            checks = page.locator(f'foreignObject a[href="/assets/{e.key}?view=checks"]')
            if e.checks:
                expect(checks.first, f"{e.key}: check count not shown").to_have_text(
                    re.compile(rf"\d+ / {len(e.checks)} Passed"))
            else:
                expect(checks).to_have_count(0)
        save_screenshot(page, screenshot_dir, f"asset_graph_{group}")
    finally:
        page.set_viewport_size({"width": 1600, "height": 1000})


def test_served_version_pages_show_counts_versions_timings_and_diff(page, ui_url, corpus, screenshot_dir):
    """Each asset's page for the served partition shows the metadata operators need, with the
    values the corpus on disk has."""
    shown = {}
    for key, e in ALL.items():
        _goto(page, f"{ui_url}/assets/{key}?view=partitions&partition={KEY[NEW]}")
        shown[key] = _wait_for_metadata(page, e.shown)
        if key in ("pl/statutes/articles", "pl/statutes/published"):
            save_screenshot(page, screenshot_dir, f"{key.rsplit('/', 1)[-1]}_{NEW}")
    rows = {"pl/statutes/articles": corpus["articles"], "pl/statutes/chunks": corpus["chunks"], "pl/statutes/diff": corpus["diff_rows"],
            "pl/statutes/published": corpus["articles"], "pl/statutes/search_index": corpus["chunks"]}
    for key, e in ALL.items():
        assert shown[key][e.version] == NEW, (key, shown[key])
        assert _number(shown[key][e.timing]) >= 0, (key, shown[key])
        if e.row_count:
            assert _number(shown[key][e.row_count]) == rows[key], (key, shown[key])
    articles, diff, published = shown["pl/statutes/articles"], shown["pl/statutes/diff"], shown["pl/statutes/published"]
    assert _number(articles["article_count"]) == corpus["articles"] and _number(articles["pages"]) == corpus["pages"]
    assert _number(articles["parse_seconds"]) > 0  # a real parse, not a reuse
    assert shown["pl/statutes/raw_pdf"]["sha256"] == corpus["sha256"]
    assert _number(shown["pl/statutes/raw_pdf"]["bytes"]) == corpus["pdf_bytes"]
    assert _number(shown["pl/statutes/search_index"]["documents"]) == corpus["chunks"]
    assert shown["pl/statutes/search_index"]["serving_version"] == NEW
    assert published["serving_version"] == NEW and published["published_versions"] == f"{OLD}, {NEW}"
    # diff summary: counts per kind of change, and the readable summary behind [Show Markdown]
    assert diff["previous_version"] == OLD
    assert {c: _number(diff[f"{c}_articles"]) for c in CHANGES} == corpus["diff"]
    _goto(page, f"{ui_url}/assets/pl/statutes/diff?view=partitions&partition={KEY[NEW]}")
    _wait_for_metadata(page, ALL["pl/statutes/diff"].shown)
    save_screenshot(page, screenshot_dir, f"diff_{NEW}")
    page.get_by_text("[Show Markdown]").first.click()
    dialog = page.get_by_role("dialog")
    headline = corpus["diff_md"].splitlines()[2]  # "0 added, 7 changed, … editorial"
    expect(dialog).to_contain_text(headline)
    first_changed = re.search(r"^## (Art\. \S+) — changed", corpus["diff_md"], re.M).group(1)
    expect(dialog).to_contain_text(first_changed)
    save_screenshot(page, screenshot_dir, f"diff_summary_{NEW}")
    page.keyboard.press("Escape")


def _check_history(page, ui_url: str, key: str, check: str) -> dict[str, list[str]]:
    """The check's execution history table: partition → its row (result, …, description)."""
    _goto(page, f"{ui_url}/assets/{key}?view=checks")
    page.get_by_text(check, exact=True).first.click()
    page.get_by_text("Execution history", exact=True).click()
    expect(page.get_by_role("cell", name=KEY[NEW], exact=True)).to_be_visible()
    rows = table_rows(page)
    by_key = {r[3]: r for r in rows if len(r) >= 5}
    return {v: by_key[k] for v, k in KEY.items() if k in by_key}  # version → its changeset's row


@pytest.mark.parametrize("key", [k for k, e in ALL.items() if e.checks])
def test_served_version_checks_passed_with_validation_results(key, page, ui_url, screenshot_dir):
    """Every check of the asset passed on the served version, and its GX validation results
    (suite, expectations evaluated, failures, rows, time) are shown with it."""
    for check in ALL[key].checks:
        history = _check_history(page, ui_url, key, check)
        assert NEW in history, f"{key} {check}: no evaluation of {NEW} shown: {history}"
        result, description = history[NEW][0], history[NEW][4]
        assert result == "Passed", history[NEW]
        assert re.search(r"all \d+ expectations passed", description), description
        row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=KEY[NEW], exact=True))
        row.get_by_role("button").last.click()  # the row's metadata ({})
        dialog = page.get_by_role("dialog")
        for k in VALIDATION_METADATA:
            expect(dialog.get_by_text(k, exact=True).first, f"{key} {check}: {k} not shown").to_be_visible()
        expect(dialog).to_contain_text("passed")
        save_screenshot(page, screenshot_dir, f"{check}_{NEW}_validation")
        page.keyboard.press("Escape")


def test_blocked_version_shows_failed_check_and_previous_stays_served(page, ui_url, ui_world, corpus, screenshot_dir):
    """The broken newer version's blocking check is shown failed (why, and on which partition);
    nothing downstream published it, and the previous version is still the one served."""
    history = _check_history(page, ui_url, "pl/statutes/articles", "articles_valid")
    assert history[BROKEN][0] == "Failed", history[BROKEN]
    assert "expect_table_row_count_to_be_between" in history[BROKEN][4], history[BROKEN]
    assert f"observed {corpus['broken_articles']}" in history[BROKEN][4], history[BROKEN]
    assert [history[v][0] for v in (OLD, NEW)] == ["Passed", "Passed"]
    save_screenshot(page, screenshot_dir, "articles_valid_history")
    # the check's partition view counts it too
    page.get_by_text("Partitions", exact=True).last.click()
    expect(page.get_by_text("Failed (1)", exact=True)).to_be_visible()
    expect(page.get_by_text("Passed (2)", exact=True)).to_be_visible()

    # published: the broken partition failed (its step never ran), the newest publication is NEW
    _goto(page, f"{ui_url}/assets/pl/statutes/published?view=partitions")
    expect(page.get_by_text("Failed (1)", exact=True)).to_be_visible()
    expect(page.get_by_text("Materialized (2)", exact=True)).to_be_visible()
    _goto(page, f"{ui_url}/assets/pl/statutes/published")
    shown = _wait_for_metadata(page, ("serving_version", "published_versions"))
    # the newest attempt is shown failed (the blocked run), the metadata is still NEW's
    expect(page.get_by_text("Failed in").first, "the blocked run is not shown as the latest attempt").to_be_visible()
    assert shown["serving_version"] == NEW and shown["published_versions"] == f"{OLD}, {NEW}", shown
    save_screenshot(page, screenshot_dir, "published_after_blocked_version")

    # …and on disk: the pointer, the published folders and the search index all still say NEW
    store, layout = corpus["store"], corpus["layout"]
    assert store.current_version(ACT) == NEW
    assert store.published_versions(ACT) == [OLD, NEW]
    assert not layout.version_dir(ACT, BROKEN).exists()
    backend = open_backend(Settings(home=ui_world.home, encoder="hashing", elasticsearch_url=None), act_id=ACT)
    assert backend.serving_version(ACT) == NEW
