"""Which part of a publication concerns a subscription.

* **act**: every row of the version's diff table (article level, the kinds and word diffs the
  feed shows).
* **unit** ``U``: only ``U`` and its descendants.
  - ``U`` is a changed article, or a structure unit (book, title, …) above changed articles: those
    articles' diff rows.
  - ``U`` is inside a changed article (``pl:kc:art:709^13:par:2``): compared unit by unit against the
    previous version's ``nodes`` — ``U`` and every node below it — in force and in the announced
    reading (ISAP ``< >`` text, cut out of the article's ``text_pending`` by its ``§ N.`` / ``N)`` /
    ``a)`` markers). A change elsewhere in the article (its § 1 when ``U`` is § 2) is no match.
* **query**: the saved query run against the previous and the new version (a ``version`` filter
  on the search backend); the articles that entered or left its top k, and those that stayed but
  changed.

Plain functions over the published tables; the search is injected (:data:`QueryRunner`), so tests
and both orchestrators choose the backend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Protocol, Sequence

from core.layout import Layout
from pipelines.statutes.diff import editorial_form, word_diff
from pipelines.statutes.store import CorpusStore
from pipelines.subscriptions.feed import Publication

@dataclass(frozen=True)
class UnitChange:
    """One changed unit, as an event lists it."""

    unit_id: str
    article_id: str
    level: str  # article (a diff row) | paragraph | point | letter
    change: str  # added | changed | repealed | removed | editorial
    old_text: str | None
    new_text: str | None
    word_diff: str | None
    number: str | None = None
    reading: str = "in_force"  # in_force | announced (the change is in the reading not yet in force)
    effective_date: str | None = None  # announced: when it takes effect

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def article_changes(rows: list[dict]) -> list[UnitChange]:
    """Diff table rows (``Publication.diff_rows()``) as changes (article level)."""
    return [_article_row_change(r) for r in rows]


# ----------------------------------------------------------------------------------------------
# unit subscriptions


_NUM = r"\d+[a-z]?(?:\^\d+)?"
_MARKERS = {
    "par": (lambda n: rf"^§\s*{re.escape(n)}\.", rf"^§\s*{_NUM}\."),
    "ust": (lambda n: rf"^{re.escape(n)}\.", rf"^{_NUM}\."),
    "pt": (lambda n: rf"^{re.escape(n)}\)", rf"^{_NUM}\)"),
    "lit": (lambda n: rf"^{re.escape(n)}\)", rf"^(?:[a-z](?:\^\d+)?|{_NUM})\)"),
}


def unit_text_in(article_text: str, article_id: str, unit_id: str) -> str | None:
    """The unit's text cut out of a whole-article text (the announced reading is kept per article
    only); None when a level of the unit is not found. The rule of
    ``pipelines.benchmarks.staleness.unit_text_in`` (a higher layer, so repeated here)."""
    text = article_text
    for kind, number in re.findall(r":([A-Za-z_]+):([^:]+)", unit_id[len(article_id):]):
        if kind not in _MARKERS:  # a level without a known marker (German Abs./Nr.): not found
            return None
        own, any_ = _MARKERS[kind]
        m = re.search(own(number), text, re.M)
        if m is None:
            return None
        nxt = re.compile(any_, re.M).search(text, m.end())
        text = text[m.start():nxt.start() if nxt else len(text)].strip()
    return text


def _norm(text: str | None) -> str | None:
    return None if text is None else re.sub(r"\s+", " ", text).strip()


def is_within(unit_id: str, ancestor: str) -> bool:
    """``unit_id`` is ``ancestor`` or below it by id (``pl:kc:art:415:par:1`` within ``pl:kc:art:415``)."""
    return unit_id == ancestor or unit_id.startswith(ancestor + ":")


class VersionTables:
    """One published version's articles and nodes, read once, only when a unit subscription asks."""

    def __init__(self, layout: Layout, act_id: str, version: str | None):
        self.store, self.act_id, self.version = CorpusStore(layout), act_id, version

    def _read(self, name: str, columns: list[str]) -> list[dict]:
        if self.version is None:
            return []
        return self.store.read(self.act_id, self.version, name, published_only=True).select(columns).to_pylist()

    @cached_property
    def articles(self) -> dict[str, dict]:
        return {r["id"]: r for r in self._read("articles", ["id", "status", "text", "text_pending",
                                                            "pending_effective_date", "path"])}

    @cached_property
    def nodes(self) -> dict[str, dict]:
        return {r["id"]: r for r in self._read("nodes", ["id", "level", "number", "status", "text", "ordinal"])}

    def ancestors(self, article_id: str) -> set[str]:
        art = self.articles.get(article_id)
        return {p["id"] for p in (art["path"] or []) if p.get("id")} if art else set()


