"""Benchmark staleness: which gold references a corpus version no longer supports as they were.

Exam questions cite units (``art. 709^2 k.c.``, ``art. 647^1 § 4 k.c.``) that the legislator can
repeal, renumber or reword. A retrieval metric computed against such a gold unit silently scores
the system on an answer key that no longer holds. For every corpus version, each in-corpus gold
reference of the benchmark table is resolved against the version's ``nodes`` / ``articles`` and,
when there is a previous version, compared unit by unit:

=================  =====  =====================================================================
reason             stale  meaning
=================  =====  =====================================================================
``missing``        yes    the unit (or its whole article) is not in this version, or exists only
                          in an announced reading not yet in force
``repealed``       yes    the unit or its article is repealed (``(uchylony)``)
``changed``        yes    the unit's text in force differs from the previous version
``pending_change`` yes    text in force unchanged, but the announced future reading of the unit
                          (ISAP ``< >`` text with its effective date) differs
``added``          yes    the unit did not exist in the previous version
``editorial``      no     only what ISAP reprints differently was (citations of other acts, spaces,
                          dashes, punctuation after a repeal marker: ``diff.editorial_form``)
=================  =====  =====================================================================

Unit level, not article level: an amendment of ``art. 647^1 § 1`` does not flag a question about
``§ 4`` of the same article when § 4 reads the same in force and in the announced reading. Paragraph
texts of the announced reading are cut out of the article's ``text_pending`` by their ``§ N.``
markers (points by ``N)``, letters by ``a)``); a unit that cannot be found there counts as changed —
a stale benchmark must never score the system silently, so doubt flags.

Plain functions over Arrow tables (``schemas.arrow`` ARTICLES, NODES, DIFF, BENCHMARK_QUESTIONS →
BENCHMARK_STALENESS); the Dagster asset ``benchmarks/staleness`` binds :func:`check_staleness`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
import pyarrow as pa

from pipelines.statutes.diff import editorial_form, word_diff
from schemas.arrow import BENCHMARK_STALENESS, from_rows

REASONS = ("missing", "repealed", "changed", "pending_change", "added", "editorial")
NOT_STALE = frozenset({"editorial"})
LEVEL_OF = {"par": "paragraph", "pt": "point", "lit": "letter", "ust": "paragraph"}
_SEGMENT = re.compile(r":(par|pt|lit|ust|art):")

# Unit markers at the start of a line of an article text (superscripts are written ^N).
_NUM = r"\d+[a-z]?(?:\^\d+)?"
_MARKERS = {
    "par": (lambda n: rf"^§\s*{re.escape(n)}\.", rf"^§\s*{_NUM}\."),
    "ust": (lambda n: rf"^{re.escape(n)}\.", rf"^{_NUM}\."),
    "pt": (lambda n: rf"^{re.escape(n)}\)", rf"^{_NUM}\)"),
    "lit": (lambda n: rf"^{re.escape(n)}\)", rf"^(?:[a-z](?:\^\d+)?|{_NUM})\)"),
}


@dataclass(frozen=True)
class GoldRef:
    question_id: str
    benchmark: str
    unit_id: str
    article_id: str
    raw: str

    @property
    def level(self) -> str:
        return unit_level(self.unit_id)


def unit_level(unit_id: str) -> str:
    """``pl:kc:art:5`` → article, ``…:par:2`` → paragraph, ``…:pt:3`` → point, ``…:lit:a`` → letter."""
    kinds = _SEGMENT.findall(unit_id)
    return LEVEL_OF.get(kinds[-1], "article") if kinds else "article"


def in_corpus_refs(questions: pa.Table, act_id: str) -> list[GoldRef]:
    """Every gold reference of ``questions`` into ``act_id`` (``in_corpus`` and joinable), in
    table order; one per (question, unit)."""
    out: dict[tuple[str, str], GoldRef] = {}
    cols = questions.select(["id", "benchmark", "gold_refs"]).to_pylist()
    for r in cols:
        for g in r["gold_refs"] or []:
            if g["in_corpus"] and g["act_id"] == act_id and g["unit_id"] and g["article_id"]:
                out.setdefault((r["id"], g["unit_id"]),
                               GoldRef(r["id"], r["benchmark"], g["unit_id"], g["article_id"], g["raw"]))
    return list(out.values())


def _cut(text: str, kind: str, number: str) -> str | None:
    """The part of ``text`` that is unit ``kind`` ``number``: from its marker at a line start to the
    next marker of the same kind; None when the marker is not there."""
    own, any_ = _MARKERS[kind]
    m = re.search(own(number), text, re.M)
    if m is None:
        return None
    nxt = re.compile(any_, re.M).search(text, m.end())
    return text[m.start():nxt.start() if nxt else len(text)].strip()


def unit_text_in(article_text: str, article_id: str, unit_id: str) -> str | None:
    """The unit's text cut out of a whole-article text (used for the announced reading, which the
    corpus keeps per article only). None when a level of the unit is not found."""
    text = article_text
    rest = unit_id[len(article_id):]
    for kind, number in re.findall(r":(par|pt|lit|ust):([^:]+)", rest):
        text = _cut(text, kind, number)
        if text is None:
            return None
    return text


class VersionUnits:
    """Lookups into one version's ARTICLES and NODES tables."""

    def __init__(self, articles: pa.Table, nodes: pa.Table):
        self.articles = {r["id"]: r for r in articles.select(
            ["id", "status", "status_note", "text", "text_pending", "pending_effective_date"]).to_pylist()}
        self.nodes = {r["id"]: r for r in nodes.select(["id", "level", "status", "text"]).to_pylist()}

    def has(self, unit_id: str) -> bool:
        return unit_id in self.nodes or unit_id in self.articles

    def in_force(self, ref: GoldRef) -> str | None:
        """The unit's text in force (node text includes its points and letters)."""
        if ref.unit_id == ref.article_id and ref.article_id in self.articles:
            return self.articles[ref.article_id]["text"] or ""
        node = self.nodes.get(ref.unit_id)
        return None if node is None else (node["text"] or "")

    def announced(self, ref: GoldRef) -> tuple[str | None, dt.date | None]:
        """The unit's reading once announced changes take effect (its text in force when the article
        has no pending change), and that date. None text: the unit is not in the announced reading."""
        art = self.articles.get(ref.article_id)
        if art is None or not art["text_pending"]:
            return self.in_force(ref), None
        if ref.unit_id == ref.article_id:
            return art["text_pending"], art["pending_effective_date"]
        return unit_text_in(art["text_pending"], ref.article_id, ref.unit_id), art["pending_effective_date"]


