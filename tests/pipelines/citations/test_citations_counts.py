"""Citation counts per § over the CASES table the connector writes from the real samples."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from pipelines.citations.counts import CITATION_COUNTS, citation_counts
from pipelines.citations.known_ids import corpus_unit_ids


def test_counts_per_section_over_the_synced_cases(sample_dir: Path, tmp_path: Path) -> None:
    cases, _ = synced_cases(sample_dir, tmp_path / "oldp")
    known = corpus_unit_ids(sample_dir / "de" / "gesetze")
    counts = citation_counts(cases, known_ids=known)
    assert counts.schema.equals(CITATION_COUNTS)
    rows = {r["unit_id"]: r for r in counts.to_pylist()}
    # case 1888 cites § 800 BGB in eight places (Open Legal Data marked them); only that case does
    assert rows["de:bgb:par:800"]["citations"] >= 8 and rows["de:bgb:par:800"]["cases"] == 1
    assert rows["de:bgb:par:800"]["verified"] is True and rows["de:bgb:par:800"]["in_corpus"]
    assert rows["de:zpo:par:522"]["cases"] == 1  # "§ 522 Abs. 2 ZPO" in VIII ZR 127/17
    assert rows["de:gg:art:103"]["citations"] >= 2  # "Art. 103 Abs. 1 GG" in VI ZR 78/16
    cits = counts.column("citations").to_pylist()
    assert cits == sorted(cits, reverse=True)
    assert all(r["cases"] <= r["citations"] for r in rows.values())

    # a range counts every § in it; bad content is skipped, not fatal
    base = cases.slice(0, 1).to_pylist()[0]
    extra = [dict(base, case_id=9001, content="<p>Nach §§ 184 bis 187 SGG und § 5 UWG.</p>", content_sha256="a" * 64),
             dict(base, case_id=9002, content="<div> </div>", content_sha256="b" * 64)]
    small = citation_counts(pa.Table.from_pylist(extra, schema=cases.schema), known_ids=known)
    got = {r["unit_id"]: (r["citations"], r["in_corpus"], r["verified"]) for r in small.to_pylist()}
    assert got == {"de:sgg:par:184": (1, False, None), "de:sgg:par:185": (1, False, None),
                   "de:sgg:par:186": (1, False, None), "de:sgg:par:187": (1, False, None),
                   "de:uwg:par:5": (1, False, None)}
