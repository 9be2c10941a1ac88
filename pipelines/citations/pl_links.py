"""Polish judgments → the statute units they cite, linked to the act version in force on the
judgment's date, and per unit the judgments that cite it ("cited by").

Why two tables: ``CITATION_LINKS`` is the evidence (one row per cited unit of each citation: the
span in the judgment's clean text, the unit id, the version it resolved to and how exactly), what a
reader follows from a judgment to the law; ``CITED_BY`` is its aggregate per article, the way
round a reader of the law needs ("which judgments apply art. 98 k.p.c.?") and the same columns as
the German ``citation_counts`` (``pipelines/citations/counts.py``), so either serves as a retrieval
prior (:func:`citation_prior`).

Texts come from the same cleaner as the judgment chunks (``pipelines.case_law.pl``), so a link's
``char_start``/``char_end`` index the text the chunks cut. Resolution (``resolution`` column):

* ``exact``: the act is held and a published version was in force on the judgment's date;
* ``nearest``: the act is held, but only in versions newer than the judgment (all of SAOS's 2011
  judgments against today's unified texts) — ``exact_version`` false, the unit's status there and
  whether it changed since are given;
* ``out_of_corpus``: the act is not held; the unit id is the extractor's constructed id;
* ``unknown_act``: an ``art.`` whose act the judgment never names near it (no id at all).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import date
from typing import Any, Callable, Iterable

import pyarrow as pa

from core.layout import Layout
from pipelines.citations.polish import citations_of, make_pl_nlp
from pipelines.citations.version_links import HeldVersions, article_of

RESOLUTIONS = ("exact", "nearest", "out_of_corpus", "unknown_act")

CITATION_LINKS = pa.schema([
    pa.field("judgment_id", pa.int64(), nullable=False),
    pa.field("judgment_date", pa.date32(), nullable=False),
    pa.field("case_number", pa.string()),
    pa.field("court_type", pa.string()),
    pa.field("citation_index", pa.int32(), nullable=False),  # position of the citation in the judgment
    pa.field("char_start", pa.int32(), nullable=False),  # span in the judgment's clean text
    pa.field("char_end", pa.int32(), nullable=False),
    pa.field("text", pa.string(), nullable=False),  # the citation as printed
    pa.field("act_id", pa.string()),  # null: the act is not named near the citation
    pa.field("in_corpus", pa.bool_(), nullable=False),
    pa.field("unit_id", pa.string()),  # the most specific unit cited (pl:kpc:art:98:par:1)
    pa.field("article_id", pa.string()),  # its article (pl:kpc:art:98)
    pa.field("resolution", pa.string(), nullable=False),  # one of RESOLUTIONS
    pa.field("resolved_to_version", pa.string()),
    pa.field("exact_version", pa.bool_(), nullable=False),
    pa.field("status", pa.string()),  # in_force | repealed | pending | not_in_version | act_not_held
    pa.field("matched_id", pa.string()),  # the node found in that version (the unit, or its article)
    pa.field("changed_since", pa.bool_()),  # the matched node reads differently in the serving version
    pa.field("serving_version", pa.string()),
])

CITED_BY = pa.schema([
    pa.field("unit_id", pa.string(), nullable=False),  # article level: pl:kpc:art:98
    pa.field("act_id", pa.string(), nullable=False),
    pa.field("in_corpus", pa.bool_(), nullable=False),
    pa.field("verified", pa.bool_()),  # the article exists in a held version (null: act not held)
    pa.field("citations", pa.int64(), nullable=False),
    pa.field("cases", pa.int64(), nullable=False),  # judgments citing it (the German table's name)
    pa.field("judgment_ids", pa.list_(pa.int64()), nullable=False),
    pa.field("case_numbers", pa.list_(pa.string()), nullable=False),
    pa.field("first_date", pa.date32()),
    pa.field("last_date", pa.date32()),
])


def default_text(html: str) -> str:
    """The judgment's clean text: the cleaner the Polish chunks use."""
    from pipelines.case_law.pl.text import clean_judgment_text

    return clean_judgment_text(html).text


def _resolution(act_id: str | None, in_corpus: bool, exact: bool, version: str | None) -> str:
    if act_id is None:
        return "unknown_act"
    if not in_corpus or version is None:
        return "out_of_corpus"
    return "exact" if exact else "nearest"


