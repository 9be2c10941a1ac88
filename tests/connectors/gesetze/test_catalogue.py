"""connectors/gesetze/catalogue.py: every act discovered, whatever era its front matter is from."""

from __future__ import annotations

from connectors.gesetze.catalogue import discover, read_front_matter
from connectors.gesetze.git import GitRepo


def test_front_matter_of_2012_and_2022():
    y2012 = "---\nTitle: !!python/unicode 'Gesetz zur Begrenzung der Arzneimittelausgaben der gesetzlichen\n" \
            "  Krankenversicherung'\nlayout: default\nslug: aabg\n---\n\n# Gesetz zur Begrenzung … (AABG)\n"
    fm = read_front_matter(y2012)
    assert fm.title == "Gesetz zur Begrenzung der Arzneimittelausgaben der gesetzlichen Krankenversicherung"
    assert (fm.jurabk, fm.slug) == ("AABG", "aabg")
    empty = "[^f772414_01_BJNR215700009]\nVerordnung über die Berufsausbildung zur Fachkraft Agrarservice\n" \
            "---\nTitle: !!python/unicode ''\nlayout: default\nslug: agrarausbv\n---\n\n#  (AgrarAusbV)\n"
    fm = read_front_matter(empty)
    assert (fm.title, fm.jurabk) == ("Verordnung über die Berufsausbildung zur Fachkraft Agrarservice", "AgrarAusbV")
    y2022 = "---\nTitle: Bürgerliches Gesetzbuch\njurabk: BGB\nlayout: default\nslug: bgb\n---\n\n# Bürgerliches Gesetzbuch (BGB)\n"
    assert read_front_matter(y2022) == type(fm)("Bürgerliches Gesetzbuch", "BGB", "bgb")
    assert read_front_matter("no front matter at all\n") == type(fm)("", "", "")


def test_discover_every_act_of_the_import(gesetze_full):
    repo = GitRepo(gesetze_full)
    first = repo.first_parent("HEAD")[1]
    acts = discover(repo, first, changeset="0001")
    assert len(acts) == 6183
    assert all(a.title and a.citation for a in acts)
    by_id = {a.id: a for a in acts}
    assert by_id["de:bgb"].citation == "BGB" and by_id["de:bgb"].path == "b/bgb/index.md"
    assert "de:1-dm-goldmuenzg" in by_id and "de:tier-lmhv" in by_id
