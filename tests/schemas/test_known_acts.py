"""The table of known acts: the shipped rows, and a bad row named by file, row and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.known_acts import DEFAULT_TABLE, KnownActs, KnownActsError, known_acts

ROW = """
[[act]]
id = "pl:upk"
jurisdiction = "pl"
type = "ustawa"
date = "2014-05-30"
title = "o prawach konsumenta"
citations = ["u.p.k."]
address = "DU/2014/827"
"""


def _load(tmp_path: Path, text: str) -> KnownActs:
    path = tmp_path / "known.toml"
    path.write_text(text, encoding="utf-8")
    return KnownActs.load(path)


def test_the_shipped_table() -> None:
    table = known_acts()
    assert table is known_acts()  # parsed once per file state
    upk = table.get("pl:upk")
    assert (upk.name, upk.official_title, upk.gazette) == (
        "ustawa o prawach konsumenta", "Ustawa z dnia 30 maja 2014 r. o prawach konsumenta", "Dz. U. 2014 poz. 827")
    kk = table.get("pl:kk")
    assert (kk.name, kk.official_title, kk.address) == ("Kodeks karny", "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny",
                                                        "DU/1997/553")
    reg = table.get("pl:du:2002:1349")
    assert reg.official_title.startswith("Rozporządzenie Ministra Sprawiedliwości z dnia 28 września 2002 r. w sprawie "
                                         "opłat za czynności radców prawnych")
    kschg = table.get("de:kschg")
    assert (kschg.title, kschg.address, kschg.slug, kschg.citations) == ("Kündigungsschutzgesetz", "BGBl I: 1951, 499",
                                                                         "kschg", ("KSchG",))
    rodo = table.get("eu:2016/679")
    assert {"RODO", "DSGVO"} <= set(rodo.citations) and rodo.address == "eli/reg/2016/679/oj"
    # the acts the issue names are all there, and every jurisdiction has its most cited acts
    for act_id in ("pl:kpk", "pl:kro", "pl:ksh", "pl:kpa", "pl:kw", "pl:kkw", "pl:konstytucja", "pl:uokik", "pl:pb",
                   "pl:uwl", "pl:uopl", "pl:prd", "pl:op", "pl:updof", "pl:pun", "pl:prestr", "pl:ukwh", "pl:pnot",
                   "pl:uks", "pl:uksc", "pl:prbank", "pl:prspoldz", "de:bgb", "de:gg", "de:zpo", "de:stgb", "de:stpo",
                   "de:hgb", "de:vwgo", "de:vwvfg", "de:ao", "de:estg", "de:ustg", "de:betrvg", "de:gvg", "de:inso",
                   "de:famfg", "de:aktg", "de:gmbhg", "de:uwg", *(f"de:sgb-{b}" for b in
                                                                   ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii",
                                                                    "ix", "x", "xi", "xii"))):
        assert table.get(act_id) is not None, act_id


def test_a_good_row_loads(tmp_path: Path) -> None:
    table = _load(tmp_path, ROW)
    assert [a.id for a in table.acts] == ["pl:upk"] and table.get("pl:upk").position == (2014, 827)


@pytest.mark.parametrize("change, message", [
    (('id = "pl:upk"', 'id = "PL upk"'), "field 'id'"),
    (('jurisdiction = "pl"', 'jurisdiction = "fr"'), "field 'jurisdiction'"),
    (('jurisdiction = "pl"', 'jurisdiction = "de"'), "does not start with its jurisdiction"),
    (('type = "ustawa"', 'type = "Gesetz"'), "field 'type'"),
    (('date = "2014-05-30"', 'date = "30.05.2014"'), "field 'date'"),
    (('address = "DU/2014/827"', 'address = "Dz. U. 2014 poz. 827"'), "field 'address'"),
    (('citations = ["u.p.k."]', 'citations = "u.p.k."'), "field 'citations'"),
    (('citations = ["u.p.k."]', 'names = ["(unclosed"]'), "field 'names'"),
    (('citations = ["u.p.k."]', 'unified = ["2014/827"]'), "field 'unified'"),
    (('citations = ["u.p.k."]', 'max_article = 0'), "field 'max_article'"),
    (('citations = ["u.p.k."]', 'colour = "red"'), "unknown field(s) ['colour']"),
    (('title = "o prawach konsumenta"\n', ''), "field 'title' is required"),
])
def test_a_bad_row_is_named_by_file_row_and_field(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(KnownActsError) as err:
        _load(tmp_path, ROW.replace(*change))
    assert str(tmp_path / "known.toml") in str(err.value) and "row 1 (" in str(err.value)
    assert message in str(err.value)


def test_one_address_is_one_act(tmp_path: Path) -> None:
    twin = ROW.replace('id = "pl:upk"', 'id = "pl:upk2"')
    with pytest.raises(KnownActsError, match="address 'DU/2014/827' is also 'pl:upk'"):
        _load(tmp_path, ROW + twin)
    with pytest.raises(KnownActsError, match="share the id 'pl:upk'"):
        _load(tmp_path, ROW + ROW.replace('"DU/2014/827"', '"DU/2014/828"'))


def test_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(KnownActsError, match="not found"):
        KnownActs.load(tmp_path / "none.toml")
    with pytest.raises(KnownActsError, match="not valid TOML"):
        _load(tmp_path, "[[act]\n")
    with pytest.raises(KnownActsError, match=r"no \[\[act\]\] rows"):
        _load(tmp_path, "# empty\n")
    assert DEFAULT_TABLE.name == "known_acts.toml"