def _norm(text: str | None) -> str | None:
    return None if text is None else re.sub(r"\s+", " ", text).strip()


def _flag(ref: GoldRef, reason: str, detail: str, **extra) -> dict:
    return {"question_id": ref.question_id, "benchmark": ref.benchmark, "unit_id": ref.unit_id,
            "article_id": ref.article_id, "unit_level": ref.level, "ref_raw": ref.raw, "reason": reason,
            "stale": reason not in NOT_STALE, "detail": detail, **extra}


def check_ref(ref: GoldRef, cur: VersionUnits, prev: VersionUnits | None, *, version: str,
              previous_version: str | None, diff_rows: dict[str, dict] | None = None) -> dict | None:
    """The flag of one reference in ``version`` (a BENCHMARK_STALENESS row without the version
    columns), or None when the reference is fine."""
    diff_row = (diff_rows or {}).get(ref.article_id)
    extra = {"article_change": diff_row["change"] if diff_row else None}
    art = cur.articles.get(ref.article_id)
    if art is None:
        return _flag(ref, "missing", f"article {ref.article_id} is not in {version}", **extra)
    if not cur.has(ref.unit_id):
        return _flag(ref, "missing", f"{ref.unit_id} is not in {version} (its article is)", **extra)
    node = cur.nodes.get(ref.unit_id)
    if art["status"] == "repealed" or (node and node["status"] == "repealed"):
        which = "article" if art["status"] == "repealed" else ref.level
        note = art["status_note"] if which == "article" else (node["text"] or "")[:80]
        return _flag(ref, "repealed", f"{which} repealed in {version}: {note}".strip(), **extra)
    if node and node["status"] == "pending":
        return _flag(ref, "missing", f"{ref.unit_id} exists in {version} only in an announced reading, "
                                     "not in force", **extra)
    if prev is None:
        return None
    if not prev.has(ref.unit_id):
        return _flag(ref, "added", f"{ref.unit_id} is new in {version} (not in {previous_version})",
                     new_text=cur.in_force(ref), **extra)
    old, new = prev.in_force(ref), cur.in_force(ref)
    article_level = ref.unit_id == ref.article_id
    if _norm(old) != _norm(new):
        if editorial_form(old or "") == editorial_form(new or ""):
            reason, detail = "editorial", f"only an editorial difference (citation, typography) since {previous_version}"
        else:
            reason, detail = "changed", f"text in force changed since {previous_version}"
        diff = diff_row["unified_diff"] if article_level and diff_row and diff_row["unified_diff"] \
            and not (prev.articles[ref.article_id]["text_pending"] or art["text_pending"]) else word_diff(old, new)
        return _flag(ref, reason, detail, old_text=old, new_text=new, word_diff=diff, **extra)
    (old_f, _), (new_f, eff) = prev.announced(ref), cur.announced(ref)
    if _norm(old_f) != _norm(new_f):
        when = f"from {eff}" if eff else "from a date not given"
        if new_f is None:
            detail = f"text in force unchanged; the announced reading ({when}) no longer has {ref.unit_id}"
        else:
            detail = f"text in force unchanged; the announced reading ({when}) differs"
        if editorial_form(old_f or "") == editorial_form(new_f or "") and new_f is not None:
            return _flag(ref, "editorial", f"only an editorial difference in the announced reading ({when})",
                         old_text=old_f, new_text=new_f, word_diff=word_diff(old_f or "", new_f), **extra)
        return _flag(ref, "pending_change", detail, effective_date=eff, old_text=old_f, new_text=new_f,
                     word_diff=word_diff(old_f or "", new_f or ""), **extra)
    return None


