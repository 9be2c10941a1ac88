"""The search page's screenshots in docs/img/search/ (docs/search-page.md and the README show them).

    .venv/bin/python docs/make_screenshots.py [--home .lexpipe] [--out docs/img/search] [--port 0]

Starts ``lexpipe serve`` over ``--home`` (default: this checkout's ``.lexpipe``, the full corpus that
``make run`` builds, with the encoder of ``LEXPIPE_ENCODER`` — its default for the real index), waits
for ``/health`` and drives the system Chromium (headless, 1280×900) through the states the browser
test checks (tests/ui/test_search_page.py): results with highlights and facets, a filtered search,
a unit with its timeline and word diff, an article cited by court decisions, the same unit at an
older date, a German unit, and the
search at phone width (360×740). Each PNG is reduced to a 256-colour palette (as the Dagster UI
screenshots: nothing visible is lost and the file shrinks about 2.5×); the script fails when one
is over ``--max-kb``. The home is only read.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 740}
PL_UNIT, PL_NEW, PL_OLD = "pl:kc:art:709^2", "2025-11-13", "2024-12-19"  # changed: written form → document form
CITED_UNIT = "pl:kc:art:471"  # cited in 16 SAOS judgments of the full corpus (119 citations)
DE_UNIT, DE_AS_OF = "de:bgb:par:536", "2024-11-28"  # Mietminderung, changed 2013 → 2021


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(home: Path, port: int, log: Path, timeout_s: float = 300) -> tuple[subprocess.Popen, str]:
    """``lexpipe serve`` over ``home`` in its own session; returns once /health names a served act."""
    env = {**os.environ, "LEXPIPE_HOME": str(home), "LEXPIPE_OFFLINE": "true",
           "LEXPIPE_API_RATE_READ_BURST": str(10 ** 6), "LEXPIPE_API_RATE_READ_PER_S": str(10 ** 6)}
    script = Path(sys.executable).with_name("lexpipe")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "lexpipe.cli"]
    with log.open("wb") as out:
        proc = subprocess.Popen([*cmd, "serve", "--port", str(port)], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"lexpipe serve exited with {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=10) as res:
                if json.load(res).get("serving"):
                    return proc, base
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(1)
    stop(proc)
    raise SystemExit(f"lexpipe serve did not answer /health in {timeout_s:.0f} s: {log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def shoot(page, out: Path, name: str, max_kb: int, *, full_page: bool = False) -> Path:
    """The page (viewport, or whole) as a 256-colour PNG, staged and renamed into place."""
    from PIL import Image

    target, staged = out / f"{name}.png", out / f".{name}.tmp.png"
    raw = page.screenshot(full_page=full_page, type="png")
    with Image.open(io.BytesIO(raw)) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(staged, "PNG", optimize=True)
    os.replace(staged, target)
    kb = target.stat().st_size / 1024
    print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: {kb:.0f} KB")
    if kb > max_kb:
        raise SystemExit(f"{target}: {kb:.0f} KB > {max_kb} KB")
    return target


def unit_url(base: str, unit_id: str, as_of: str, lang: str | None = None) -> str:
    q = {"as_of": as_of, **({"lang": lang} if lang else {})}
    return f"{base}/ui/units/{urllib.parse.quote(unit_id, safe=':^')}?{urllib.parse.urlencode(q)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=str(REPO / ".lexpipe"))
    ap.add_argument("--out", default=str(REPO / "docs" / "img" / "search"))
    ap.add_argument("--port", type=int, default=0, help="0: a free one")
    ap.add_argument("--max-kb", type=int, default=300)
    args = ap.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"no {CHROMIUM} (make browser)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Path("/tmp") / f"make_screenshots_{os.getpid()}.log"  # the server's output, for a failed start
    proc, base = start_serve(Path(args.home).resolve(), args.port or free_port(), log)
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport=VIEWPORT, locale="pl-PL")
            page.set_default_timeout(120_000)

            # 1. results: typed and submitted with Enter, highlights and facets
            page.goto(f"{base}/ui/search")
            page.locator("#q").fill("umowy leasingu")
            with page.expect_navigation():
                page.locator("#q").press("Enter")
            page.locator("#results li.hit").first.wait_for()
            shoot(page, out, "search_results", args.max_kb)

            # 2. filtered: the act select and a date (the Civil Code as it was on the older date)
            page.goto(f"{base}/ui/search?" + urllib.parse.urlencode(
                {"q": "umowa leasingu forma", "act": "pl:kc", "as_of": PL_OLD, "retriever": "bm25"}))
            page.locator("#results li.hit").first.wait_for()
            shoot(page, out, "search_filtered", args.max_kb)

            # 3. a unit at the newer version, then its timeline with the word diff
            page.goto(unit_url(base, PL_UNIT, PL_NEW))
            page.locator("#unit-text").wait_for()
            shoot(page, out, "unit", args.max_kb)
            # an article the SAOS judgments cite most: the cited-by section
            page.goto(unit_url(base, CITED_UNIT, PL_NEW))
            page.locator("#cited-by").wait_for()
            shoot(page, out, "unit_cited_by", args.max_kb, full_page=True)

            # 4. the same unit at the older date, through the date form
            page.goto(unit_url(base, PL_UNIT, PL_NEW))
            page.locator("#unit-as-of").fill(PL_OLD)
            with page.expect_navigation():
                page.locator("#date-submit").click()
            shoot(page, out, "unit_older_date", args.max_kb)

            # 5. a German unit, German interface
            page.goto(unit_url(base, DE_UNIT, DE_AS_OF, lang="de"))
            page.locator("#unit-text").wait_for()
            shoot(page, out, "unit_german", args.max_kb, full_page=True)

            # 6. phone width
            page.set_viewport_size(PHONE)
            page.goto(f"{base}/ui/search?" + urllib.parse.urlencode({"q": "umowy leasingu"}))
            page.locator("#results li.hit").first.wait_for()
            shoot(page, out, "phone_search", args.max_kb)
            page.goto(unit_url(base, PL_UNIT, PL_NEW))
            shoot(page, out, "phone_unit", args.max_kb)
            browser.close()
    finally:
        stop(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
