"""Names of a language index, and which physical index and generation its alias serves.

Layout (``<p>`` = index prefix, ``<c>`` = collection, ``<l>`` = language):

* one physical index per language and collection: ``<p>-<c>-<l>-<n>`` (``lexpipe-statutes-de-1``);
  a new ``n`` only for a mapping change or a full rebuild, switched to by the alias;
* the alias ``<p>-<c>-<l>`` (``lexpipe-statutes-de``) points at the physical index with a filter
  naming the serving generation G: ``doc_kind = chunk AND gen_from <= G AND gen_to > G``.
  A publication writes generation G+1 beside G and swaps the alias filter in ONE ``_aliases``
  call.

Collections: ``statutes`` (every act of the language), ``cases`` (the language's court-decision
collection, ``pl:cases`` / ``de:cases``): the same layout and code, their own index because a
statute search never touches decisions and the two grow at their own pace.

Readers resolve the alias once per search (:func:`read_served`: one ``GET <alias>/_alias``) and
then query the physical index with the generation's filter spelled out, so every request of one
search sees the same generation even while a publication swaps the alias.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

NAME_PART_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
COLLECTIONS = ("statutes", "cases")


def response_body(resp: Any) -> Any:
    """The decoded body of an ``ApiResponse`` (plain dicts pass through)."""
    return resp.body if hasattr(resp, "body") else resp


def iso(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class IndexNames:
    """The names of one language index (``collection`` of language ``lang``) under ``prefix``."""

    prefix: str
    collection: str
    lang: str

    def __post_init__(self) -> None:
        for what, value in (("index prefix", self.prefix), ("language", self.lang)):
            if not NAME_PART_RE.match(value):
                raise ValueError(f"{what} {value!r} is not a valid index name part "
                                 "(lowercase letters, digits and '-')")
        if self.collection not in COLLECTIONS:
            raise ValueError(f"collection {self.collection!r}: use one of {COLLECTIONS}")

    @property
    def alias(self) -> str:
        return f"{self.prefix}-{self.collection}-{self.lang}"

    def physical(self, n: int) -> str:
        return f"{self.alias}-{n}"

    @property
    def pattern(self) -> str:
        return f"{self.alias}-*"

    def number_of(self, index: str) -> int | None:
        """``n`` of a physical index of this language index (None for any other name)."""
        head = self.alias + "-"
        tail = index[len(head):] if index.startswith(head) else ""
        return int(tail) if tail.isdigit() else None


def generation_filter(generation: int) -> dict[str, Any]:
    """The alias filter of generation G (what an outside reader of the alias sees)."""
    return {"bool": {"filter": [
        {"term": {"doc_kind": "chunk"}},
        {"range": {"gen_from": {"lte": generation}}},
        {"range": {"gen_to": {"gt": generation}}},
    ]}}


def generation_of(alias_filter: Any) -> int | None:
    """G of an alias filter :func:`generation_filter` wrote (None when it is not one)."""
    if not isinstance(alias_filter, dict):
        return None
    for clause in (alias_filter.get("bool") or {}).get("filter") or []:
        rng = (clause or {}).get("range", {}).get("gen_from") if isinstance(clause, dict) else None
        if isinstance(rng, dict) and "lte" in rng:
            try:
                return int(rng["lte"])
            except (TypeError, ValueError):
                return None
    return None


@dataclass(frozen=True)
class Served:
    """The physical index and generation the alias serves (``index`` None: nothing published)."""
    index: str | None
    generation: int

    @property
    def published(self) -> bool:
        return self.index is not None and self.generation > 0


def read_served(client: Elasticsearch, names: IndexNames) -> Served:
    """Which physical index and generation the alias serves, from ONE request
    (``GET <alias>/_alias``). An alias on two indices (never written by this backend) or without a
    generation filter is refused rather than guessed."""
    try:
        resp = client.indices.get_alias(name=names.alias)
    except NotFoundError:
        return Served(None, 0)
    found = [(index, ((info or {}).get("aliases") or {}).get(names.alias) or {})
             for index, info in (response_body(resp) or {}).items()]
    if not found:
        return Served(None, 0)
    if len(found) > 1:
        raise RuntimeError(f"alias {names.alias} points at {sorted(i for i, _ in found)}: one physical index "
                           "expected (fix the aliases by hand)")
    index, spec = found[0]
    generation = generation_of(spec.get("filter"))
    if generation is None:
        raise RuntimeError(f"alias {names.alias} on {index} carries no generation filter: not written by lexpipe")
    return Served(index, generation)
