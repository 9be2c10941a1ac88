"""bench/reclassify_replay.py: a home of two real-format versions of one act is classified with the
current rules and compared with an earlier output; a home or a comparison file it cannot read is
refused naming the file, and the last output stays whole."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.tables import articles_table

REPO = Path(__file__).resolve().parents[2]
FRONT = "---\nTitle: Testgesetz\njurabk: TG\nslug: tg\n---\n\n# Testgesetz (TG)\n\n"
OLD = FRONT + "## § 1 Zweck\n\nDas Gesetz gilt.\n\n## § 2 Frist\n\nDie Frist beträgt einen Monat.\n"
NEW = FRONT + "## § 1 Zweck\n\nDas Gesetz gilt.\n\n## § 2 Frist\n\nDie Frist beträgt zwei Monate.\n"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("reclassify_replay", REPO / "bench" / "reclassify_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _home(root: Path) -> Path:
    act = root / "corpus" / "de" / "tg"
    for version, text, kind in (("2012-07-02", OLD, "import"), ("2012-08-01", NEW, "bgbl")):
        md = root / "md" / version / "tg" / "index.md"
        md.parent.mkdir(parents=True)
        md.write_text(text, encoding="utf-8")
        (act / version).mkdir(parents=True)
        pq.write_table(articles_table(parse_markdown(md, version=dt.date.fromisoformat(version))),
                       act / version / "articles.parquet")
        (act / version / "source.json").write_text(json.dumps({"commit": "0123456789abcdef", "kind": kind}))
    (act / "current.json").write_text(json.dumps({"published_versions": ["2012-07-02", "2012-08-01"]}))
    return root


def test_classifies_each_version_against_the_one_before_and_compares(script, tmp_path, capsys):
    home = _home(tmp_path / "home")
    out = tmp_path / "now.jsonl"
    script.main(["--home", str(home), "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["act"], r["version"], r["kind"], r["commit"], r["change"]) for r in rows] == \
        [("tg", "2012-08-01", "bgbl", "01234567", "changed")]
    assert rows[0]["article_id"].endswith(":par:2")
    before = tmp_path / "before.jsonl"
    before.write_text(json.dumps({**rows[0], "change": "editorial"}) + "\n")
    capsys.readouterr()
    script.main(["--home", str(home), "--out", str(out), "--compare", str(before)])
    printed = capsys.readouterr().out
    assert "| bgbl | 01234567 | editorial | changed | 1 |" in printed
    assert "publication tg 2012-08-01 (bgbl): editorial → amendment" in printed


def test_a_home_without_a_german_corpus_is_refused(script, tmp_path):
    with pytest.raises(SystemExit, match=r"no German corpus here"):
        script.main(["--home", str(tmp_path), "--out", str(tmp_path / "out.jsonl")])
    assert not (tmp_path / "out.jsonl").exists()


def test_an_unreadable_version_is_named_and_the_last_output_stays(script, tmp_path):
    home = _home(tmp_path / "home")
    out = tmp_path / "now.jsonl"
    out.write_text("the last output\n")
    broken = home / "corpus" / "de" / "tg" / "2012-08-01" / "articles.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(SystemExit, match=rf"{broken}: cannot read it"):
        script.main(["--home", str(home), "--out", str(out)])
    assert out.read_text() == "the last output\n"


@pytest.mark.parametrize("line, why", [("{not json", "Expecting"), ('{"act": "tg"}', "a row needs")])
def test_a_malformed_comparison_file_names_its_line(script, tmp_path, line, why):
    home = _home(tmp_path / "home")
    bad = tmp_path / "before.jsonl"
    bad.write_text(json.dumps({"act": "tg", "version": "2012-08-01", "kind": "bgbl", "commit": "0", "article_id": "x",
                               "change": "changed"}) + "\n" + line + "\n")
    with pytest.raises(SystemExit, match=rf"{bad}:2: not a row of this script's output .*{why}"):
        script.main(["--home", str(home), "--out", str(tmp_path / "now.jsonl"), "--compare", str(bad)])
