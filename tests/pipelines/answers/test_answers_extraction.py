"""Model reply → option and cited unit ids: JSON finding, Polish citations, corpus checks."""

from __future__ import annotations

import pytest

from pipelines.answers.extraction import (EXTRACTION_SYSTEM_PROMPT, extraction_messages,
                                          find_json_object, parse_citation, parse_extraction,
                                          resolve_citations)
from pipelines.answers.types import AnswerQuestion

Q = AnswerQuestion("q1", "Zgodnie z Kodeksem cywilnym, prokura:",
                   {"A": "może być zawsze ograniczona ze skutkiem wobec osób trzecich,",
                    "B": "nigdy nie może być ograniczona ze skutkiem wobec osób trzecich,",
                    "C": "w zakresie przewidzianym w ustawie może być ograniczona."},
                   "C", ("pl:kc:art:109^1",))

# A slice of nodes.parquet ids: 109^1 has paragraphs, 5 has none, 445 has § 1 with points.
KNOWN = frozenset({
    "pl:kc:art:5", "pl:kc:art:109^1", "pl:kc:art:109^1:par:1", "pl:kc:art:109^1:par:2",
    "pl:kc:art:109^3", "pl:kc:art:109^3:par:1", "pl:kc:art:445", "pl:kc:art:445:par:1",
    "pl:kc:art:445:par:1:pt:1", "pl:kc:art:101", "pl:kc:art:10",
})


@pytest.mark.parametrize("text, expected", [
    ('{"option": "c", "articles": []}', {"option": "c", "articles": []}),
    ('Oto wynik:\n```json\n{"option": "a"}\n```\nPozdrawiam', {"option": "a"}),
    ('Odpowiedź: {"option": "b", "articles": ["art. 5 k.c."]} — koniec', {"option": "b", "articles": ["art. 5 k.c."]}),
    ('{zepsute} i potem {"option": "a"}', {"option": "a"}),
    ("Wybieram odpowiedź C, art. 109^1 § 2 k.c.", None),
    ('["a", "b"]', None),
    ("", None),
    (None, None),
])
def test_find_json_object(text, expected):
    assert find_json_object(text) == expected


@pytest.mark.parametrize("text, ids, foreign", [
    ("art. 109^1 § 2 k.c.", ("pl:kc:art:109^1:par:2",), ()),
    ("Art. 109¹ §2 Kodeksu cywilnego", ("pl:kc:art:109^1:par:2",), ()),
    ("artykułu 445 § 1 pkt 1", ("pl:kc:art:445:par:1:pt:1",), ()),
    ("art. 65 § 1 i 2 k.c.", ("pl:kc:art:65:par:1", "pl:kc:art:65:par:2"), ()),
    ("art. 5, 6 i 7 k.c.", ("pl:kc:art:5", "pl:kc:art:6", "pl:kc:art:7"), ()),
    ("pl:kc:art:109^1:par:2", ("pl:kc:art:109^1:par:2",), ()),
    ("art. 5 k.c. i art. 10 k.p.c.", ("pl:kc:art:5",), ("art. 10 k.p.c.",)),
    ("art. 10 ust. 2 ustawy o księgach wieczystych", (), ("art. 10 ust. 2",)),
    ("art. 626 ustawy z dnia 17 listopada 1964 r.", (), ("art. 626 ustawy z dnia",)),
    ("art. 58 § 1 (czynność sprzeczna z ustawą jest nieważna)", ("pl:kc:art:58:par:1",), ()),
    ("Kodeks cywilny", (), ()),
])
def test_parse_citation(text, ids, foreign):
    parsed = parse_citation(text, default_act="pl:kc")
    assert parsed.unit_ids == ids and parsed.foreign == foreign


@pytest.mark.parametrize("act, text, ids, foreign", [
    ("pl:kp", "art. 22^1 § 1 k.p.", ("pl:kp:art:22^1:par:1",), ()),
    ("pl:kp", "art. 30 Kodeksu pracy", ("pl:kp:art:30",), ()),
    ("pl:kp", "art. 5 kp", ("pl:kp:art:5",), ()),
    ("pl:kp", "art. 5 k.c.", (), ("art. 5 k.c.",)),  # the Civil Code is another act here
    ("pl:kp", "art. 5 Kodeksu cywilnego", (), ("art. 5 Kodeksu cywilnego",)),
    ("pl:kp", "art. 10 k.p.c.", (), ("art. 10 k.p.c.",)),  # k.p. is not the start of k.p.c.
    ("pl:kp", "art. 100", ("pl:kp:art:100",), ()),  # no act named: the act answered
    ("pl:kpc", "art. 10 § 1 k. p. c.", ("pl:kpc:art:10:par:1",), ()),
    ("pl:kpc", "art. 10 Kodeksu postępowania cywilnego", ("pl:kpc:art:10",), ()),
    ("pl:kpc", "art. 5 k.c. i art. 10 k.p.c.", ("pl:kpc:art:10",), ("art. 5 k.c.",)),
])
def test_parse_citation_of_another_act(act, text, ids, foreign):
    """Every act has its own markers (registry citation, slug, title); no act is the default."""
    parsed = parse_citation(text, default_act=act)
    assert parsed.unit_ids == ids and parsed.foreign == foreign


