"""What the search-page browser test serves and reads: ``lexpipe serve`` over a copy of the session
corpus, the JSON API of the same server, and readers of the rendered pages.

Why a real subprocess and not the TestClient: the pages must work exactly as an operator starts
them (``lexpipe serve`` reading ``LEXPIPE_HOME``), and the browser needs a real socket. The corpus
is the session's published Civil Code (OLD and NEW, hashing encoder), copied because the server
may write into its home (subscriptions, the change feed's state).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ui_world import start_lexpipe, stop_ui  # tests/ui

SERVE_START_TIMEOUT_S = 120  # the app imports spaCy and opens the index on first use: ~10 s idle


def copy_home(corpus_home: Path, root: Path) -> Path:
    """A writable copy of the session's read-only ``$LEXPIPE_HOME`` under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copytree(corpus_home, root / "home", symlinks=True))


def serve_env(home: Path, *, encoder: str = "hashing") -> dict[str, str]:
    """The environment ``lexpipe serve`` runs with: the home, the encoder its index was built with
    (the query vectors must come from the same one), offline, and the per-client read limit lifted —
    the browser and the test's API comparisons all come from one address (127.0.0.1)."""
    return {**os.environ, "LEXPIPE_HOME": str(home), "LEXPIPE_ENCODER": encoder, "LEXPIPE_OFFLINE": "true",
            "LEXPIPE_API_RATE_READ_BURST": str(10 ** 6), "LEXPIPE_API_RATE_READ_PER_S": str(10 ** 6)}


def health(base_url: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=10) as res:
            return json.load(res) if res.status == 200 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def start_serve(home: Path, log: Path, *, encoder: str = "hashing") -> tuple[subprocess.Popen, str]:
    """``lexpipe serve --port <free>`` over ``home`` in its own session (stopped with
    ``stop_serve``); returns once ``/health`` answers with a served act."""
    return start_lexpipe(["serve", "--host", "127.0.0.1"], serve_env(home, encoder=encoder), log,
                         ready=lambda base: bool((health(base) or {}).get("serving")),
                         timeout_s=SERVE_START_TIMEOUT_S, poll_s=0.5)


def stop_serve(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (uvicorn shuts down gracefully), SIGKILL after 30 s."""
    stop_ui(proc)


def get(base_url: str, path: str, params: dict | list | None = None, *,
        follow: bool = True) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of ``GET path?params``; 4xx/5xx are answers, not exceptions.
    ``follow=False`` returns a redirect itself."""
    query = urllib.parse.urlencode(params or {}, doseq=True)
    url = f"{base_url}{path}" + (f"?{query}" if query else "")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(*(() if follow else (NoRedirect,)))
    try:
        with opener.open(url, timeout=60) as res:
            return res.status, dict(res.headers), res.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def api(base_url: str, path: str, params: dict | list | None = None) -> tuple[int, dict]:
    """(status, JSON body) of the JSON API."""
    status, _, body = get(base_url, path, params)
    return status, json.loads(body)


def unit_path(unit_id: str) -> str:
    """``/units/{id}`` with the id as the API's routes take it (``^`` and ``:`` kept)."""
    return "/units/" + urllib.parse.quote(unit_id, safe=":^")


# -- reading pages ---------------------------------------------------------------------------------

def hits(page) -> list[dict[str, str]]:
    """Every ``li.hit`` of ``#results``: its data attributes, link and shown parts."""
    return page.eval_on_selector_all("#results li.hit", """lis => lis.map(li => {
        const text = sel => { const e = li.querySelector(sel); return e ? e.innerText.trim() : null; };
        const a = li.querySelector('a.hit-link');
        return {article_id: li.dataset.articleId, act_id: li.dataset.actId, version: li.dataset.version,
                status: li.dataset.status, href: a ? a.getAttribute('href') : null, title: text('a.hit-link'),
                act: text('.hit-act'), path: text('.hit-path'), shown_version: text('.hit-version'),
                shown_status: text('.hit-status'), snippet: text('p.snippet'),
                marks: Array.from(li.querySelectorAll('p.snippet mark')).map(m => m.innerText.trim())};
    })""")


def facets(page, list_id: str, key: str) -> dict[str, dict]:
    """``#facet-act`` / ``#facet-status`` items: data-<key> → {count, href}."""
    rows = page.eval_on_selector_all(f"#{list_id} > li", f"""lis => lis.map(li => ({{
        key: li.getAttribute('data-{key}'), count: li.dataset.count,
        href: li.querySelector('a') ? li.querySelector('a').getAttribute('href') : null}}))""")
    return {r["key"]: {"count": r["count"], "href": r["href"]} for r in rows}


def query_params(url: str) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query, keep_blank_values=True)


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def normalise(text: str) -> str:
    """Whitespace collapsed: the page wraps paragraphs in elements, the API joins them with
    newlines; the words and their order must be the same. The page prints a superscript as one
    (385¹), the API's text as ``^N`` (385^1): both read as ``^N``."""
    text = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)
    return " ".join(text.split())
