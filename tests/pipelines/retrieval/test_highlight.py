"""Query terms marked in hit texts: inflected forms through the analysers, merged marks, escaping."""

from __future__ import annotations

import re

from pipelines.retrieval.highlight import SNIPPET_CHARS, highlight, merge, query_keys, snippet, snippet_html


def marked(html: str) -> list[str]:
    return re.findall(r"<mark>(.*?)</mark>", html)


def test_polish_inflection_marks_the_nominative_for_a_genitive_query():
    html = snippet_html("Umowa leasingu wymaga zachowania formy dokumentowej.", "umowy leasingu", "pl")
    assert html == "<mark>Umowa leasingu</mark> wymaga zachowania formy dokumentowej."


def test_polish_other_cases_and_no_false_prefix_matches():
    text = "Przez umowę leasingu finansujący zobowiązuje się; leasingodawca w umowie; umowność."
    got = marked(snippet_html(text, "umowa leasingu", "pl"))
    assert got == ["umowę leasingu", "umowie"], got  # "leasingodawca", "umowność" are other words


def test_german_genitive_matches_the_nominative():
    text = "Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet."
    assert marked(snippet_html(text, "Kaufvertrags Verkäufers", "de")) == ["Kaufvertrag", "Verkäufer"]


def test_stop_words_mark_nothing_unless_the_query_has_nothing_else():
    text = "Co to jest umowa, która to jest zawarta."
    assert marked(snippet_html(text, "co to jest umowa", "pl")) == ["umowa"]
    assert "to" in query_keys("to", "pl")  # only stop words: they are the query


def test_numbers_match_superscripts_as_the_analyser_writes_them():
    assert marked(snippet_html("Art. 709² i art. 7092.", "709^2", "pl")) == ["709²"]


def test_overlapping_and_space_separated_marks_are_merged_but_not_across_punctuation():
    text = "umowa leasingu, umowa"
    assert merge([(0, 5), (3, 8), (6, 14)], text) == [(0, 14)]
    assert merge([(0, 5), (6, 14), (16, 21)], text) == [(0, 14), (16, 21)]
    assert highlight(text, "umowy leasingu", "pl") == [(0, 14), (16, 21)]


def test_hostile_text_and_query_are_escaped_and_mark_is_the_only_markup():
    text = 'Umowa <script>alert("x")</script> & <b onmouseover=1>leasingu</b>'
    html = snippet_html(text, '<script> umowy "leasingu"', "pl")
    assert "<script>" not in html and "<b" not in html
    assert "&lt;<mark>script</mark>&gt;" in html and "&amp;" in html and "&quot;" in html
    assert re.sub(r"</?mark>", "", html).count("<") == 0
    assert marked(html) == ["Umowa", "script", "script", "leasingu"]


def test_the_snippet_window_is_the_cluster_of_matches_in_a_long_text():
    filler = "Lorem ipsum dolor sit amet. " * 40
    text = filler + "Umowa leasingu powinna być zawarta na piśmie. " + filler
    s = snippet(text, "umowy leasingu piśmie", "pl")
    assert s.cut_start and s.cut_end and len(s.text) <= SNIPPET_CHARS + 40
    html = s.html()
    assert html.startswith("… ") and html.endswith(" …")
    assert marked(html) == ["Umowa leasingu", "piśmie"]
    assert all(s.text[a:b] in ("Umowa leasingu", "piśmie") for a, b in s.spans)


def test_no_match_shows_the_start_and_a_short_text_whole():
    long = "Pierwsze zdanie tekstu. " * 30
    s = snippet(long, "zachowek", "pl")
    assert s.spans == [] and not s.cut_start and s.cut_end and long.startswith(s.text)
    assert snippet_html("Krótki tekst.", "zachowek", "pl") == "Krótki tekst."


def test_a_mark_longer_than_the_window_is_cut_with_it_and_many_marks_stay_cheap():
    s = snippet("umowa " * 3000, "umowa", "pl")
    assert s.spans == [(0, len(s.text))] and s.cut_end  # one merged mark, cut at the window's end
    text = " ".join(("umowa" if i % 3 == 0 else "x") + "," for i in range(3000))
    assert len(highlight(text, "umowa", "pl")) == 1000
    s = snippet(text, "umowa", "pl")
    assert s.spans and all(s.text[a:b] == "umowa" for a, b in s.spans)