def check_staleness(questions: pa.Table, *, act_id: str, version: str, articles: pa.Table, nodes: pa.Table,
                    previous_version: str | None = None, previous_articles: pa.Table | None = None,
                    previous_nodes: pa.Table | None = None, diff: pa.Table | None = None) -> pa.Table:
    """BENCHMARK_STALENESS rows for every flagged in-corpus gold reference of ``questions`` in
    ``version`` of ``act_id``, in question order. Without a previous version only ``missing`` and
    ``repealed`` can be flagged. ``diff`` (the version's DIFF from ``previous_version``) supplies
    ``article_change`` and the word diff of article-level references."""
    if (previous_articles is None) != (previous_nodes is None):
        raise ValueError("pass both previous_articles and previous_nodes, or neither")
    if previous_articles is not None and previous_version is None:
        raise ValueError("previous_articles given without previous_version")
    cur = VersionUnits(articles, nodes)
    prev = VersionUnits(previous_articles, previous_nodes) if previous_articles is not None else None
    diff_rows = {r["article_id"]: r for r in diff.to_pylist()} if diff is not None else {}
    rows = []
    for ref in in_corpus_refs(questions, act_id):
        flag = check_ref(ref, cur, prev, version=version, previous_version=previous_version if prev else None,
                         diff_rows=diff_rows)
        if flag is not None:
            rows.append({"act_id": act_id, "version": dt.date.fromisoformat(version),
                         "previous_version": dt.date.fromisoformat(previous_version) if prev else None, **flag})
    return from_rows(rows, BENCHMARK_STALENESS)


def stale_question_ids(flags: pa.Table) -> set[str]:
    """Questions with at least one stale reference (skip them when scoring this version)."""
    return {r["question_id"] for r in flags.select(["question_id", "stale"]).to_pylist() if r["stale"]}


def staleness_summary(questions: pa.Table, flags: pa.Table, act_id: str) -> dict[str, object]:
    """Counts for logs and asset metadata."""
    refs = in_corpus_refs(questions, act_id)
    rows = flags.to_pylist()
    by_reason_refs = Counter(r["reason"] for r in rows)
    by_reason_q: dict[str, set[str]] = {}
    for r in rows:
        by_reason_q.setdefault(r["reason"], set()).add(r["question_id"])
    stale = stale_question_ids(flags)
    return {
        "questions_checked": len({r.question_id for r in refs}),
        "refs_checked": len(refs),
        "flagged_refs": len(rows),
        "stale_refs": sum(r["stale"] for r in rows),
        "stale_questions": len(stale),
        **{f"refs_{k}": by_reason_refs.get(k, 0) for k in REASONS},
        **{f"questions_{k}": len(by_reason_q.get(k, ())) for k in REASONS},
    }


def flags_markdown(flags: pa.Table, limit: int = 40) -> str:
    """A readable table of the flags (asset metadata, reports)."""
    rows = flags.to_pylist()
    if not rows:
        return "No gold reference flagged."
    head = "| question | unit | reason | stale | detail | word diff |\n|---|---|---|---|---|---|\n"

    def cell(v: object, n: int = 160) -> str:
        s = str(v or "").replace("|", "/").replace("\n", " ")
        return s if len(s) <= n else s[: n - 1] + "…"

    body = "\n".join(f"| {cell(r['question_id'], 90)} | {cell(r['unit_id'], 50)} | {r['reason']} | "
                     f"{'yes' if r['stale'] else 'no'} | {cell(r['detail'])} | {cell(r['word_diff'], 240)} |"
                     for r in rows[:limit])
    more = f"\n\n… and {len(rows) - limit} more (see the Parquet table)" if len(rows) > limit else ""
    return head + body + more

