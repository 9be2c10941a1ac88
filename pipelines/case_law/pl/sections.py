"""Split a Polish judgment's clean text into its parts: komparycja, sentencja, uzasadnienie, ….

Why these parts: a Polish judgment (wyrok, postanowienie, uchwała) has a fixed order, whatever
the court — the *komparycja* (signature, type, "W imieniu Rzeczypospolitej Polskiej", date, court
and bench, parties, what was heard), the *sentencja* (the operative part: "oddala skargę
kasacyjną", "orzeka: 1. Oddala odwołanie."), then the *uzasadnienie* (reasons), in which the court
turns from the history of the case to its own assessment with a fixed phrase ("Sąd Najwyższy
zważył, co następuje:", "Izba zważyła, co następuje:", "Trybunał Konstytucyjny zważył, co
następuje:" — the *rozważania*), and, at the Constitutional Tribunal, dissenting opinions
("Zdanie odrębne sędziego TK …"). A search hit must say which part it is in: the same sentence is
a party's argument in the uzasadnienie and the court's holding in the rozważania.

Section names (``CASE_CHUNKS.section``; the search heading ends with the name):

* ``komparycja`` — from the start of the text to the operative part (the rubrum: "Sygn. akt",
  "WYROK", the bench, the parties); its label is the judgment-type heading as printed ("WYROK");
* ``sentencja`` — from the operative heading ("orzeka:", "postanawia:", "p o s t a n a w i a:",
  "podjął uchwałę:", "uchwala:") or, where the court has none (Supreme Court, common courts),
  from the first paragraph opening with an operative verb ("oddala", "I. utrzymuje", "1) uchyla",
  …, or "… 2010 r., oddala skargę kasacyjną" inside the paragraph after the date of the judgment
  appealed against) up to the reasons;
* ``pouczenie`` — KIO's instruction on the appeal after its operative part ("Stosownie do art.
  198a i 198b ustawy … przysługuje skarga …"), and a "Pouczenie" heading of other courts;
* ``uzasadnienie`` — from the "Uzasadnienie" / "UZASADNIENIE" / "U z a s a d n i e n i e"
  heading; a REASONS document (the common courts publish reasons separately) is komparycja
  ("Sygn. akt …") plus uzasadnienie, with no sentencja because its text has none;
* ``rozwazania`` — from the "… zważył(a), co następuje:" line inside the reasons (KIO also
  "Izba stwierdziła, co następuje"); "Izba ustaliła i zważyła, co następuje" announces facts and
  law together and stays uzasadnienie;
* ``zdanie_odrebne`` — from a "Zdanie odrębne" heading (TK, SN); an "UZASADNIENIE" inside a
  dissent is the dissent's own and does not leave it; each dissent is a section;
* ``body`` — a text in which none of these is found (never the case on the 200 judgments).

Sections cover the text without overlap, in order; a section may begin inside a paragraph only
for the operative verb after a date ("…, oddala …"), and the chunker clips paragraphs to their
section (:func:`pipelines.case_law.pl.build.section_pieces`).

Measured on the 200 judgments of the two real dump pages (``shared/data/pl/saos``, pages 347 and
355; ``tests/pipelines/case_law/test_pl_judgments.py`` keeps the figures):

* sentencja: 195 of the 195 judgments whose text has an operative part (all but the 5 REASONS
  documents; one more REASONS record is in fact a whole judgment with "orzeka:"): 100 % — Supreme
  Court 68/68, KIO 80/80, Constitutional Tribunal 26/26, common courts 21/21;
* uzasadnienie (with its rozważania): 194 of the 194 judgments whose text has a reasons heading
  (loose check, independent of the splitter: a line that is "uzasadnienie" in any case or letter
  spacing): 100 %;
* rozważania: 159 (SN 61, KIO 54, TK 26, common courts 18; the rest of the reasons have no such
  phrase, or one this splitter does not take: "Rozpoznając sprawę w granicach apelacji, Sąd
  Apelacyjny miał na uwadze, co następuje."); teza: 8 (the SN's reporter versions);
  zdanie odrębne: 3 dissents (TK Kp 1/11, SK 26/09, SK 41/09 — every "Zdanie odrębne" heading
  of the pages); pouczenie: 79 of 80 KIO judgments;
* never ``body``: every judgment has at least its komparycja.

The starts of all 195 sentencje were printed and read; ten judgments were read whole (SN I CSK
428/10, III CZP 111/10, I CZ 29/11, II PK 181/10; KIO 771/11, 823/11; TK K 2/09, Kp 1/11, SK 26/09,
Ts 89/10; SA Wrocław II AKa 105/11): every boundary where a lawyer would put it, except that
KIO's chairman's signature and repeated "Sygn. akt: KIO 771/11" before the reasons stay at the end
of the pouczenie, and TK's part numbers "I" / "II" stay lines of the uzasadnienie (its "III" is
the first line of the rozważania).
"""