def test_the_act_is_named_by_the_caller():
    with pytest.raises(TypeError, match="default_act"):
        parse_citation("art. 5 k.c.")
    with pytest.raises(TypeError, match="default_act"):
        resolve_citations(["art. 5 k.c."], KNOWN)
    with pytest.raises(TypeError, match="default_act"):
        parse_extraction('{"option": "c"}', Q, KNOWN)


def test_resolve_citations_against_the_corpus():
    valid, invalid, notes = resolve_citations(
        ["art. 109^1 § 2 k.c.",  # exists
         "art. 109^3 § 2 k.c.",  # the paper's hallucination: 109^3 has no § 2
         "art. 1200 k.c.",  # no such article
         "art. 5 § 1 k.c.",  # § of an article without paragraphs: cut back to the article
         "art. 445 § 1 pkt 7",  # point we cannot place: cut back to § 1
         "art. 1091 § 2 k.c.",  # flattened superscript, one existing reading
         "art. 1010 k.c.",  # no split without a leading zero exists → invalid
         "art. 5 k.p.c."],
        KNOWN, default_act="pl:kc")
    assert valid == ("pl:kc:art:109^1:par:2", "pl:kc:art:5", "pl:kc:art:445:par:1")
    assert invalid == ("pl:kc:art:109^3:par:2", "pl:kc:art:1200", "pl:kc:art:1010", "art. 5 k.p.c.")
    assert any("read as pl:kc:art:109^1:par:2" in n for n in notes)


def test_resolve_without_corpus_accepts_well_formed_citations():
    valid, invalid, _ = resolve_citations(["art. 1200 k.c.", "brak przepisu"], default_act="pl:kc")
    assert valid == ("pl:kc:art:1200",) and invalid == ("brak przepisu",)


def test_ambiguous_flattened_number_is_not_guessed():
    known = {"pl:kc:art:10^11", "pl:kc:art:101^1"}
    assert resolve_citations(["art. 1011"], known, default_act="pl:kc")[0] == ()


@pytest.mark.parametrize("reply, option, problem", [
    ('{"option": "c", "articles": ["art. 109^1 § 2 k.c."]}', "C", None),
    ('{"option": "C)"}', "C", None),
    ('{"Odpowiedź": "b) nigdy nie może"}', "B", None),
    ('{"option": "w zakresie przewidzianym w ustawie może być ograniczona."}', "C", None),  # text, not letter
    ('{"option": "d", "articles": ["art. 5 k.c."]}', None, "'d' is not one of A, B, C"),
    ('{"option": null}', None, "no option chosen"),
    ('{"option": 3}', None, "not a letter"),
    ('{"articles": []}', None, "no 'option'"),
    ("Asystent wybrał C.", None, "no JSON"),
])
def test_parse_extraction_options(reply, option, problem):
    ext = parse_extraction(reply, Q, KNOWN, default_act="pl:kc")
    assert ext.option == option
    if problem is None:
        assert not [p for p in ext.problems if "option" in p or "JSON" in p]
    else:
        assert any(problem in p for p in ext.problems), ext.problems


def test_parse_extraction_citations():
    ext = parse_extraction('{"option": "c", "articles": "art. 109^1 § 2 k.c."}', Q, KNOWN,
                           default_act="pl:kc")
    assert ext.cited_unit_ids == ("pl:kc:art:109^1:par:2",)
    ext = parse_extraction('{"option": "c", "articles": ["art. 1200 k.c.", {"x": 1}]}', Q, KNOWN,
                           default_act="pl:kc")
    assert ext.cited_unit_ids == () and ext.invalid_citations == ("pl:kc:art:1200",)
    assert any("non-text" in p for p in ext.problems)
    ext = parse_extraction('{"option": "c", "articles": 5}', Q, KNOWN, default_act="pl:kc")
    assert ext.cited_unit_ids == () and any("not a list" in p for p in ext.problems)


def test_extraction_messages_carry_question_options_and_reply():
    msgs = extraction_messages(Q, "Odpowiedź C, art. 109^1 § 2 k.c.")
    assert msgs[0] == {"role": "system", "content": EXTRACTION_SYSTEM_PROMPT}
    assert "C) w zakresie" in msgs[1]["content"] and "Odpowiedź C, art. 109^1" in msgs[1]["content"]


def test_known_unit_ids_from_corpus(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelines.answers.extraction import known_unit_ids_from_corpus

    pq.write_table(pa.table({"id": ["pl:kc:art:1", "pl:kc:art:1:par:1"], "level": ["article", "paragraph"]}),
                   tmp_path / "nodes.parquet")
    assert known_unit_ids_from_corpus(tmp_path) == {"pl:kc:art:1", "pl:kc:art:1:par:1"}
