"""The SAOS_JUDGMENTS table of the two real dump pages, as the SAOS store would give it.

Why through ``validate_judgment``: the case-law steps consume the connector's rows, so their tests
should see exactly what the connector's own validator makes of the real records (all 200 pass);
the fetch columns the sync adds (``source_url``, ``raw_sha256``, ``page``, ``fetched_at``) are
filled as a sync of those pages would fill them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

PAGES = (347, 355)
FETCHED_AT = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)


def saos_dir(sample_dir: Path) -> Path:
    return sample_dir / "pl" / "saos"


def dump_items(sample_dir: Path) -> list[dict]:
    """The 200 records of the two pages, page order."""
    items: list[dict] = []
    for page in PAGES:
        items += json.loads((saos_dir(sample_dir) / f"judgments-page-{page}.json").read_text(encoding="utf-8"))["items"]
    return items


@lru_cache(maxsize=2)
def _judgments(sample_dir: Path) -> pa.Table:
    from connectors.saos.records import validate_judgment
    from schemas.arrow import from_rows
    from schemas.cases import SAOS_JUDGMENTS

    rows = []
    for page in PAGES:
        path = saos_dir(sample_dir) / f"judgments-page-{page}.json"
        body = path.read_bytes()
        for item in json.loads(body)["items"]:
            row, reasons = validate_judgment(item)
            assert row is not None, (item.get("id"), reasons)
            row.update(source_url=f"https://www.saos.org.pl/api/dump/judgments?pageSize=100&pageNumber={page}",
                       raw_sha256=hashlib.sha256(body).hexdigest(), page=page, fetched_at=FETCHED_AT)
            rows.append(row)
    return from_rows(rows, SAOS_JUDGMENTS)


def saos_judgments(sample_dir: Path) -> pa.Table:
    """``SAOS_JUDGMENTS`` rows of the 200 judgments (built once per session and directory)."""
    return _judgments(Path(sample_dir).resolve())


def held_judgments(sample_dir: Path) -> int:
    """How many judgments every held page together carries: what a sync through the settings (the
    offline source serves every page in the folder) stores."""
    return sum(len(json.loads(p.read_text(encoding="utf-8"))["items"])
               for p in saos_dir(sample_dir).glob("judgments-page-*.json"))


def sample_with_saos_pages(root: Path, sample_dir: Path, pages: tuple[int, ...] = PAGES) -> Path:
    """A sample folder that mirrors ``sample_dir`` (symlinks to the real files) but holds only
    ``pages`` of the SAOS dump: the offline source serves every page in the folder, and the
    end-to-end case-law tests need two real pages, not all (8 pages cost ~4x the time: 250 s for
    the Prefect flow alone on the CI run of 2026-11-28)."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in sample_dir.iterdir():
        if entry.name != "pl":
            (root / entry.name).symlink_to(entry)
    (root / "pl").mkdir()
    for entry in (sample_dir / "pl").iterdir():
        if entry.name != "saos":
            (root / "pl" / entry.name).symlink_to(entry)
    (root / "pl" / "saos").mkdir()
    for page in pages:
        name = f"judgments-page-{page}.json"
        (root / "pl" / "saos" / name).symlink_to(saos_dir(sample_dir) / name)
    return root