from __future__ import annotations

import re

from pipelines.case_law.html_text import CleanText
from pipelines.case_law.sections import Section, _unspace

KOMPARYCJA = "komparycja"
TEZA = "teza"
SENTENCJA = "sentencja"
POUCZENIE = "pouczenie"
UZASADNIENIE = "uzasadnienie"
ROZWAZANIA = "rozwazania"
ZDANIE_ODREBNE = "zdanie_odrebne"
FALLBACK = "body"
PL_SECTIONS: tuple[str, ...] = (KOMPARYCJA, TEZA, SENTENCJA, POUCZENIE, UZASADNIENIE, ROZWAZANIA, ZDANIE_ODREBNE,
                                FALLBACK)
# the parts a reader of the reasons looks in (uzasadnienie coverage counts either)
REASONS = (UZASADNIENIE, ROZWAZANIA)

_MAX_HEADING = 160  # characters of a heading line; a paragraph that merely contains the words is not one

# judgment-type headings of the komparycja ("WYROK", "Uchwała składu siedmiu sędziów z dnia …")
_TYPE_HEADING = re.compile(r"^(?:wyrok|postanowienie|uchwała|zarządzenie|wyrok łączny|wyrok zaoczny)"
                           r"(?:\s+(?:w imieniu rzeczypospolitej polskiej|z dnia\b.*|składu\b.*|"
                           r"sądu najwyższego\b.*))?$")
# operative headings: the line is the verb (letter spacing undone: "p o s t a n a w i a:")
_OPERATIVE_HEADING = re.compile(
    r"^(?:(?:sąd najwyższy|sąd|trybunał konstytucyjny|krajowa izba odwoławcza|izba)\s+)?"
    r"(?:orzeka|postanawia|orzeka i postanawia|postanawia i orzeka|uchwala|zarządza|"
    r"podjął uchwałę|podjął następującą uchwałę|podejmuje uchwałę|ponadto postanawia|ponadtopostanawia|"
    r"postanowił|orzekł|orzeka, co następuje|postanawia, co następuje)$")
# an operative verb opening a paragraph of the sentencja, after an optional point number; present
# tense in the courts' own texts ("oddala"), past tense in the Supreme Court's reporter versions
# ("o d d a l i ł", letter-spaced for emphasis)
_PRESENT = ("oddala", "odrzuca", "uchyla", "zmienia", "utrzymuje", "zasądza", "umarza", "orzeka", "postanawia",
            "stwierdza", "przekazuje", "odmawia", "uwzględnia", "nakazuje", "uznaje", "skazuje", "uniewinnia",
            "zawiesza", "podejmuje", "przywraca", "ustala", "obciąża", "zalicza", "przyznaje", "wymierza",
            "zwalnia", "znosi", "przedstawia", "udziela", "unieważnia", "uzupełnia", "prostuje", "odstępuje",
            "warunkowo", "nie uwzględnia", "nie stwierdza")
_PAST = ("oddalił", "odrzucił", "uchylił", "zmienił", "utrzymał", "zasądził", "umorzył", "orzekł", "postanowił",
         "stwierdził", "przekazał", "odmówił", "uwzględnił", "nakazał", "uznał", "uniewinnił", "podjął",
         "przywrócił", "ustalił", "wymierzył", "nie stwierdził", "nie uwzględnił")


def _spaced(word: str) -> str:
    """'oddalił' → a pattern also matching 'o d d a l i ł' (and 'nie stwierdził' → 'n i e s t w …')."""
    return r"\s?".join(re.escape(ch) for ch in word.replace(" ", ""))


# infinitives open numbered points of a decision whose "postanawia" is implied ("1. nadać klauzulę …")
_INFINITIVES = ("nadać", "umorzyć", "odrzucić", "oddalić", "uchylić", "zmienić", "zasądzić", "nakazać", "odmówić",
                "stwierdzić", "przekazać", "zwrócić", "uznać", "zawiesić", "znieść", "przyznać", "utrzymać")
_VERBS = "|".join(sorted({*map(re.escape, _PRESENT), *map(_spaced, _PAST)}, key=len, reverse=True))
_OPERATIVE_START = re.compile(rf"^(?:(?:[IVX]{{1,5}}|\d{{1,2}})[.)]?\s+)?(?:{_VERBS})(?!\w)|"
                              rf"^(?:[IVX]{{1,5}}|\d{{1,2}})[.)]\s+(?:{'|'.join(_INFINITIVES)})(?!\w)", re.IGNORECASE)
