"""How often each § / Art. is cited across the case store: a prior for retrieval and answers.

Why per § (not per Absatz): the § is the unit retrieval returns and exam questions ask about;
Absatz-level counts are too sparse on a few thousand decisions. A range (``§§ 184 bis 187``)
counts every § in it (up to 60), a list counts each member, and a § cited several times in one
decision counts once in ``cases`` and every time in ``citations``.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pyarrow as pa

from pipelines.case_law.chunks import iter_case_texts
from pipelines.citations.german import Citation, candidate_ids, make_nlp

CITATION_COUNTS = pa.schema([
    pa.field("unit_id", pa.string(), nullable=False),  # § / Art. level: de:bgb:par:433, de:gg:art:3
    pa.field("act_id", pa.string(), nullable=False),
    pa.field("in_corpus", pa.bool_(), nullable=False),  # the act is one lexpipe parses (BGB, GG, ...)
    pa.field("verified", pa.bool_()),  # the id exists among known_ids (null when none were given)
    pa.field("citations", pa.int64(), nullable=False),
    pa.field("cases", pa.int64(), nullable=False),
])


def section_ids(c: Citation) -> list[str]:
    """The § / Art. level ids a citation names (every § of a range)."""
    ids = candidate_ids(c)
    if not ids:
        return []
    prefix = ids[0].rsplit(":", 1)[0]  # de:bgb:par
    return [f"{prefix}:{n}" for n in c.section_numbers()]


def citation_counts(cases: pa.Table, *, known_ids: set[str] | frozenset[str] | None = None) -> pa.Table:
    """Citation counts per § over the decisions of a CASES table, most cited first."""
    nlp = make_nlp(known_ids=known_ids)
    cites: Counter[str] = Counter()
    in_cases: dict[str, set] = defaultdict(set)
    meta: dict[str, tuple[str, bool]] = {}
    for row, clean in iter_case_texts(cases):
        doc = nlp(clean.text)
        for c in doc._.citations:
            for uid in section_ids(c):
                cites[uid] += 1
                in_cases[uid].add((row["source"], row["case_id"]))
                meta[uid] = (c.act_id or "", c.in_corpus)
    rows = []
    for uid, n in sorted(cites.items(), key=lambda kv: (-kv[1], kv[0])):
        act, corpus = meta[uid]
        rows.append({"unit_id": uid, "act_id": act, "in_corpus": corpus,
                     "verified": (uid in known_ids) if (known_ids is not None and corpus) else None,
                     "citations": n, "cases": len(in_cases[uid])})
    return pa.Table.from_pylist(rows, schema=CITATION_COUNTS)
