"""What the browser test builds and drives: the recorded runs, ``lexpipe ui``, page readers.

Why a throwaway ``DAGSTER_HOME`` and real runs: the Dagster UI shows only what the instance it
reads has recorded, so the corpus job is materialised into that instance (not an ephemeral one)
and the webserver is then started on the same home exactly as an operator starts it.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from corpus_fixtures import (  # tests/, on sys.path via conftest
    NEW, OLD, REPO, PublishedCorpus, copy_published_corpus, dagster_home_env, open_instance, write_dagster_yaml,
)

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; CI installs it (`make browser`)
# Without the background-networking flags Chromium keeps calling Google services, which on a closed
# network means a stream of refused connections; the profile is fresh per module.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BROKEN = "2026-01-15"  # a newer version whose PDF lost most of its pages: must be blocked
BROKEN_KEEP_PAGES = 40  # of 242: downloads and parses, but ~80 % of the articles are gone
UI_START_TIMEOUT_S = 180  # first start on 2 busy cores: code server + webserver + daemon


@dataclass(frozen=True)
class UiWorld:
    """Where the runs were recorded and what they returned (``version -> PartitionRun``)."""

    root: Path
    home: Path  # $LEXPIPE_HOME
    dagster_home: Path
    samples: Path
    runs: dict


def chromium_missing() -> str | None:
    """None when the system Chromium is there, else what to do about it."""
    if CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK):
        return None
    return f"no {CHROMIUM} (apt-get install chromium)"


def broken_pdf(real: Path, keep_pages: int = BROKEN_KEEP_PAGES) -> bytes:
    """The unified text with all but its first ``keep_pages`` pages missing: still a readable PDF
    of the right act (download and parse succeed) but a structurally invalid corpus, which only
    the blocking GX check can catch."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(real)
    try:
        if len(doc) <= keep_pages:
            raise ValueError(f"{real}: {len(doc)} pages, cannot drop any beyond the first {keep_pages}")
        for i in range(len(doc) - 1, keep_pages - 1, -1):
            doc.del_page(i)
        buf = io.BytesIO()
        doc.save(buf)
        return buf.getvalue()
    finally:
        doc.close()


def build_world(root: Path, sample_dir: Path, corpus: PublishedCorpus) -> UiWorld:
    """Both real versions published and indexed (hashing encoder), then the broken newer version,
    blocked by its check — all recorded in one DAGSTER_HOME under ``root``. The first two runs are
    the session's ``published_corpus`` (the same main job, recorded in a DAGSTER_HOME with this
    test's dagster.yaml), copied here; only the broken version is run on the copy."""
    from lexpipe.runner import run_corpus
    from core.settings import Settings

    world = copy_published_corpus(corpus, root)
    home, dagster_home = world.home, world.dagster_home
    write_dagster_yaml(dagster_home)
    samples = root / "samples"
    isap = samples / "pl" / "isap"
    isap.mkdir(parents=True)
    real = sample_dir / "pl" / "isap"
    for v in (OLD, NEW):  # the read-only shared files, linked, never copied
        (isap / f"D19640093Lj_{v}.pdf").symlink_to(real / f"D19640093Lj_{v}.pdf")
    (isap / f"D19640093Lj_{BROKEN}.pdf").write_bytes(broken_pdf(real / f"D19640093Lj_{NEW}.pdf"))
    settings = Settings(home=home, sample_dir=samples, offline=True, parse_workers=2, encoder="hashing")
    with dagster_home_env(dagster_home), open_instance(dagster_home) as instance:
        assert sorted(instance.get_dynamic_partitions("pl_changesets")) == [f"{OLD}_kc", f"{NEW}_kc"]
        runs = run_corpus(settings, act_id="pl:kc", versions=[BROKEN], instance=instance, log_level="WARNING")
    return UiWorld(root, home, dagster_home, samples, {r.version: r for r in (*corpus.runs, *runs)})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def locations_loaded(base_url: str) -> bool:
    """True once every code location has loaded: the webserver answers HTTP well before that."""
    query = b'{"query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"}'
    req = urllib.request.Request(f"{base_url}/graphql", data=query, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            entries = json.load(res)["data"]["workspaceOrError"]["locationEntries"]
    except (urllib.error.URLError, OSError, KeyError, TypeError, ValueError):
        return False
    return bool(entries) and all(e["loadStatus"] == "LOADED" for e in entries)


def start_lexpipe(args: list[str], env: dict[str, str], log: Path, *, ready: Callable[[str], bool],
                  timeout_s: float, poll_s: float = 1.0) -> tuple[subprocess.Popen, str]:
    """``lexpipe <args> --port <free>`` in its own session (stopped with :func:`stop_ui`), output to
    ``log``; returns once ``ready(base_url)``. A process that exits or is not ready in ``timeout_s``
    raises RuntimeError with the end of its log."""
    port = free_port()
    script = Path(sys.executable).with_name("lexpipe")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                 "import sys; from lexpipe.cli import main; sys.exit(main())"]
    with log.open("wb") as out:
        proc = subprocess.Popen([*cmd, *args, "--port", str(port)], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    name = f"lexpipe {args[0]}"
    deadline = time.monotonic() + timeout_s
    while not ready(base_url):
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}; log {log}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            stop_ui(proc)
            raise RuntimeError(f"{name} was not ready within {timeout_s:.0f} s; log {log}:\n{log.read_text()[-4000:]}")
        time.sleep(poll_s)
    return proc, base_url


