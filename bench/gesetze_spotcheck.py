"""Spot check of the replayed German corpus: a unit read "as of" a date equals the Markdown of the
commit in force on that date (issue 24, point 4).

    .venv/bin/python bench/gesetze_spotcheck.py --home H [--acts 20] [--seed 24]

``H`` is a home the gesetze history was replayed into (``bench/replay.py``). For ``--acts`` acts
drawn at random (seeded) among those with at least two published versions, one § (or Art.) drawn
at random from the act's newest version, and three dates — the day of the act's first version, a
day between its versions, today — it reads ``GET /units/{id}?as_of=<date>`` through the HTTP API
(in process) and, independently of the parser, cuts the unit out of the raw Markdown of the commit
in force on that date (``git show``: the last commit changing the act on or before the date, from
the changesets the source lists): the block under the unit's heading up to the next heading, with
the Markdown's escapes, footnote marks and line breaks taken out. The two must be equal after the
same normalisation (one kind of space, quote and dash). Prints a row per read and the count of
matches. A unit the act gained later is read on a day before: the API's 404 and a Markdown without
its heading on that day agree ("equal (absent on both)").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.*?)\s*$")
_ESC = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>\"'])")
_FOOTREF = re.compile(r"\[\^[^\]]+\]")
# empty cells too: a lone "*"; "-" only as the converter's list marker, followed by two or more
# spaces ("-   Verordnung über …", BSchuWG § 9), not a wrapped line starting "- erforderlichenfalls"
_BULLETS = re.compile(r"(?m)^[ \t]*(?:(?:[*+](?:[ \t]+|$))|(?:-[ \t]{2,}))+")
# the converter printed an Anlage's reference note above its heading until its fixes of 2012-10-18
_ANNEX = re.compile(r"^(?:\(XXXX\)\s*)?(?:Anlagen?|Anhang)\b(?!.*\(zu)")
_ANNEX_NOTE = re.compile(r"\n\s*\((?:zu|zur|zum)\s[^\n]*(?:\n[^\n]+){0,3}\)\s*$")
_WRAPPED_HYPHEN = re.compile(r"(?<=\w)-[ \t]*\n[ \t]*(?=[A-ZÄÖÜ0-9])")  # "Zuständigkeits-\nund": a space


def normalise(text: str) -> str:
    """The words of a unit, for comparison. List markers at a line's start (``*``, ``+``; not ``-``,
    which starts wrapped lines of text: "… die\n- erforderlichenfalls eidliche - Vernehmung", RennwLottGABest
    § 49) are left out on both sides: they are layout, and the converter writes a table as a nested list
    (``*    *   cell``, a marker per row and per cell) that the parser renders as one marker per row
    with its cells on lines — the three differing reads of the first slice spot check
    (``de:glprzmichelstadtv:par:1``) had the same words in the same order. A compound the converter
    wrapped after its hyphen is one word again, as the parser reads it ("Leistungslohn-Mehrstunden");
    before a lower-case word the hyphen ends a word ("Zuständigkeits- und Aufgabenverteilung")."""
    from pipelines.statutes.de.structure import normalize_text

    text = _BULLETS.sub("", _FOOTREF.sub("", text or ""))
    # the converter wraps lines after the hyphen of a compound ("Erwin-Stein-\nSchule"): one word
    text = _WRAPPED_HYPHEN.sub("-", text)
    text = _ESC.sub(r"\1", text).replace("**", "").replace("\\*)", "")
    return re.sub(r"\s+", " ", normalize_text(text)).strip()


def markdown_unit(markdown: str, label: str) -> str | None:
    """The body of the unit headed ``label`` (``§ 573b``, ``Art 3``) up to the next heading, without
    footnote definitions and the publisher's notes below a ``-----`` rule."""
    lines = markdown.split("\n")
    want = re.compile(rf"^{re.escape(label)}(?![0-9a-z])")
    for i, ln in enumerate(lines):
        h = _HEADING.match(ln)
        if not h:
            continue
        text = _ESC.sub(r"\1", h["text"]).strip()
        if want.match(text):
            body, following = [], ""
            for nxt in lines[i + 1:]:
                nh = _HEADING.match(nxt)
                if nh or re.match(r"^-{3,}\s*$", nxt):
                    following = _ESC.sub(r"\1", nh["text"]).strip() if nh else ""
                    break
                if re.match(r"^\[\^[^\]]+\]:", nxt.strip()):
                    continue
                body.append(nxt)
            text = "\n".join(body)
            if _ANNEX.match(following):  # "(zu § 2 Abs. 7)" above an Anlage heading is that Anlage's note
                text = _ANNEX_NOTE.sub("", text)
            return text
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--acts", type=int, default=20)
    ap.add_argument("--seed", type=int, default=24)
    args = ap.parse_args()

    import os

    from fastapi.testclient import TestClient

    from connectors.gesetze import GesetzeSource
    from core.layout import Layout
    from core.settings import get_settings
    from lexpipe.api.app import create_app
    from pipelines.reads.service import ReadService
    from pipelines.statutes.store import CorpusStore

    home = Path(args.home).resolve()
    os.environ["LEXPIPE_HOME"] = str(home)
    layout = Layout(home)
    store = CorpusStore(layout)
    source = GesetzeSource.open(layout, get_settings())
    history = source.history()
    commits: dict[str, list[tuple[str, str, str]]] = {}  # act → [(version, commit, path)]
    for c in history:
        for m in c.members:
            if m.change != "deleted":
                commits.setdefault(m.act_id, []).append((m.version, c.position, m.path))
    acts = sorted(a for a in commits if len(store.published_versions(a)) >= 2)
    rng = random.Random(args.seed)
    picked = rng.sample(acts, min(args.acts, len(acts)))
    client = TestClient(create_app(reads=ReadService.at(home)))
    today = dt.date.today().isoformat()
    rows, ok = [], 0
    for act in picked:
        versions = store.published_versions(act)
        arts = store.read(act, versions[-1], "articles", published_only=True).to_pylist()
        # top-level §§ and Artikel (de:<act>:par:N, de:<act>:art:N), in force: what the Markdown heads "§ N" / "Art N"
        arts = [a for a in arts if a["status"] == "in_force" and re.fullmatch(r"de:[^:]+:(par|art):[0-9]+[a-z]*", a["id"])]
        if not arts:
            continue
        art = rng.choice(arts)
        label = ("Art " if art["id"].split(":")[2] == "art" else "§ ") + art["number"]
        middle = versions[len(versions) // 2][:10]
        for day in (versions[0][:10], middle, today):
            resp = client.get(f"/units/{art['id']}", params={"as_of": day})
            in_force = [x for x in commits[act] if x[0][:10] <= day]
            version, commit, path = in_force[-1]
            md = (source.read(commit, path) or b"").decode("utf-8", errors="replace")
            raw = markdown_unit(md, label) or markdown_unit(md, label.replace("Art ", "Artikel "))
            if resp.status_code != 200:
                # a unit added later: the API has none on that day, nor does that day's Markdown head one
                absent = resp.status_code == 404 and raw is None
                ok += absent
                rows.append((act, art["id"], day, "-", version, "equal (absent on both)" if absent else
                             f"API {resp.status_code}: {resp.text[:80]}"))
                continue
            api = resp.json()
            a, b = normalise(api.get("text") or ""), normalise(raw or "")
            same = raw is not None and a == b
            ok += same
            rows.append((act, art["id"], day, api.get("version"), version,
                         "equal" if same else ("no such heading in the Markdown" if raw is None else
                                               f"differs: api {a[:60]!r} / md {b[:60]!r}")))
    print("| act | unit | as of | version read (API) | commit's version | result |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print(f"\n{ok} of {len(rows)} reads equal the Markdown of the commit in force ({len(picked)} acts, seed {args.seed})")
    print(json.dumps({"reads": len(rows), "equal": ok, "acts": len(picked)}))


if __name__ == "__main__":
    main()
