"""The Polish case-law flow (``lexpipe.prefect_pl_cases``) on Prefect's test server, offline on the
SAOS sample pages with the hashing encoder: sync → links → cited-by → chunks → check → index, and
a refused chunk batch failing the flow before anything is promoted."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from saos_fixtures import held_judgments  # tests/, on sys.path via conftest


def _env(home: Path, sample_dir: Path) -> dict[str, str]:
    return {"LEXPIPE_HOME": str(home), "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true",
            "LEXPIPE_ENCODER": "hashing", "LEXPIPE_PREFECT_RETRY_DELAY_S": "0.05", "LEXPIPE_ELASTICSEARCH_URL": ""}


def test_flow_builds_pl_cases_and_blocks_a_bad_chunk_batch(prefect_server, tmp_path: Path, two_page_sample_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from lexpipe.prefect_pl_cases import JudgmentChunksInvalid, pl_cases
    from pipelines.case_law.pl import build

    home = tmp_path / "home"
    for k, v in _env(home, two_page_sample_dir).items():
        monkeypatch.setenv(k, v)
    state = pl_cases(return_state=True)
    assert state.is_completed()
    report = state.result()
    held = held_judgments(two_page_sample_dir)
    assert (report.new, report.quarantined, report.stored) == (held, 0, held)
    assert report.indexed == report.chunks > held
    assert report.links > 0 and sum(report.resolution.values()) == report.links
    assert report.cited_articles > 0
    current = home / "caselaw" / "pl" / "chunks" / "current" / "case_chunks.parquet"
    served = current.read_bytes()

    real = build.build_pl_case_chunks

    def broken(judgments, **kw):  # markup left in a chunk: what a cleaner regression would produce
        result, sources = real(judgments, **kw)
        text = result.chunks["text"].to_pylist()
        text[0] = "<div>" + text[0]
        result.chunks = result.chunks.set_column(result.chunks.schema.get_field_index("text"), "text", pa.array(text))
        return result, sources

    monkeypatch.setattr(build, "build_pl_case_chunks", broken)
    failed = pl_cases(return_state=True)
    assert failed.is_failed()
    with pytest.raises(JudgmentChunksInvalid, match="keeps serving"):
        failed.result()
    assert current.read_bytes() == served  # nothing promoted: the last good collection serves
