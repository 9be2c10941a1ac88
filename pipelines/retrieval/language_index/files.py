"""Immutable files of the index: numpy arrays and Arrow tables written once (temp file, fsync,
rename) and memory-mapped by readers.

Why memory maps: a snapshot opens a generation's arrays without reading them; the pages a query
touches come from the OS page cache, are shared by every process serving the same index, and a
file that a later generation no longer references stays readable to a snapshot that mapped it
until that snapshot goes (POSIX keeps an unlinked, mapped file alive).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa


def _tmp(path: Path) -> tuple[int, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")


def save_array(path: Path, array: np.ndarray) -> None:
    """``np.save`` via a temp file + fsync + rename."""
    fd, tmp = _tmp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_array(path: Path) -> np.ndarray:
    """A read-only memory map of a saved array (a plain read for an empty one: nothing to map)."""
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError:  # zero-length data cannot be mapped
        return np.load(path, allow_pickle=False)


def save_table(path: Path, table: pa.Table) -> None:
    """An Arrow IPC file (uncompressed: readers map it and take rows without decoding pages)."""
    fd, tmp = _tmp(path)
    os.close(fd)
    try:
        with pa.OSFile(tmp, "wb") as sink:
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table, max_chunksize=65_536)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_batches(path: Path, column: pa.ChunkedArray | pa.Array, name: str, rows: int, compression: str = "zstd") -> None:
    """One column as an Arrow IPC file of record batches of exactly ``rows`` rows (the last one
    shorter), compressed: batch i holds rows i·rows … — a reader decompresses only the batches it
    needs."""
    fd, tmp = _tmp(path)
    os.close(fd)
    schema = pa.schema([(name, column.type)])
    try:
        with pa.OSFile(tmp, "wb") as sink:
            with pa.ipc.new_file(sink, schema, options=pa.ipc.IpcWriteOptions(compression=compression)) as writer:
                for start in range(0, len(column), rows):
                    part = column.slice(start, rows)
                    if isinstance(part, pa.ChunkedArray):
                        part = part.combine_chunks()
                    writer.write_batch(pa.record_batch([part], schema=schema))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_table(path: Path) -> pa.Table:
    """The table of an Arrow IPC file, memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def fsync_dir(path: Path) -> None:
    """Make a rename inside ``path`` durable (the directory entry itself)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