@dataclass
class PublicationTables:
    """The tables of a publication and of the version it is compared with."""

    pub: Publication
    new: VersionTables
    old: VersionTables
    _rows: list[dict] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, layout: Layout, pub: Publication) -> "PublicationTables":
        return cls(pub, VersionTables(layout, pub.act_id, pub.version), VersionTables(layout, pub.act_id, pub.from_version))

    @property
    def rows(self) -> list[dict]:
        if self._rows is None:
            self._rows = self.pub.diff_rows()
        return self._rows


def _article_row_change(r: dict) -> UnitChange:
    return UnitChange(r["article_id"], r["article_id"], "article", r["change"], r["old_text"], r["new_text"],
                      r["unified_diff"], number=r["number"])


def _announced(tables: VersionTables, article_id: str, unit_id: str, in_force: str | None) -> tuple[str | None, object]:
    art = tables.articles.get(article_id)
    if art is None or not art["text_pending"]:
        return in_force, None
    return unit_text_in(art["text_pending"], article_id, unit_id), art["pending_effective_date"]


def _node_changes(t: PublicationTables, unit_id: str, article_id: str) -> list[UnitChange]:
    """``unit_id`` and every node below it, compared between the two versions."""
    old = {i: n for i, n in t.old.nodes.items() if is_within(i, unit_id)}
    new = {i: n for i, n in t.new.nodes.items() if is_within(i, unit_id)}
    order = sorted(set(old) | set(new), key=lambda i: ((new.get(i) or old.get(i))["ordinal"], i))
    out = []
    for i in order:
        o, n = old.get(i), new.get(i)
        level = (n or o)["level"]
        number = (n or o)["number"]
        if o is None or n is None:
            kind = "added" if o is None else "removed"
            pending = n is not None and n["status"] == "pending"
            out.append(UnitChange(i, article_id, level, kind, o and o["text"], n and n["text"],
                                  word_diff(o and o["text"] or "", n and n["text"] or ""), number=number,
                                  reading="announced" if pending else "in_force"))
            continue
        if n["status"] == "repealed" and o["status"] != "repealed":
            out.append(UnitChange(i, article_id, level, "repealed", o["text"], n["text"],
                                  word_diff(o["text"] or "", n["text"] or ""), number=number))
            continue
        if _norm(o["text"]) != _norm(n["text"]) or o["status"] != n["status"]:
            kind = "editorial" if editorial_form(o["text"] or "") == editorial_form(n["text"] or "") \
                and o["status"] == n["status"] else "changed"
            out.append(UnitChange(i, article_id, level, kind, o["text"], n["text"],
                                  word_diff(o["text"] or "", n["text"] or ""), number=number))
            continue
        (old_f, _), (new_f, eff) = _announced(t.old, article_id, i, o["text"]), _announced(t.new, article_id, i, n["text"])
        if _norm(old_f) != _norm(new_f):
            kind = "editorial" if new_f is not None and old_f is not None and \
                editorial_form(old_f) == editorial_form(new_f) else ("removed" if new_f is None else "changed")
            out.append(UnitChange(i, article_id, level, kind, old_f, new_f, word_diff(old_f or "", new_f or ""),
                                  number=number, reading="announced", effective_date=str(eff) if eff else None))
    return out