# "… z dnia 16 kwietnia 2010 r., oddala skargę kasacyjną", "… w dniu 14 czerwca 2011 r., odrzuca skargę":
# the verb right after a date that follows "z dnia" / "w dniu" in the same paragraph
_OPERATIVE_INSIDE = re.compile(rf"\b(?:z dnia|w dniu)\s[^.;:]*?\d{{4}}\s?r\.,?\s+(?=(?:{_VERBS})(?!\w))")
_OPERATIVE_LEAD = re.compile(r"^(?:orzeka|postanawia|postanowił|orzekł|podjął uchwałę|uchwala)\s*:\s*\S")
# a paragraph of the komparycja that ends by announcing the operative part ("… po stronie
# Zamawiającego postanawia:"): the sentencja starts with the next paragraph
_ANNOUNCES = re.compile(r"\s(?:orzeka|postanawia|postanowił|orzekł|podjął uchwałę|uchwala)\s*:\s*$")
# the Supreme Court's reporter versions open "Wyrok z dnia 5 maja 2011 r." + "II PK 181/10" and
# print the thesis (teza) before the bench ("Przewodniczący: …", "Sędzia SN …", "Sąd Najwyższy …")
_SIGNATURE = re.compile(r"^(?:sygn\.\s*akt:?\s*)?(?:[IVX]{1,4}\s+)?[A-Z][A-Za-z]{0,5}(?:/[A-Za-z]{1,4})?\s+\d{1,5}/\d{2}\.?$")
_BENCH = re.compile(r"^(?:Przewodnicz|Sędzi|Prezes|Sąd\b|S ą d|Skład|SSN\b|SSA\b|Trybunał)")
_UZASADNIENIE = re.compile(r"^uzasadnienie(?:\s+(?:wyroku|postanowienia|uchwały|zarządzenia)\b.*)?$")
_ZDANIE_ODREBNE = re.compile(r"^zdanie odrębne(?:\s+(?:sędzi|ssn|prezesa|wiceprezesa|sędziów)\b.*)?$")
# the court turns to its own findings and assessment: "Sąd Najwyższy zważył, co następuje:", "Izba
# ustaliła i zważyła, co następuje.", "… Izba stwierdziła co następuje:", "Sąd Apelacyjny zważył:"
_ROZWAZANIA = re.compile(r"(?:zważył[a]?|zważono|rozważył[a]?|stwierdził[a]?|stwierdza)\s*,?\s*"
                         r"(?:co następuje\s*[:.]?|następująco\s*[:.]?|:)\s*(?:\(\.\.\.\)\s*)?$")
_ROZWAZANIA_INSIDE = re.compile(r"(?:zważył[a]?|zważono)\s*,?\s*co następuje\s*:\s*\S")
_COURT_SUBJECT = re.compile(r"\b(?:Sąd|Izba|KIO|Trybunał|skład orzekający|zważono)", re.IGNORECASE)
_ROMAN = re.compile(r"^[IVX]{1,5}\.?$")
_MAX_LEAD_IN = 400  # "Krajowa Izba Odwoławcza, uwzględniając dokumentację …, ustaliła i zważyła, co następuje:"
_POUCZENIE_KIO = re.compile(r"^Stosownie do (?:treści )?art\. ?198 ?a\b")


def _key(line: str) -> str:
    """Lower case, letter spacing undone, trailing colon/period dropped: 'U z a s a d n i e n i e' → 'uzasadnienie'."""
    return _unspace(line) if len(line) <= 2 * _MAX_HEADING else ""


def is_operative_heading(line: str) -> bool:
    """A line that is the operative verb ("orzeka:", "p o s t a n a w i a:", "podjął uchwałę:") or
    opens with it and a colon ("postanowił: zaskarżone zarządzenie utrzymać w mocy.")."""
    return (len(line) <= _MAX_HEADING and bool(_OPERATIVE_HEADING.match(_key(line)))) or bool(_OPERATIVE_LEAD.match(line))


def is_reasons_heading(line: str) -> bool:
    """A line that opens the reasons ("Uzasadnienie", "UZASADNIENIE", "U z a s a d n i e n i e")."""
    return bool(_UZASADNIENIE.match(_key(line))) and len(line) <= _MAX_HEADING


