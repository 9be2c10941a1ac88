"""Fixtures of the browser test, each built once per module: the recorded runs, a running
``lexpipe ui`` over them, one headless Chromium page, and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ui_world import (CHROMIUM, CHROMIUM_ARGS, REPO, UiWorld, build_world, chromium_missing, start_ui,  # tests/ui
                      stop_ui)


@pytest.fixture(scope="module")
def chromium() -> Path:
    """The system Chromium. CI must have it (``make test`` installs it first), so there a missing
    browser fails; a developer without it gets a skip that names the package."""
    reason = chromium_missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must install the browser before the tests (`make browser`)")
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="module")
def ui_world(request: pytest.FixtureRequest, tmp_path_factory, sample_dir: Path, chromium: Path) -> UiWorld:
    """OLD and NEW published (NEW served), BROKEN blocked by its check; recorded in a DAGSTER_HOME
    of its own (a copy of the session's ``published_corpus`` and its instance, then the BROKEN
    run). Depends on ``chromium`` so nothing is built when the browser is missing: the session
    corpus is requested only after that (a session fixture in the signature would come first)."""
    return build_world(tmp_path_factory.mktemp("ui"), sample_dir, request.getfixturevalue("published_corpus"))


@pytest.fixture(scope="module")
def ui_url(ui_world: UiWorld) -> Iterator[str]:
    """Base URL of ``lexpipe ui`` running over ``ui_world``; stopped after the module."""
    try:
        proc, base_url = start_ui(ui_world, ui_world.root / "lexpipe_ui.log")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield base_url
    finally:
        stop_ui(proc)


@pytest.fixture(scope="module")
def page(chromium: Path, ui_world: UiWorld):
    """One headless Chromium page with a fresh profile; generous timeouts, because the first
    load of the React app on two shared cores can take half a minute."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(ui_world.root / "chromium_profile"), executable_path=str(chromium), args=CHROMIUM_ARGS,
            headless=True, viewport={"width": 1600, "height": 1000})
        ctx.set_default_timeout(60_000)
        ctx.set_default_navigation_timeout(90_000)
        try:
            yield ctx.pages[0] if ctx.pages else ctx.new_page()
        finally:
            ctx.close()


@pytest.fixture(scope="module")
def screenshot_dir(ui_world: UiWorld) -> Path:
    """``$LEXPIPE_UI_SCREENSHOTS`` (``docs/ui`` refreshes the images the README shows), else a
    temp folder: a plain test run never rewrites tracked files."""
    env = os.environ.get("LEXPIPE_UI_SCREENSHOTS")
    path = Path(env) if env else ui_world.root / "screenshots"
    path = path if path.is_absolute() else REPO / path
    path.mkdir(parents=True, exist_ok=True)
    return path