def citation_links(judgments: pa.Table, layout: Layout, *,
                   text_of: Callable[[str], str] = default_text) -> pa.Table:
    """One ``CITATION_LINKS`` row per (citation, cited unit) of every judgment of a
    ``SAOS_JUDGMENTS`` table; a citation without an act gives one ``unknown_act`` row."""
    held = HeldVersions(layout)
    known: set[str] = set()
    for act in {a for a in _held_acts(held)}:
        known.update(held.nodes(act, held.versions(act)[-1]).keys())
    nlp = make_pl_nlp(known_ids=known or None)
    rows: list[dict[str, Any]] = []
    cols = judgments.select(["judgment_id", "judgment_date", "case_numbers", "court_type", "text_content"])
    for jid, jdate, numbers, court, html in zip(*(cols.column(c).to_pylist() for c in cols.column_names)):
        text = text_of(html)
        for i, c in enumerate(citations_of(text, date=jdate.isoformat() if jdate else None, nlp=nlp)):
            if c.article is None:
                continue  # a whole-act citation (a Dz. U. address): no unit to link
            base = {"judgment_id": jid, "judgment_date": jdate, "case_number": (numbers or [None])[0],
                    "court_type": court, "citation_index": i, "char_start": c.start, "char_end": c.end,
                    "text": c.text, "act_id": c.act_id, "in_corpus": bool(c.in_corpus)}
            unit_ids = c.unit_ids()
            if not unit_ids:
                rows.append({**base, "unit_id": None, "article_id": None, "resolution": "unknown_act",
                             "resolved_to_version": None, "exact_version": False, "status": None,
                             "matched_id": None, "changed_since": None, "serving_version": None})
                continue
            for uid in unit_ids:
                link = held.link(uid, c.act_id, jdate) if c.in_corpus else None
                version = link.resolved_to_version if link else None
                rows.append({**base, "unit_id": uid, "article_id": article_of(uid),
                             "resolution": _resolution(c.act_id, bool(c.in_corpus), bool(link and link.exact_version), version),
                             "resolved_to_version": version, "exact_version": bool(link and link.exact_version),
                             "status": link.status if link else "act_not_held",
                             "matched_id": link.matched_id if link else None,
                             "changed_since": link.changed_since if link else None,
                             "serving_version": link.serving_version if link else None})
    return pa.Table.from_pylist(rows, schema=CITATION_LINKS)


def _held_acts(held: HeldVersions) -> Iterable[str]:
    from schemas.acts import registry

    return [a.id for a in registry().of_jurisdiction("pl") if held.held(a.id)]


def resolution_counts(links: pa.Table) -> dict[str, int]:
    """Cited units per resolution (every key of RESOLUTIONS, zeros included)."""
    counts = Counter(links.column("resolution").to_pylist())
    return {r: counts.get(r, 0) for r in RESOLUTIONS}


def cited_by(links: pa.Table) -> pa.Table:
    """Per cited article: how often, by which judgments (most cited first). A judgment citing
    art. 98 § 1 and § 3 counts once in ``cases`` and twice in ``citations``."""
    rows = [r for r in links.select(["judgment_id", "judgment_date", "case_number", "act_id", "in_corpus",
                                      "article_id", "status"]).to_pylist() if r["article_id"]]
    cites: Counter[str] = Counter()
    judgments: dict[str, dict[int, tuple[str | None, date]]] = defaultdict(dict)
    meta: dict[str, tuple[str, bool, bool | None]] = {}
    for r in rows:
        uid = r["article_id"]
        cites[uid] += 1
        judgments[uid][r["judgment_id"]] = (r["case_number"], r["judgment_date"])
        verified = None if not r["in_corpus"] else r["status"] not in ("not_in_version", "act_not_held")
        prev = meta.get(uid)
        meta[uid] = (r["act_id"], r["in_corpus"], verified if prev is None or prev[2] is None else (prev[2] or bool(verified)))
    out = []
    for uid, n in sorted(cites.items(), key=lambda kv: (-len(judgments[kv[0]]), -kv[1], kv[0])):
        act, corpus, verified = meta[uid]
        js = sorted(judgments[uid].items())
        dates = [d for _, (_, d) in js if d is not None]
        out.append({"unit_id": uid, "act_id": act, "in_corpus": corpus, "verified": verified, "citations": n,
                    "cases": len(js), "judgment_ids": [j for j, _ in js],
                    "case_numbers": [cn for _, (cn, _) in js if cn], "first_date": min(dates) if dates else None,
                    "last_date": max(dates) if dates else None})
    return pa.Table.from_pylist(out, schema=CITED_BY)


def citation_prior(cited: pa.Table, *, weight: float = 1.0) -> dict[str, float]:
    """Article id → ``weight · log(1 + judgments citing it)``: a boost for retrieval, the same
    shape for the Polish ``cited_by`` and the German ``citation_counts`` tables."""
    return {u: weight * math.log1p(n) for u, n in zip(cited.column("unit_id").to_pylist(),
                                                       cited.column("cases").to_pylist())}
