"""The German acts come from the act registry (schemas/acts.toml), read at call time."""

from __future__ import annotations

import pytest

from pipelines.statutes.de.model import GermanAct, GermanStatuteError, german_acts
from registry_rows import GG_AND_XG  # tests/, on sys.path via conftest



def test_the_shipped_registry_gives_the_six_acts() -> None:
    # the table that was hard-coded as KNOWN_ACTS before the registry
    assert german_acts() == {
        "bgb": GermanAct("de:bgb", "BGB", "Bürgerliches Gesetzbuch"),
        "gg": GermanAct("de:gg", "GG", "Grundgesetz für die Bundesrepublik Deutschland", "Art"),
        "hgb": GermanAct("de:hgb", "HGB", "Handelsgesetzbuch"),
        "stgb": GermanAct("de:stgb", "StGB", "Strafgesetzbuch"),
        "stpo": GermanAct("de:stpo", "StPO", "Strafprozeßordnung"),
        "zpo": GermanAct("de:zpo", "ZPO", "Zivilprozessordnung"),
    }
    assert list(german_acts()) == ["bgb", "gg", "hgb", "stgb", "stpo", "zpo"]


def test_a_swapped_registry_is_seen_at_call_time(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(GG_AND_XG, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    assert german_acts() == {"gg": GermanAct("de:gg", "GG", "Grundgesetz für die Bundesrepublik Deutschland", "Art"),
                             "xg": GermanAct("de:xg", "XG", "Gesetz über Beispiele", "§")}
    monkeypatch.delenv("LEXPIPE_ACT_REGISTRY")
    assert "xg" not in german_acts() and "bgb" in german_acts()


def test_a_german_act_needs_a_german_unit(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(GG_AND_XG.replace('article_unit = "§"\n', ""), encoding="utf-8")  # the default: Polish "art"
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    with pytest.raises(GermanStatuteError, match=r"acts\.toml: German act de:xg needs article_unit '§' or 'Art', got 'art'"):
        german_acts()
