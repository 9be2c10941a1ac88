"""The act registry: rows are validated, and a bad row is named by file, row and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.acts import DEFAULT_REGISTRY, ActRegistry, RegistryError, registry

ROW = """
[[act]]
id = "pl:kro"
jurisdiction = "pl"
language = "pl"
title = "Kodeks rodzinny i opiekuńczy"
citation = "k.r.o."
source = "eli"
address = "DU/1964/59"
display_address = "Dz. U. 1964 Nr 9 poz. 59"
sample_stem = "D19640059Lj"
layout = "isap"
"""


def test_the_shipped_registry() -> None:
    reg = ActRegistry.load(DEFAULT_REGISTRY)
    assert reg.ids("pl") == ("pl:kc", "pl:kpc", "pl:kp", "pl:kk")
    assert [reg.get(a).citation for a in reg.ids("pl")] == ["k.c.", "k.p.c.", "k.p.", "k.k."]
    assert reg.ids("de") == ("de:bgb", "de:gg", "de:hgb", "de:stgb", "de:stpo", "de:zpo")
    kc = reg.get("pl:kc")
    assert (kc.citation, kc.address, kc.sample_stem, kc.key, kc.slug) == ("k.c.", "DU/1964/93", "D19640093Lj",
                                                                         "pl_kc", "kc")
    assert reg.get("de:gg").article_unit == "Art" and reg.get("de:bgb").paragraph_unit == "Abs."
    assert reg.by_address("eli", "DU/1964/93") is kc


def test_select_by_acts_and_jurisdiction() -> None:
    reg = ActRegistry.load(DEFAULT_REGISTRY)
    assert [a.id for a in reg.select(["de:gg"], ["pl"])] == ["pl:kc", "pl:kpc", "pl:kp", "pl:kk", "de:gg"]
    assert [a.id for a in reg.select(["pl:kp", "de:gg"])] == ["pl:kp", "de:gg"]
    with pytest.raises(KeyError, match="unknown act id 'pl:xx'.*pl:kc"):
        reg.select(["pl:xx"])
    with pytest.raises(KeyError, match="no act of jurisdiction 'fr'"):
        reg.select(jurisdictions=["fr"])


def test_the_env_var_swaps_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(DEFAULT_REGISTRY.read_text(encoding="utf-8") + ROW, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    assert registry().ids("pl") == ("pl:kc", "pl:kpc", "pl:kp", "pl:kk", "pl:kro")
    monkeypatch.delenv("LEXPIPE_ACT_REGISTRY")
    assert registry().ids("pl") == ("pl:kc", "pl:kpc", "pl:kp", "pl:kk")


@pytest.mark.parametrize("change, message", [
    (('id = "pl:kro"', 'id = "kro"'), "field 'id' must look like 'pl:kc'"),
    (('jurisdiction = "pl"', 'jurisdiction = "de"'), "does not start with its jurisdiction"),
    (('address = "DU/1964/59"', 'address = "1964/59"'), "field 'address' must be an ELI"),
    (('citation = "k.r.o."\n', ''), "field 'citation' is required"),
    (('layout = "isap"', 'layout = "gesetze"'), "is not a layout of source 'eli'"),
    (('display_address = "Dz. U. 1964 Nr 9 poz. 59"\n', ''), "field 'display_address' is required"),
    (('language = "pl"', 'language = "pl"\ncolour = "red"'), r"unknown field\(s\) \['colour'\]"),
])
def test_a_bad_row_names_file_row_and_field(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(DEFAULT_REGISTRY.read_text(encoding="utf-8") + ROW.replace(*change), encoding="utf-8")
    with pytest.raises(RegistryError, match=message) as err:
        ActRegistry.load(path)
    assert str(path) in str(err.value) and "row 11 (" in str(err.value)


def test_duplicates_and_broken_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(DEFAULT_REGISTRY.read_text(encoding="utf-8") + ROW.replace("pl:kro", "pl:kc"), encoding="utf-8")
    with pytest.raises(RegistryError, match="two rows share the id 'pl:kc'"):
        ActRegistry.load(path)
    path.write_text("[[act]\nid =", encoding="utf-8")
    with pytest.raises(RegistryError, match="not valid TOML"):
        ActRegistry.load(path)
    with pytest.raises(RegistryError, match="act registry not found"):
        ActRegistry.load(tmp_path / "missing.toml")
