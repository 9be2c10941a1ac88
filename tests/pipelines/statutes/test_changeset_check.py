"""The changeset check blocks the index (and the stream behind it) only for what is truly broken:
a published version that fails the suites, or a systemic quarantine — never for one bad act."""

from __future__ import annotations

import json

import pytest

from core.layout import Layout
from pipelines.statutes.changeset_check import SYSTEMIC_MIN_ACTS, recheck_changeset, systemic


def _record(layout: Layout, key: str, quarantined: int) -> None:
    outcomes = [{"act_id": f"de:bad{i}", "version": "2012-08-06", "outcome": "quarantined", "reason": "articles_check",
                 "message": "expect_column_values_to_not_match_regex(text): '**' left in the text"}
                for i in range(quarantined)]
    path = layout.changesets("de") / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "outcomes": outcomes}), encoding="utf-8")


def test_a_gazette_issue_whose_one_act_is_quarantined_warns_and_lets_the_stream_go_on(tmp_path):
    """The wide slice's BGBl. I 2012 Nr. 17 changed one act, which was quarantined: the check
    blocked, the index did not move and every later commit refused to run behind it."""
    layout = Layout(tmp_path)
    _record(layout, "0028-74ae9567", 1)
    result = recheck_changeset(layout, "de", "0028-74ae9567", max_tokens=512)
    assert not result.passed and not result.blocking
    assert result.published == 0 and result.quarantined == 1 and "de:bad0" in result.description


def test_most_acts_of_a_large_changeset_quarantined_is_systemic_and_blocks(tmp_path):
    layout = Layout(tmp_path)
    _record(layout, "0002-88a07f50", SYSTEMIC_MIN_ACTS)
    result = recheck_changeset(layout, "de", "0002-88a07f50", max_tokens=512)
    assert result.blocking and "10 quarantined (articles_check 10)" in result.description


@pytest.mark.parametrize("published,quarantined,expected", [
    (0, 1, False), (0, SYSTEMIC_MIN_ACTS - 1, False), (0, SYSTEMIC_MIN_ACTS, True),
    (6180, 3, False), (100, 101, True), (101, 100, False),
])
def test_systemic_is_most_of_a_large_changeset(published, quarantined, expected):
    assert systemic(published, quarantined) is expected


def test_a_changeset_without_a_record_blocks(tmp_path):
    result = recheck_changeset(Layout(tmp_path), "de", "0005-b4e0b5c1", max_tokens=512)
    assert result.blocking and "no record" in result.description


# -- the build's validation, trusted on the same bytes and suites -------------------------------------


@pytest.fixture(scope="module")
def applied_import(tmp_path_factory, sample_dir):
    """The import of three small acts of the real gesetze history, applied by ``apply_changeset``."""
    from connectors.gesetze import GesetzeSource
    from gesetze_fixtures import build_slice_or_skip
    from pipelines.statutes.de.changeset_build import apply_changeset

    repo = build_slice_or_skip(sample_dir, tmp_path_factory, commits=2,
                               acts=("g/gg", "r/rennwlottg", "w/wppgebv"))
    home = tmp_path_factory.mktemp("trust_home")
    source = GesetzeSource.open(Layout(home), url=str(repo))
    imp = next(c for c in source.history() if c.kind == "import")
    record = apply_changeset(Layout(home), source, imp, workers=1)
    assert record.counts()["published"] == 3, record.to_json()
    return home, imp.key


def _copy(applied, tmp_path):
    import shutil

    home, key = applied
    shutil.copytree(home, tmp_path / "home", symlinks=True)
    return Layout(tmp_path / "home"), key


def _counting_check_batch(monkeypatch) -> list[list[str]]:
    """The acts each GX batch of the check validated."""
    from pipelines.statutes import changeset_check

    calls: list[list[str]] = []
    real = changeset_check.check_batch

    def counting(articles, *args, **kwargs):
        calls.append(sorted(articles))
        return real(articles, *args, **kwargs)

    monkeypatch.setattr(changeset_check, "check_batch", counting)
    return calls


def test_versions_the_build_validated_are_not_validated_twice(applied_import, tmp_path, monkeypatch):
    layout, key = _copy(applied_import, tmp_path)
    record = json.loads((layout.changesets("de") / f"{key}.json").read_text())
    validated = [o["validated"] for o in record["outcomes"] if o["outcome"] == "published"]
    assert len(validated) == 3 and all(v["suites"] and set(v["files"]) == {"articles", "nodes", "chunks"}
                                       for v in validated)
    calls = _counting_check_batch(monkeypatch)
    result = recheck_changeset(layout, "de", key, max_tokens=256)
    assert result.passed and not result.blocking and calls == []
    assert result.published == 3 and result.trusted == 3
    assert "3 validated by the build on the same files and suites" in result.description
    full = recheck_changeset(layout, "de", key, max_tokens=256, trust_build=False)  # the weekly revalidation
    assert full.passed and full.trusted == 0 and calls == [["de:gg", "de:rennwlottg", "de:wppgebv"]]
    assert full.rows > 0


def test_a_published_file_changed_after_the_build_is_validated_again_and_blocks(applied_import, tmp_path,
                                                                                 monkeypatch):
    """The GG's published articles rewritten with one article twice: its hash is not the one the
    build validated, so the suites run on it, and the duplicate id fails them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    layout, key = _copy(applied_import, tmp_path)
    path = layout.version_dir("de:gg", "2012-08-02") / "articles.parquet"
    table = pq.read_table(path)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), path)
    calls = _counting_check_batch(monkeypatch)
    result = recheck_changeset(layout, "de", key, max_tokens=256)
    assert calls == [["de:gg"]] and result.trusted == 2
    assert not result.passed and result.blocking and "de:gg" in result.failures


def test_changed_suites_or_a_record_without_hashes_validate_again(applied_import, tmp_path, monkeypatch):
    from pipelines.statutes import changeset_check

    layout, key = _copy(applied_import, tmp_path)
    calls = _counting_check_batch(monkeypatch)
    monkeypatch.setattr(changeset_check, "suites_fingerprint", lambda **kw: "another-suite")
    assert recheck_changeset(layout, "de", key, max_tokens=256).trusted == 0 and len(calls) == 1
    monkeypatch.undo()
    calls = _counting_check_batch(monkeypatch)
    path = layout.changesets("de") / f"{key}.json"
    record = json.loads(path.read_text())
    for o in record["outcomes"]:
        o.pop("validated", None)  # a record written before the build kept its hashes
    path.write_text(json.dumps(record))
    result = recheck_changeset(layout, "de", key, max_tokens=256)
    assert result.passed and result.trusted == 0 and calls == [["de:gg", "de:rennwlottg", "de:wppgebv"]]