def start_ui(world: UiWorld, log: Path) -> tuple[subprocess.Popen, str]:
    """``lexpipe ui --port <free>`` over the world's homes; waits until its code location loaded.
    Started in its own session so the webserver, code server and daemon stop together."""
    env = {**os.environ, "DAGSTER_HOME": str(world.dagster_home), "LEXPIPE_HOME": str(world.home),
           "LEXPIPE_SAMPLE_DIR": str(world.samples), "LEXPIPE_OFFLINE": "true", "LEXPIPE_ENCODER": "hashing"}
    return start_lexpipe(["ui"], env, log, ready=locations_loaded, timeout_s=UI_START_TIMEOUT_S)


def stop_ui(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group started for the UI (dagster dev shuts its children down),
    SIGKILL if it does not stop in 30 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def save_screenshot(page, folder: Path, name: str, *, full_page: bool = False) -> Path:
    """Screenshot reduced to a 256-colour palette (UI pages lose nothing visible; the PNG shrinks
    about 2.5×, which matters for images committed to docs/), staged and renamed into place."""
    from PIL import Image

    target = folder / f"{name}.png"
    staged = folder / f".{name}.tmp.png"
    raw = page.screenshot(full_page=full_page, type="png")
    with Image.open(io.BytesIO(raw)) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(staged, "PNG", optimize=True)
    os.replace(staged, target)
    return target


# -- reading pages ---------------------------------------------------------------------------------

def table_rows(page, selector: str = "table tr") -> list[list[str]]:
    """Every row of the page's tables as the visible text of its cells (header rows have none)."""
    rows = page.eval_on_selector_all(
        selector, "rows => rows.map(r => Array.from(r.querySelectorAll('td')).map(td => td.innerText.trim()))")
    return [r for r in rows if r]


def metadata_table(page) -> dict[str, str]:
    """Key → shown value of the page's metadata tables. The asset overview's table starts with a
    row Key | Timestamp | Value; a partition's table has no such row and the value second."""
    shown: dict[str, str] = {}
    for rows in page.eval_on_selector_all("table", """tables => tables.map(t =>
            Array.from(t.querySelectorAll('tr')).map(r =>
                Array.from(r.querySelectorAll(':scope > td, :scope > th')).map(c => c.innerText.trim())))"""):
        at = 1
        if rows and rows[0][:1] == ["Key"] and "Value" in rows[0]:
            at, rows = rows[0].index("Value"), rows[1:]
        shown.update({r[0]: r[at] for r in rows if len(r) > at and r[0] not in shown})
    return shown
