"""Replay the gesetze history commit by commit and report what each commit did (issue 24, point 4).

    .venv/bin/python bench/replay.py --home H [--steps N] [--report replay.jsonl] [--no-index]
    .venv/bin/python bench/replay.py --home H --summarise replay.jsonl   # the tables of a finished replay

``H`` is a home whose gesetze import is loaded (``lexpipe load de``). The replay runs in process
through the ``source_watch`` sensor in replay mode (``lexpipe.runner.run_replay``): each tick moves the
replay cursor once the previous commit is applied, the sensor requests the commit's run, the run
refreshes the acts the commit changed, then the changeset's webhook notifications are built and
delivered to a receiver on 127.0.0.1 subscribed to every act a later commit touches (``act``
subscriptions made before the replay, so every publication is news to them).

Per commit it checks against git and prints:

* the acts given a new version equal the acts ``git diff --name-only`` names (added or modified
  ``index.md``), less the quarantined; no other act got a version (the publications log);
* parsed / chunked = the acts built, index rows added (to be embedded) vs kept (carried over with
  their vectors): nothing else is re-parsed, re-chunked or re-embedded;
* units added / changed / repealed / removed / editorial (the act diffs);
* change-feed entries by kind (amendment / editorial / first) and webhook events delivered.

Then one table per commit kind (import, bgbl, banz, fixes, refresh): commits, acts touched,
units by change kind, wall time p50 / p95 per commit, total.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KINDS = ("import", "bgbl", "banz", "fixes", "refresh")
UNIT_KINDS = ("added", "changed", "repealed", "removed", "editorial")


class Receiver(BaseHTTPRequestHandler):
    received: Counter = Counter()
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            event = json.loads(body)
            key = (event.get("act_id"), event.get("to_version"))
        except ValueError:
            key = ("?", "?")
        with Receiver.lock:
            Receiver.received[key] += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def subscribe_every_later_act(layout, history, url: str) -> int:
    from pipelines.subscriptions.store import SubscriptionStore, list_subscriptions

    acts = sorted({m.act_id for c in history if c.kind != "import" for m in c.members if m.change != "deleted"})
    have = {s.act_id for s in list_subscriptions(layout)}
    store = SubscriptionStore(layout)
    made = 0
    try:
        for act in acts:
            if act in have:
                continue
            try:
                store.create(url=url, act_id=act, description="bench/replay.py receiver")
                made += 1
            except Exception:  # an act that is not published (quarantined at the import): nothing to hear
                continue
    finally:
        store.close()
    return made


def commit_check(layout, repo, rec: dict, log_lines: list[dict]) -> dict:
    """What git says the commit changed vs what got a version (the changeset record and the log)."""
    from connectors.gesetze.git import GitRepo
    from connectors.gesetze.history import slug_of

    cs = rec["changeset"]
    parent = cs.get("parent")
    sha = cs["position"]
    g = GitRepo(repo)
    named = {f"de:{slug_of(p)}" for st, p in g.changed(parent, sha) if slug_of(p) and st != "D"} if parent else set()
    outcomes = {o["act_id"]: o for o in rec["outcomes"]}
    versioned = {a for a, o in outcomes.items() if o["outcome"] == "published"}
    quarantined = {a for a, o in outcomes.items() if o["outcome"] == "quarantined"}
    logged = {d["act_id"] for d in log_lines}
    return {"named": len(named), "versioned": len(versioned), "quarantined": len(quarantined),
            "equal": (versioned | quarantined) == named if parent else None,
            "others_versioned": sorted(logged - named)[:5], "others": len(logged - named)}


def run(args) -> None:
    from connectors.gesetze import GesetzeSource
    from core.layout import Layout
    from core.settings import get_settings
    from lexpipe.runner import ensure_dagster_home, run_replay

    home = Path(args.home).resolve()
    os.environ["LEXPIPE_HOME"] = str(home)
    os.environ["LEXPIPE_GESETZE_REPLAY"] = "true"
    os.environ["LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS"] = "127.0.0.1"
    ensure_dagster_home()
    settings = get_settings()
    layout = Layout(home)
    source = GesetzeSource.open(layout, settings, replay=True)
    history = source.history()
    # --port: a resumed replay binds the port of the first one, to which its subscriptions point
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    print(f"receiver {url}; subscriptions made: {subscribe_every_later_act(layout, history, url)}")
    report = Path(args.report)
    log = layout.home / "corpus" / ".publications.jsonl"
    t0 = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:7.0f} s] {msg}", flush=True)

    run_replay(settings, steps=args.steps, report=report, index=not args.no_index, progress=progress)
    server.shutdown()
    summarise(layout, source.repo.path, report, Receiver.received, log)


def summarise(layout, repo: Path, report: Path, received: Counter | None, log: Path) -> None:
    from pipelines.subscriptions.feed import publication_entry

    rows = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    log_lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    per_kind: dict[str, list[dict]] = defaultdict(list)
    print("\n| changeset | kind | gazette | acts touched | new versions | quarantined | = git diff | other acts "
          "versioned | units added / changed / repealed / removed / editorial | index rows added / kept / chunks analysed | feed "
          "amendment / editorial | webhook events | s |")
    print("|---|---|---|---:|---:|---:|---|---:|---|---|---|---:|---:|")
    for r in rows:
        path = layout.changesets("de") / f"{r['key']}.json"
        rec = json.loads(path.read_text())
        rec["changeset"]["parent"] = _parent(repo, rec["changeset"]["position"])
        versions = {(o["act_id"], o["version"]) for o in rec["outcomes"] if o["outcome"] == "published"}
        lo, hi = r.get("publications_log") or (0, 0)
        check = commit_check(layout, repo, rec, log_lines[lo:hi])  # what was published during this commit's run
        feed = Counter()
        for act, version in versions:
            try:
                feed[publication_entry(layout, act, version).kind] += 1
            except Exception:
                feed["missing"] += 1
        events = sum(n for (a, v), n in (received or {}).items() if (a, v) in versions)
        # rows of an earlier process of a resumed replay (its receiver's counts are gone): what the
        # sender delivered, which equals what a receiver counts (2xx answers)
        events = events or int((r.get("notifications") or {}).get("delivered") or 0)
        diff = r.get("diff") or {}
        idx = r.get("index") or {}
        r.update(check=check, feed=dict(feed), events=events)
        per_kind[r["kind"]].append(r)
        print(f"| {r['key']} | {r['kind']} | {r.get('gazette') or '-'} | {r['acts']} | {check['versioned']} | "
              f"{check['quarantined']} | {check['equal']} | {check['others']} | "
              + " / ".join(str(diff.get(k, 0)) for k in UNIT_KINDS)
              + f" | {idx.get('rows_added', '-')} / {idx.get('rows_kept', '-')} / {idx.get('chunks_analysed', '-')} | {feed.get('amendment', 0)} / "
              f"{feed.get('editorial', 0)} | {events} | {r['seconds']:.1f} |")
    print("\n| kind | commits | acts touched | new versions | quarantined | units added | changed | repealed | "
          "removed | editorial | feed amendment / editorial | webhook events | s p50 | s p95 | s total |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for kind in (*KINDS, *sorted(set(per_kind) - set(KINDS))):
        rs = per_kind.get(kind)
        if not rs:
            continue
        secs = sorted(r["seconds"] for r in rs)
        p95 = secs[min(len(secs) - 1, int(round(0.95 * (len(secs) - 1))))]
        tot = Counter()
        for r in rs:
            tot.update(r.get("diff") or {})
        feed = Counter()
        for r in rs:
            feed.update(r["feed"])
        print(f"| {kind} | {len(rs)} | {sum(r['acts'] for r in rs)} | {sum(r['check']['versioned'] for r in rs)} | "
              f"{sum(r['check']['quarantined'] for r in rs)} | "
              + " | ".join(str(tot.get(k, 0)) for k in UNIT_KINDS)
              + f" | {feed.get('amendment', 0)} / {feed.get('editorial', 0)} | {sum(r['events'] for r in rs)} | "
              f"{statistics.median(secs):.1f} | {p95:.1f} | {sum(secs):.0f} |")
    bad = [r["key"] for r in rows if r["check"]["equal"] is False or r["check"]["others"]]
    print(f"\ncommits whose new versions differ from git diff --name-only, or that versioned another act: "
          f"{len(bad)} {bad[:10]}")


def _parent(repo: Path, sha: str) -> str | None:
    from connectors.gesetze.git import GitRepo

    shas = GitRepo(repo).first_parent("refs/remotes/origin/source")
    try:
        i = shas.index(sha)
    except ValueError:
        return None
    return shas[i - 1] if i else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--report", default="bench/out/replay.jsonl")
    ap.add_argument("--no-index", action="store_true")
    ap.add_argument("--port", type=int, default=0,
                    help="the receiver's port (0: any); resuming a stopped replay: the port it printed, and the "
                         "same --report (rows are appended)")
    ap.add_argument("--summarise", help="print the tables of a finished replay's report")
    args = ap.parse_args()
    if args.summarise:
        from core.layout import Layout

        home = Path(args.home).resolve()
        summarise(Layout(home), home / "sources" / "gesetze" / "repo", Path(args.summarise), None,
                  home / "corpus" / ".publications.jsonl")
        return
    run(args)


if __name__ == "__main__":
    main()