def unit_changes(t: PublicationTables, unit_id: str) -> list[UnitChange]:
    """What of the publication concerns a subscription to ``unit_id`` (and its descendants)."""
    out: list[UnitChange] = []
    for r in t.rows:
        a = r["article_id"]
        if is_within(a, unit_id):  # the article itself (or, by id, below the unit)
            out.append(_article_row_change(r))
        elif is_within(unit_id, a):  # the unit is inside the changed article: compare it unit by unit
            out.extend(_node_changes(t, unit_id, a))
        elif unit_id in t.new.ancestors(a) or unit_id in t.old.ancestors(a):  # a structure unit above it
            out.append(_article_row_change(r))
    return out


# ----------------------------------------------------------------------------------------------
# saved queries


class HitLike(Protocol):
    article_id: str
    rank: int
    heading_path: str


QueryRunner = Callable[[str, str, str, int, str], Sequence[HitLike]]
"""``runner(query, act_id, version, k, retriever)`` → the top-k article hits of that version."""


class QueryNotAnswerable(RuntimeError):
    """The saved query cannot be run on a version (not indexed yet, backend down): the event is
    deferred, not sent half-made; the next notify run tries again."""


@dataclass(frozen=True)
class QueryDelta:
    entered: list[dict]
    left: list[dict]
    changed: list[dict]  # in both top-k lists, and the article is in the diff

    @property
    def empty(self) -> bool:
        return not (self.entered or self.left or self.changed)

    def to_dict(self) -> dict:
        return {"entered": self.entered, "left": self.left, "changed": self.changed}


def query_delta(runner: QueryRunner, pub: Publication, *, query: str, k: int, retriever: str,
                diff_rows: list[dict]) -> QueryDelta:
    """Run the saved query on the previous and the new version; what entered, left or changed."""
    if pub.from_version is None:
        return QueryDelta([], [], [])
    try:
        before = list(runner(query, pub.act_id, pub.from_version, k, retriever))[:k]
        after = list(runner(query, pub.act_id, pub.version, k, retriever))[:k]
    except QueryNotAnswerable:
        raise
    except Exception as exc:  # noqa: BLE001 — any search failure defers the event with its reason
        raise QueryNotAnswerable(f"{type(exc).__name__}: {exc}") from exc
    old_rank = {h.article_id: h.rank for h in before}
    new_rank = {h.article_id: h.rank for h in after}
    change = {r["article_id"]: r for r in diff_rows}

    def hit(h, rank_key: str) -> dict:
        row = change.get(h.article_id)
        return {"article_id": h.article_id, rank_key: h.rank, "heading_path": getattr(h, "heading_path", "") or "",
                "change": row["change"] if row else None}

    entered = [{**hit(h, "rank"), "previous_rank": None} for h in after if h.article_id not in old_rank]
    left = [hit(h, "previous_rank") for h in before if h.article_id not in new_rank]
    changed = [{**hit(h, "rank"), "previous_rank": old_rank[h.article_id],
                "word_diff": change[h.article_id]["unified_diff"]}
               for h in after if h.article_id in old_rank and h.article_id in change]
    return QueryDelta(entered, left, changed)


def backend_runner(open_backend: Callable[[str], object]) -> QueryRunner:
    """A :data:`QueryRunner` over a search backend (embedded or Elasticsearch): the request is
    validated like every search (``retrieval.service.build_request``) and filtered to exactly the
    version (``Filters.version``). ``open_backend(act_id)`` is called once per act, when first needed."""
    from pipelines.retrieval.service import build_request

    opened: dict[str, object] = {}

    def run(query: str, act_id: str, version: str, k: int, retriever: str):
        if act_id not in opened:
            opened[act_id] = open_backend(act_id)
        request = build_request(query, k=k, retriever=retriever, acts=[act_id], version=version)
        return opened[act_id].search(request)[:k]

    return run
