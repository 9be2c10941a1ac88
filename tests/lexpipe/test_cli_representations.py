"""``lexpipe representations``: the last-stage stores built through their Dagster job, in process.
Which rows a store holds is tested with the builders (tests/pipelines/retrieval/representations/)."""

from __future__ import annotations

import pytest

from lexpipe.cli import main


def test_a_home_with_nothing_published_builds_no_store_and_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LEXPIPE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("LEXPIPE_ENCODER", "hashing")
    assert main(["representations"]) == 0
    out = capsys.readouterr().out
    assert "pl: no store: no published act of the language it is about" in out
    assert "de: no store: no published act of the language it is about" in out
    assert not (tmp_path / "home" / "index" / "representations" / "pl").exists()


def test_an_unknown_language_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["representations", "--language", "fr"])
    assert exc.value.code == 2 and "invalid choice: 'fr'" in capsys.readouterr().err