def split_pl_sections(clean: CleanText) -> list[Section]:
    """Sections of a Polish judgment, in order, covering the whole text without overlap."""
    text = clean.text
    if not text:
        return []
    # (start, body_start, name, label): a heading line's body starts after it; a paragraph that is
    # content and opens a section starts its body at once
    opened: list[tuple[int, int, str, str]] = [(0, 0, KOMPARYCJA, "")]
    state = KOMPARYCJA
    type_label = ""
    found = False
    reporter = 0  # 1: after a "Wyrok z dnia …" heading (a thesis may follow), 2: in the thesis
    announced = False  # the previous paragraph ended with "postanawia:" and the like
    prev_start, prev_roman = 0, False  # the previous paragraph: where, and is it a bare "III"?
    for b in clean.blocks:
        line = text[b.start:b.end]  # blocks are stripped: no leading or trailing space
        key = _key(line)
        short = len(line) <= _MAX_HEADING
        after = min(b.end + 1, len(text))
        new: tuple[int, int, str, str] | None = None
        if state != ZDANIE_ODREBNE and state != KOMPARYCJA and short and _ZDANIE_ODREBNE.match(key):
            new = (b.start, after, ZDANIE_ODREBNE, line)
        elif state in (KOMPARYCJA, TEZA, SENTENCJA, POUCZENIE) and short and _UZASADNIENIE.match(key):
            new = (b.start, after, UZASADNIENIE, line)
        elif state in (KOMPARYCJA, TEZA):
            if short and not type_label and _TYPE_HEADING.match(key):
                type_label = line
                found = True
                reporter = 1 if " z dnia " in f" {key} " else 0
                if reporter and _SIGNATURE.search(line.rsplit(",", 1)[-1].strip()):
                    reporter = 2  # "Wyrok z dnia 15 czerwca 2011 r., V CSK 405/10": the thesis is next
            elif reporter == 1 and _SIGNATURE.match(line):
                reporter = 2
            elif reporter == 2 and state == KOMPARYCJA:
                if _BENCH.match(line):
                    reporter = 0  # the bench right after the heading: this version has no thesis
                else:
                    new = (b.start, b.start, TEZA, "")
            elif state == TEZA and _BENCH.match(line):
                new = (b.start, b.start, KOMPARYCJA, "")
                reporter = 0
            elif state == KOMPARYCJA and short and _OPERATIVE_HEADING.match(key):
                new = (b.start, after, SENTENCJA, line)
            elif state == KOMPARYCJA and (announced or _OPERATIVE_START.match(line)):
                new = (b.start, b.start, SENTENCJA, "")
            elif state == KOMPARYCJA:
                m = _OPERATIVE_INSIDE.search(text, b.start, b.end)
                if m:
                    new = (m.end(), m.end(), SENTENCJA, "")
            if reporter == 1 and new is None and b.start > 0 and not _TYPE_HEADING.match(key):
                reporter = 0 if not _SIGNATURE.match(line) else reporter
        elif state == SENTENCJA:
            if _POUCZENIE_KIO.match(line):
                new = (b.start, b.start, POUCZENIE, "")
            elif short and key == "pouczenie":
                new = (b.start, after, POUCZENIE, line)
        elif state == UZASADNIENIE and _COURT_SUBJECT.search(line[:_MAX_LEAD_IN]):
            if len(line) <= _MAX_LEAD_IN and _ROZWAZANIA.search(line):
                # TK prints its part number ("III") on the line before: it belongs to the rozważania
                start = prev_start if prev_roman else b.start
                new = (start, after, ROZWAZANIA, line)
            elif _ROZWAZANIA_INSIDE.search(line[:_MAX_LEAD_IN]):  # "… zważyła, co następuje: odwołanie podlega …"
                new = (b.start, b.start, ROZWAZANIA, "")
        announced = state == KOMPARYCJA and new is None and bool(_ANNOUNCES.search(line))
        prev_start, prev_roman = b.start, bool(_ROMAN.match(line))
        if new is not None:
            opened.append(new)
            state = new[2]
            found = True
    if not found:
        return [Section(FALLBACK, "", 0, len(text), 0, 0)]
    if type_label:
        opened[0] = (0, 0, KOMPARYCJA, type_label)
    sections: list[Section] = []
    for k, (start, body_start, name, label) in enumerate(opened):
        stop = opened[k + 1][0] if k + 1 < len(opened) else len(text)
        if k + 1 < len(opened) and stop > 0 and text[stop - 1] == "\n":
            stop -= 1  # the newline before the next section's first line belongs to neither
        if start >= stop and name == KOMPARYCJA:
            continue  # the text opens with the next section's heading (REASONS: "UZASADNIENIE")
        sections.append(Section(name, label, start, max(stop, start), min(body_start, max(stop, start)),
                                len(sections)))
    return sections
