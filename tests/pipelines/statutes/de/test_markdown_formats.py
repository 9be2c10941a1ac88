"""Both eras of the bundestag/gesetze format, and act identity, on real files of the history bundle.

The initial import ("Stand 2.7.2012") writes ``Title: !!python/unicode '…'`` without ``jurabk``, and
some of its files print a footnote reference and the long title above the front matter; the 2022
files have ``jurabk``. The act id is ``de:<slug>`` with the repository's folder name exactly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipelines.statutes.de.markdown import parse_markdown, split_front_matter
from pipelines.statutes.de.model import GermanAct, GermanStatuteError, german_acts

INITIAL_IMPORT, HEAD_2022 = "60ede3b9", "82cedddf"  # "Stand 2.7.2012" and the 2022 state of the bundle
V = dt.date(2012, 7, 2)  # the catalogue passes the commit's date


def test_2012_front_matter_python_unicode(act_file):
    path = act_file("a/aeg", INITIAL_IMPORT)
    assert "Title: !!python/unicode 'Allgemeines Eisenbahngesetz'" in path.read_text(encoding="utf-8")
    st = parse_markdown(path, version=V)
    assert st.act == GermanAct("de:aeg", "AEG", "Allgemeines Eisenbahngesetz")  # jurabk from "# … (AEG)"
    assert st.version == V and st.title == "Allgemeines Eisenbahngesetz (AEG)"
    assert [s.id for s in st.sections][:2] == ["de:aeg:par:6a", "de:aeg:par:6c"]
    # the same act in 2022 (jurabk in the front matter) has the same id and the same unit ids
    new = parse_markdown(act_file("a/aeg"), version=dt.date(2022, 3, 26))
    assert new.act.act_id == "de:aeg" and new.act.abbreviation == "AEG"
    assert {s.id for s in st.sections} <= {s.id for s in new.sections}


def test_2012_footnote_and_title_above_the_front_matter(act_file):
    path = act_file("a/agrarausbv", INITIAL_IMPORT)
    raw = path.read_text(encoding="utf-8")
    assert raw.startswith("[^f772414_01_BJNR215700009]\nVerordnung über die Berufsausbildung")
    fm = split_front_matter(raw)
    assert fm.lead == ["[^f772414_01_BJNR215700009]", "Verordnung über die Berufsausbildung zur Fachkraft Agrarservice"]
    st = parse_markdown(path, version=V)
    # empty Title, "#  (AgrarAusbV)": the title from the lines above the front matter, the
    # abbreviation from the heading
    assert st.act == GermanAct("de:agrarausbv", "AgrarAusbV", "Verordnung über die Berufsausbildung zur Fachkraft "
                                                               "Agrarservice")
    assert st.title == "Verordnung über die Berufsausbildung zur Fachkraft Agrarservice (AgrarAusbV)"
    assert [s.id for s in st.sections][:3] == ["de:agrarausbv:eingangsformel", "de:agrarausbv:par:1",
                                               "de:agrarausbv:par:2"]


@pytest.mark.parametrize("act", ["t/tier-lmhv", "1/1-dm-goldmuenzg", "b/bimschv_11_2004"])
@pytest.mark.parametrize("commit", [INITIAL_IMPORT, HEAD_2022])
def test_act_id_is_the_folder_name(act_file, act, commit):
    st = parse_markdown(act_file(act, commit), version=V)
    slug = act.split("/")[1]
    assert st.act.act_id == f"de:{slug}"
    assert all(s.id.startswith(f"de:{slug}:") for s in st.sections)
    assert all(n.id.startswith(f"de:{slug}:") for n in st.structure)


def test_catalogue_act_is_taken_as_given(act_file):
    act = GermanAct("de:1-dm-goldmuenzg", "1-DM-GoldMünzG", "Gesetz über die Ausprägung einer 1-DM-Goldmünze")
    st = parse_markdown(act_file("1/1-dm-goldmuenzg"), act=act, version=V)
    assert st.act is act
    with pytest.raises(GermanStatuteError, match=r"index\.md: not the Bürgerliches Gesetzbuch \(BGB\)"):
        parse_markdown(act_file("1/1-dm-goldmuenzg"), act=german_acts()["bgb"], version=V)


def test_registry_acts_keep_their_registry_entry(act_file):
    st = parse_markdown(act_file("g/gg", INITIAL_IMPORT), version=V)
    assert st.act == german_acts()["gg"] and st.section("3").id == "de:gg:art:3"


def test_version_without_metadata_date(act_file):
    path = act_file("a/aarkzustano")  # never amended: only "Ausfertigungsdatum 2013-01-08"
    assert "Zuletzt geändert" not in path.read_text(encoding="utf-8")
    assert parse_markdown(path).version == dt.date(2013, 1, 8)  # falls back to the Ausfertigungsdatum
    assert parse_markdown(path, version=V).version == V  # the caller's date wins, nothing else needed
    assert parse_markdown(act_file("a/aeg")).version == dt.date(2012, 12, 14)  # "Art. 2 G v. 14.12.2012"


def test_refusals_name_the_file_and_the_reason(tmp_path):
    law = tmp_path / "x" / "xg" / "index.md"
    law.parent.mkdir(parents=True)
    law.write_text("---\nTitle: !!python/unicode 'Gesetz'\nslug: xg\n---\n\n# Gesetz (XG)\n", encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"xg/index\.md: not a law: neither units nor text nor metadata"):
        parse_markdown(law, version=V)
    law.write_text("---\nTitle: 'Gesetz\nslug: [xg\n---\n\n# Gesetz (XG)\n", encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"xg/index\.md: not a bundestag/gesetze law: front matter is not YAML"):
        parse_markdown(law)
    law.write_text("---\nTitle: Gesetz\nslug: xg\n---\n\nText ohne Überschrift.\n", encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"xg/index\.md: not a bundestag/gesetze law: no '# Title' heading"):
        parse_markdown(law)
    law.write_text("# Gesetz\n\n---\nTitle: Gesetz\n---\n", encoding="utf-8")  # a heading is no title line
    with pytest.raises(GermanStatuteError, match=r"xg/index\.md: not a bundestag/gesetze law: no YAML front matter"):
        parse_markdown(law)
    law.write_text("---\nTitle: Gesetz\nslug: xg\n---\n\n# Gesetz (XG)\n\nFundstelle\n:   BGBl I: 2000, 1\n",
                   encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"xg/index\.md: no text-state date in the metadata"):
        parse_markdown(law)
    assert parse_markdown(law, version=V).sections[0].text == "Fundstelle: BGBl I: 2000, 1"


def test_folder_slug_over_front_matter(tmp_path):
    law = tmp_path / "b" / "bimschv_11_2004" / "index.md"
    law.parent.mkdir(parents=True)
    law.write_text("---\nTitle: Verordnung\njurabk: BImSchV 11\n---\n\n# Verordnung (BImSchV 11)\n\n## § 1 Zweck\n\n"
                   "Text.\n", encoding="utf-8")
    assert parse_markdown(law, version=V).act.act_id == "de:bimschv_11_2004"
    flat = Path(tmp_path / "xg.md")
    flat.write_text("---\nTitle: Gesetz\nslug: x-g_2\n---\n\n# Gesetz (XG)\n\n## § 1 Zweck\n\nText.\n", encoding="utf-8")
    assert parse_markdown(flat, version=V).act.act_id == "de:x-g_2"  # the front matter's slug, as written
