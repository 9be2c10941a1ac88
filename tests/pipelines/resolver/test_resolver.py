"""CitationResolver over real published corpora: the Civil Code in two versions (``corpus_home``) and a
German home with the BGB (Markdown text state) and the Grundgesetz in its three sample versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import BadDate
from pipelines.resolver import CitationResolver
from pipelines.resolver import matches as M

OLD, NEW = "2024-12-19", "2025-11-13"
GG1, GG2, GG3 = "2012-08-03", "2012-08-06", "2020-09-29"


@pytest.fixture(scope="module")
def kc(corpus_home: Path) -> CitationResolver:
    return CitationResolver(ReadService.at(corpus_home))


@pytest.fixture(scope="module")
def de(tmp_path_factory, sample_dir: Path) -> CitationResolver:
    from core.layout import Layout
    from pipelines.statutes.de.build import GermanSource, build_all, build_version

    home = tmp_path_factory.mktemp("resolver_de_home")
    build_all(Layout(home), sample_dir, acts=("de:gg",))
    build_version(Layout(home), GermanSource("de:bgb", "markdown", sample_dir / "de" / "gesetze" / "bgb.md"))
    return CitationResolver.at(home)


def one(resolver: CitationResolver, text: str, **kw):
    res = resolver.resolve(text, **kw)
    assert len(res.citations) == 1, [c.text for c in res.citations]
    c = res.citations[0]
    assert text[c.start:c.end] == c.text
    return c


# -- Polish ------------------------------------------------------------------------------------------


def test_an_article_resolves_exactly_with_its_wording(kc: CitationResolver):
    c = one(kc, "Zgodnie z art. 415 k.c. sprawca odpowiada.", as_of=NEW)
    assert (c.text, c.language, c.act_id, c.match) == ("art. 415 k.c.", "pl", "pl:kc", M.EXACT)
    [u] = c.units
    assert (u.unit_id, u.match, u.status, u.version, u.held_in) == ("pl:kc:art:415", M.EXACT, "in_force", NEW,
                                                                    [OLD, NEW])
    assert u.text.startswith("Kto z winy swej wyrządził drugiemu szkodę")


def test_the_wording_is_the_one_in_force_at_the_date(kc: CitationResolver):
    old = one(kc, "art. 709^2 k.c.", as_of="2025-01-01").units[0]
    new = one(kc, "art. 709^2 k.c.", as_of="2025-12-01").units[0]
    assert (old.version, old.text) == (OLD, "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności.")
    assert (new.version, new.text) == (NEW, "Umowa leasingu wymaga zachowania formy dokumentowej.")
    assert one(kc, "art. 709² k.c.", as_of="2025-01-01").units[0].text == old.text  # superscript printed


def test_a_non_existent_article_is_not_found(kc: CitationResolver):
    c = one(kc, "art. 9999 k.c.", as_of=NEW)
    assert c.match == M.NOT_FOUND
    assert [(u.unit_id, u.text, u.status) for u in c.units] == [("pl:kc:art:9999", None, None)]
    assert "no held version" in c.units[0].note


def test_a_missing_paragraph_of_an_existing_article_is_partial(kc: CitationResolver):
    c = one(kc, "art. 415 § 7 k.c.", as_of=NEW)
    assert c.match == M.PARTIAL
    [u] = c.units
    assert (u.unit_id, u.article_id, u.text, u.status, u.held_in) == ("pl:kc:art:415:par:7", "pl:kc:art:415", None,
                                                                      None, [])


def test_a_list_of_paragraphs_is_one_citation_with_a_unit_each(kc: CitationResolver):
    c = one(kc, "art. 445 § 1 i 2 k.c.", as_of=NEW)
    assert [u.unit_id for u in c.units] == ["pl:kc:art:445:par:1", "pl:kc:art:445:par:2"]
    assert all(u.match == M.EXACT and u.text.startswith(f"§ {n}.") for u, n in zip(c.units, (1, 2)))
    mixed = one(kc, "art. 445 § 1 i 9 k.c.", as_of=NEW)
    assert [u.match for u in mixed.units] == [M.EXACT, M.PARTIAL] and mixed.match == M.PARTIAL


def test_a_repealed_article_has_status_repealed(kc: CitationResolver):
    c = one(kc, "art. 2 k.c.", as_of=NEW)
    assert (c.match, c.units[0].status) == (M.EXACT, "repealed")


def test_an_act_the_corpus_does_not_hold(kc: CitationResolver):
    c = one(kc, "art. 98 § 1 i 3 k.p.c.", as_of=NEW)
    assert (c.act_id, c.match) == ("pl:kpc", M.ACT_NOT_HELD)
    assert [u.unit_id for u in c.units] == ["pl:kpc:art:98:par:1", "pl:kpc:art:98:par:3"]
    assert all(u.text is None for u in c.units)


def test_an_article_without_an_act_is_never_given_one(kc: CitationResolver):
    c = one(kc, "Na podstawie art. 415 sąd zasądził.", as_of=NEW)
    assert (c.act_id, c.match) == (None, M.AMBIGUOUS)
    assert c.units[0].candidates == ["pl:kc:art:415"] and c.units[0].unit_id is None
    assert one(kc, "art. 9999", as_of=NEW).match == M.NO_ACT


def test_a_date_before_the_oldest_version_is_not_covered(kc: CitationResolver):
    c = one(kc, "art. 415 k.c.", as_of="2000-01-01")
    assert c.match == M.NOT_COVERED and c.units[0].held_in == [OLD, NEW]


@pytest.mark.parametrize("bad", ["2025-13-01", "yesterday", "20250101"])
def test_a_bad_date_is_refused(kc: CitationResolver, bad: str):
    with pytest.raises(BadDate, match="as_of"):
        kc.resolve("art. 415 k.c.", as_of=bad)


def test_a_bad_language_is_refused(kc: CitationResolver):
    with pytest.raises(ValueError, match="language"):
        kc.resolve("art. 415 k.c.", language="fr")


def test_a_lost_superscript_is_read_as_the_article_that_exists_and_said(kc: CitationResolver):
    c = one(kc, "art. 4491 k.c.", as_of=NEW)
    assert (c.units[0].unit_id, c.printed, c.match) == ("pl:kc:art:449^1", "4491", M.READ_AS)
    assert "4491" in c.note
    # written with its superscript, the same article is exact
    assert one(kc, "art. 449^1 k.c.", as_of=NEW).match == M.EXACT


def test_counts_and_to_dict(kc: CitationResolver):
    res = kc.resolve("art. 415 k.c., art. 9999 k.c. oraz art. 415 § 7 k.c.", as_of=NEW)
    assert [c.match for c in res.citations] == [M.EXACT, M.NOT_FOUND, M.PARTIAL]
    d = res.to_dict()
    assert d["counts"] == {**{k: 0 for k in M.KINDS}, M.EXACT: 1, M.NOT_FOUND: 1, M.PARTIAL: 1}
    assert d["as_of"] == NEW and d["language"] == "pl"
    assert d["citations"][0]["units"][0]["unit_id"] == "pl:kc:art:415"


# -- German ------------------------------------------------------------------------------------------


def test_a_german_absatz_resolves_exactly(de: CitationResolver):
    c = one(de, "Der Anspruch folgt aus § 823 Abs. 1 BGB.")
    assert (c.text, c.language, c.act_id, c.match) == ("§ 823 Abs. 1 BGB", "de", "de:bgb", M.EXACT)
    assert c.units[0].unit_id == "de:bgb:par:823:abs:1"
    assert c.units[0].text.startswith("(1) Wer vorsätzlich oder fahrlässig")


def test_823_and_1823_never_meet(de: CitationResolver):
    a, b = one(de, "§ 823 BGB").units[0], one(de, "§ 1823 BGB").units[0]
    assert (a.unit_id, b.unit_id) == ("de:bgb:par:823", "de:bgb:par:1823")
    assert a.text != b.text and "1823" not in (a.note or "")
    # a number longer than the scanner reads is never matched by its prefix
    c = one(de, "§ 18235 BGB")
    assert (c.text, c.units[0].unit_id, c.match, c.printed) == ("§ 18235 BGB", "de:bgb:par:18235", M.NOT_FOUND,
                                                               "18235")


def test_a_bare_paragraph_lists_candidates_and_picks_none(de: CitationResolver):
    c = one(de, "§ 823")
    assert (c.act_id, c.match) == (None, M.AMBIGUOUS)
    assert c.units[0].candidates == ["de:bgb:par:823"] and c.units[0].unit_id is None
    assert one(de, "Art. 21 Abs. 1").units[0].candidates == ["de:gg:art:21:abs:1"]
    # candidates come from the citation's own jurisdiction: a Polish "art. 21" is not the GG's Art. 21
    pl = one(de, "Zgodnie z art. 21 ustawy.", language="pl")
    assert (pl.language, pl.match, pl.units[0].candidates) == ("pl", M.NO_ACT, [])


def test_a_list_gives_a_citation_per_section(de: CitationResolver):
    res = de.resolve("§§ 823, 826 BGB")
    assert [(c.units[0].unit_id, c.match) for c in res.citations] == [("de:bgb:par:823", M.EXACT),
                                                                     ("de:bgb:par:826", M.EXACT)]


def test_an_absatz_added_later_is_not_in_the_earlier_version(de: CitationResolver):
    early = one(de, "Art. 21 Abs. 4 GG", as_of=GG2)
    assert (early.match, early.units[0].held_in) == (M.NOT_IN_VERSION, [GG3])
    assert one(de, "Art. 21 Abs. 4 GG", as_of=GG3).match == M.EXACT
    assert one(de, "Art. 21 Abs. 4 GG", as_of="2012-01-01").match == M.NOT_COVERED


def test_a_repealed_paragraph(de: CitationResolver):
    c = one(de, "§ 3 BGB")
    assert (c.match, c.units[0].status) == (M.EXACT, "repealed")


def test_overlapping_readings_keep_the_one_naming_a_held_act(de: CitationResolver):
    c = one(de, "Art. 3 Abs. 1 GG")  # the Polish scanner also reads an act-less "Art. 3"
    assert (c.language, c.act_id, c.units[0].unit_id) == ("de", "de:gg", "de:gg:art:3:abs:1")


def test_mixed_languages_in_one_text(de: CitationResolver):
    res = de.resolve("Zgodnie z art. 415 k.c. oraz § 823 Abs. 1 BGB.")
    assert [(c.language, c.act_id, c.match) for c in res.citations] == [("pl", "pl:kc", M.ACT_NOT_HELD),
                                                                       ("de", "de:bgb", M.EXACT)]


def test_a_german_range_is_one_citation_expanded_in_the_acts_own_order(de: CitationResolver):
    c = one(de, "nach §§ 184 bis 187 BGB")
    assert (c.text, c.match) == ("§§ 184 bis 187 BGB", M.EXACT)
    assert [u.unit_id for u in c.units] == [f"de:bgb:par:{n}" for n in (184, 185, 186, 187)]
    g = one(de, "Art. 1 bis 3 GG")
    assert [u.unit_id for u in g.units] == ["de:gg:art:1", "de:gg:art:2", "de:gg:art:3"]


def test_a_german_range_too_long_backwards_or_with_a_missing_end_keeps_its_two_ends(de: CitationResolver):
    long_ = one(de, "§§ 1 bis 200 BGB")
    assert [u.unit_id for u in long_.units] == ["de:bgb:par:1", "de:bgb:par:200"] and "at most" in long_.note
    back = one(de, "§§ 187 bis 184 BGB")
    assert [u.unit_id for u in back.units] == ["de:bgb:par:187", "de:bgb:par:184"] and "after" in back.note
    gone = one(de, "§§ 823 bis 9999 BGB")
    assert [(u.unit_id, u.match) for u in gone.units] == [("de:bgb:par:823", M.EXACT), ("de:bgb:par:9999", M.NOT_FOUND)]
    assert gone.match == M.NOT_FOUND  # never stretched to a § that exists


# -- issue 26: acts the corpus does not hold, named in words or by their usual forms; ranges ---------------


def test_an_act_named_in_words_that_the_corpus_does_not_hold_is_named_not_replaced(kc: CitationResolver):
    """Before: ambiguous, with art. 27 of the k.c. / k.p.c. / k.p. as candidates."""
    c = one(kc, "zgodnie z art. 27 ustawy o prawach konsumenta", as_of="2025-12-01")
    assert (c.text, c.act_id, c.match) == ("art. 27 ustawy o prawach konsumenta", "pl:upk", M.ACT_NOT_HELD)
    [u] = c.units
    assert (u.unit_id, u.match, u.candidates, u.text) == ("pl:upk:art:27", M.ACT_NOT_HELD, [], None)
    assert (c.act.title, c.act.date, c.act.address, c.act.gazette, c.act.held) == (
        "ustawa o prawach konsumenta", "2014-05-30", "DU/2014/827", "Dz. U. 2014 poz. 827", False)
    assert "ustawa o prawach konsumenta, Dz. U. 2014 poz. 827" in u.note and "held:" not in u.note


def test_an_eu_regulation_by_its_polish_short_form(kc: CitationResolver):
    """Before: no_act."""
    c = one(kc, "art. 10 ust. 1 RODO", as_of=NEW)
    assert (c.act_id, c.match, [u.unit_id for u in c.units]) == ("eu:2016/679", M.ACT_NOT_HELD,
                                                                 ["eu:2016/679:art:10:ust:1"])
    assert (c.act.jurisdiction, c.act.address, c.act.citation) == ("eu", "eli/reg/2016/679/oj", "RODO")


@pytest.mark.parametrize("text", ["art. 148 par. 2 kk", "art. 148 § 2 k.k", "art. 148 par 2 KK", "art. 148 § 2 k.k."])
def test_the_usual_forms_of_the_criminal_code(kc: CitationResolver, text: str):
    """Before: ``art. 148 par. 2 kk`` was ambiguous (``par.`` was not read as §). This home holds the
    k.c. only, so the k.k. is named and not held."""
    c = one(kc, text, as_of=NEW)
    assert (c.act_id, c.match, [u.unit_id for u in c.units]) == ("pl:kk", M.ACT_NOT_HELD, ["pl:kk:art:148:par:2"])
    assert (c.act.title, c.act.address) == ("Kodeks karny", "DU/1997/553")


def test_a_held_act_is_named_too(kc: CitationResolver):
    c = one(kc, "art. 415 k.c.", as_of=NEW)
    assert (c.act.id, c.act.held, c.act.title, c.act.citation) == ("pl:kc", True, "Kodeks cywilny", "k.c.")


def test_a_polish_range_is_expanded_in_the_acts_own_order(kc: CitationResolver):
    c = one(kc, "art. 353–356 k.c.", as_of=NEW)
    assert [u.unit_id for u in c.units] == ["pl:kc:art:353", "pl:kc:art:353^1", "pl:kc:art:354", "pl:kc:art:355",
                                            "pl:kc:art:356"]
    assert (c.match, c.range.expanded, c.range.count, c.range.problem) == (M.EXACT, True, 5, None)


def test_a_range_too_long_says_so(kc: CitationResolver):
    """Before: two units, both exact, no note."""
    c = one(kc, "art. 1–70 k.c.", as_of=NEW)
    assert [(u.unit_id, u.match) for u in c.units] == [("pl:kc:art:1", M.RANGE_TOO_LONG),
                                                       ("pl:kc:art:70", M.RANGE_TOO_LONG)]
    assert c.match == M.RANGE_TOO_LONG and (c.range.expanded, c.range.problem) == (False, "too_long")
    assert c.range.count > 60 and f"{c.range.count} units" in c.note


def test_a_backwards_range_says_so(kc: CitationResolver):
    """Before: two units, both exact, no note."""
    c = one(kc, "art. 7–5 k.c.", as_of=NEW)
    assert [(u.unit_id, u.match) for u in c.units] == [("pl:kc:art:7", M.RANGE_BACKWARDS),
                                                       ("pl:kc:art:5", M.RANGE_BACKWARDS)]
    assert (c.match, c.range.problem) == (M.RANGE_BACKWARDS, "backwards") and "backwards" in c.note


def test_ranges_of_an_act_not_held_or_of_no_act_are_counted_by_number(kc: CitationResolver):
    c = one(kc, "art. 5–7 ustawy o prawach konsumenta", as_of=NEW)
    assert [u.unit_id for u in c.units] == ["pl:upk:art:5", "pl:upk:art:6", "pl:upk:art:7"]
    back = one(kc, "art. 9–3 ustawy o prawach konsumenta", as_of=NEW)
    assert (back.match, back.range.problem, len(back.units)) == (M.ACT_NOT_HELD, "backwards", 2)
    long_ = one(kc, "art. 1–100 Kodeksu karnego", as_of=NEW)
    assert (long_.range.problem, long_.range.count, len(long_.units)) == ("too_long", 100, 2)


def test_an_act_named_by_a_title_no_table_knows(kc: CitationResolver):
    c = one(kc, "art. 5 ustawy o zmianie ustawy o finansach publicznych, a także", as_of=NEW)
    assert (c.act_id, c.match, c.units[0].unit_id, c.units[0].candidates) == (None, M.ACT_NOT_HELD, None, [])
    assert (c.act.id, c.act.title, c.act.known, c.act.held) == (
        None, "ustawa o zmianie ustawy o finansach publicznych", False, False)


def test_the_date_picks_among_acts_sharing_a_short_form(kc: CitationResolver):
    assert one(kc, "art. 89 ust. 1 pkt 2 p.z.p.", as_of="2015-06-01").act_id == "pl:pzp"
    assert one(kc, "art. 226 ust. 1 pkt 5 p.z.p.", as_of=NEW).act_id == "pl:pzp2019"


def test_a_german_act_not_held_is_named_with_its_bgbl_address(kc: CitationResolver):
    res = kc.resolve("Die Kündigung ist nach § 1 Abs. 2 KSchG i.V.m. § 626 BGB a.F. unwirksam; §§ 1 bis 3 KSchG.")
    kschg, bgb, rng = res.citations
    assert (kschg.act_id, kschg.match, kschg.units[0].unit_id) == ("de:kschg", M.ACT_NOT_HELD, "de:kschg:par:1:abs:2")
    assert (kschg.act.title, kschg.act.address) == ("Kündigungsschutzgesetz", "BGBl I: 1951, 499")
    assert (bgb.act_id, bgb.units[0].unit_id) == ("de:bgb", "de:bgb:par:626")
    assert [u.unit_id for u in rng.units] == ["de:kschg:par:1", "de:kschg:par:2", "de:kschg:par:3"]
    d = one(kc, "Art. 6 Abs. 1 DSGVO")
    assert (d.act_id, d.match) == ("eu:2016/679", M.ACT_NOT_HELD)


def test_to_dict_carries_act_and_range(kc: CitationResolver):
    d = kc.resolve("art. 7–5 k.c. oraz art. 27 ustawy o prawach konsumenta", as_of=NEW).to_dict()
    first, second = d["citations"]
    assert first["range"] == {"first": "art:7", "last": "art:5", "expanded": False, "count": None,
                              "problem": "backwards"}
    assert second["act"]["id"] == "pl:upk" and second["act"]["held"] is False
    assert d["counts"][M.RANGE_BACKWARDS] == 1 and d["counts"][M.ACT_NOT_HELD] == 1
