"""Chunks tables and a plain analyser for the language index tests."""

from __future__ import annotations

import hashlib
import random
from typing import Iterable, Sequence

import pyarrow as pa

from schemas.arrow import CHUNKS

WORDS = ("kauf miete vertrag sache schuld gläubiger schuldner leistung frist kündigung pacht darlehen bürge "
         "besitz eigentum pfand hypothek erbe testament ehe kind unterhalt vormund schaden ersatz haftung "
         "anspruch verjährung rücktritt mangel gewährleistung nacherfüllung minderung zins rate").split()
STOP = "der die das und oder ist ein eine nicht zu von mit".split()


class SplitAnalyzer:
    """Lowercased whitespace terms: the tests' analyser (the engine only needs ``analyze_many``)."""

    id = "test-split"
    lang = "de"

    def analyze(self, text: str) -> list[str]:
        return text.lower().split()

    def analyze_many(self, texts: Iterable[str], batch_size: int = 256) -> list[list[str]]:
        return [self.analyze(t) for t in texts]


def chunks(act_id: str, items: Sequence[tuple[str, str]] | Sequence[tuple[str, str, str]], version: str = "2012-07-02") -> pa.Table:
    """A CHUNKS table: one chunk per (number, text[, status]) as article ``<act>:<number>``."""
    rows = []
    for item in items:
        number, text, status = (*item, "in_force")[:3]
        heading = f"{act_id.split(':')[1].upper()} § {number}"
        rows.append({"chunk_id": f"{act_id}:{number}#0", "article_id": f"{act_id}:{number}", "act_id": act_id,
                     "version": __import__("datetime").date.fromisoformat(version[:10]), "chunk_index": 0,
                     "chunk_count": 1, "heading_path": heading, "text": text, "token_count": len(text.split()),
                     "status": status, "content_hash": hashlib.sha256((heading + text).encode()).hexdigest()})
    return pa.Table.from_pylist(rows, schema=CHUNKS)


def random_text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) if rnd.random() < 0.6 else rnd.choice(STOP) for _ in range(n))


def random_act(rnd: random.Random, act_id: str, n: int, version: str = "2012-07-02") -> pa.Table:
    return chunks(act_id, [(str(i + 1), random_text(rnd, rnd.randint(1, 40))) for i in range(n)], version)


def texts_of(table: pa.Table) -> list[str]:
    return [f"{h}\n{t}" for h, t in zip(table["heading_path"].to_pylist(), table["text"].to_pylist())]
