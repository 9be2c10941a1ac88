"""The one element type of every statute, every jurisdiction and every level (book down to letter).

Why one type: laws-africa's bluebell uses one hierarchy element for every level, and so do our
tables (``schemas.arrow.NODES``): a parser of a new jurisdiction emits these nodes and every step
after it (tables, diff, chunking, search) works unchanged. Levels are the words of
``schemas.arrow.LEVELS``; ids are version-free (``pl:kc:art:109^1:par:2``, ``de:bgb:par:573b:abs:1``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Node:
    """One node type for every level, book down to letter."""
    level: str
    number: str
    id: str
    heading: str = ""
    text: str = ""
    status: str = "in_force"
    page: int = 0
    parent_id: str | None = None
    articles_before: int = 0  # structural nodes: how many articles precede it (document order)


