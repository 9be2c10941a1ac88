"""64-bit hashes of strings, vectorised: posting-list terms, row content keys.

Why a polynomial hash: the index keys its postings by a 64-bit hash of each term string, and the
bigram field's terms are ``f"{a}_{b}"`` of adjacent terms. A polynomial hash modulo 2**64 composes
(``poly(a + "_" + b) = (poly(a)·P + ord("_"))·P**len(b) + poly(b)``), so the hashes of the ~20 M
bigrams of the German corpus come from the hashes of their two terms in numpy, without building
the bigram strings at all; a splitmix64 finaliser over (poly, byte length) then spreads the bits.
The same functions hash query terms, so index and query agree by construction (a test holds the
vectorised hash to a pure-Python reference). Collisions: for the ~10 M distinct unigrams and
bigrams of a language the chance that two share a hash is about n²/2**65 ≈ 3·10⁻⁶.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MASK = (1 << 64) - 1
P = 0x9E3779B97F4A7C15  # odd multiplier (the golden-ratio constant)
LEN_MIX = 0xD6E8FEB86659FD93
UNDERSCORE = ord("_")

_powers = np.array([1, P], dtype=np.uint64)


def _pow_table(n: int) -> np.ndarray:
    """P**i mod 2**64 for i in 0..n (grown on demand by doubling, wrapping uint64 arithmetic)."""
    global _powers
    if len(_powers) <= n:
        out = _powers
        with np.errstate(over="ignore"):
            while len(out) <= n:
                out = np.concatenate((out, out * (out[-1] * np.uint64(P))))
        _powers = out
    return _powers


def _mix(z: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over poly + length·LEN_MIX (a bijection of the 64 bits)."""
    with np.errstate(over="ignore"):
        z = z + lengths.astype(np.uint64) * np.uint64(LEN_MIX)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def poly_of(strings: Sequence[str] | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(poly hash, UTF-8 byte length) of each string, vectorised over one Arrow buffer."""
    arr = strings if isinstance(strings, pa.Array) else pa.array(list(strings), type=pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    start, end = offsets[:-1], offsets[1:]
    lengths = (end - start).astype(np.int64)
    total = int(offsets[-1] - offsets[0])
    out = np.zeros(n, dtype=np.uint64)
    if total == 0:
        return out, lengths
    nonempty = lengths > 0
    # every byte i of string j weighs P**(end_j - 1 - i)
    byte_pos = np.arange(offsets[0], offsets[-1], dtype=np.int64)
    ends = np.repeat(end, lengths)
    powers = _pow_table(int(lengths.max()))
    with np.errstate(over="ignore"):
        contrib = data[offsets[0]:offsets[-1]].astype(np.uint64) * powers[ends - 1 - byte_pos]
    sums = np.add.reduceat(contrib, (start[nonempty] - offsets[0]).astype(np.int64))
    out[nonempty] = sums
    return out, lengths


def finish(poly: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The 64-bit term hash from (poly, byte length)."""
    return _mix(np.asarray(poly, dtype=np.uint64), np.asarray(lengths))


def hash_strings(strings: Sequence[str] | pa.Array) -> np.ndarray:
    """64-bit hash of each string (uint64)."""
    poly, lengths = poly_of(strings)
    return finish(poly, lengths)


def bigram_poly(poly_a: np.ndarray, len_a: np.ndarray, poly_b: np.ndarray,
                len_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(poly, byte length) of ``a + "_" + b`` from those of ``a`` and ``b``."""
    powers = _pow_table(int(len_b.max()) if len(len_b) else 0)
    with np.errstate(over="ignore"):
        head = poly_a * np.uint64(P) + np.uint64(UNDERSCORE)
        return head * powers[len_b] + poly_b, len_a + 1 + len_b


def hash_reference(s: str) -> int:
    """The same hash in plain Python (the test's reference)."""
    b = s.encode("utf-8")
    z = 0
    for byte in b:
        z = (z * P + byte) & MASK
    z = (z + len(b) * LEN_MIX) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)
