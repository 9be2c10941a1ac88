"""Why does a § read differently in the two BGB sources? Amendment, editorial variant or parser residue.

The bundestag/gesetze Markdown is the ~2021-12 text state, the gesetze-im-internet PDF the 2024-11
one. A § whose normalised text differs between them (:mod:`pipelines.statutes.de.sources_compare`) falls
in one of three classes, decided from the word-level diff alone (no § list is consulted):

* ``amendment`` — the law changed: a content word, a number or a reference is added, removed or
  replaced, or the status changed (in force ↔ repealed, a placeholder that entered into force).
* ``editorial`` — both source files really print different characters, but the same words: another
  inflected form of the same word ("Ort"/"Orte", "Vorschriften finden"/"Vorschrift findet",
  "Reugeldes"/"Reugelds"), another spelling ("Zivilprozeßordnung"/"Zivilprozessordnung"), other
  punctuation ("3, ," → "3,"), an article of the same paradigm ("den"/"der"), an abbreviation
  written out ("Abs."/"Absatz"), an article or a repeated preposition added ("gegen den Bund oder
  gegen ein Land"). No normalisation folds these: they are not the same characters, and a rule that
  equates inflected forms would also hide real amendments. They are listed, not counted as agreement.
* ``residue`` — what a parser of ours can produce from identical text: words joined or split
  (spacing), a line-end hyphen kept or dropped, Absatz/Nummer/Buchstabe markers lost or invented,
  footnote markers or footnote, page-header or page-footer text inside the §, the § title glued
  into the text, or "(weggefallen)" kept as text on one side and as the status on the other.

A § is an amendment when any of its diff hunks is one (the other hunks of a rewritten § are part of
the rewrite), otherwise residue when any hunk is residue, otherwise editorial. The rules are
deliberately conservative towards ``amendment``: a pair of words is "the same word" only by an
explicit rule below, and anything with a digit must match exactly.

:data:`REFORMS` is the corroboration: amending acts between the two text states whose ranges are
known. It is applied *after* classification and never decides a class; it lets the report count
amendments per reform and flag the amendments outside every known reform for a reader to check.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from dataclasses import dataclass

from pipelines.statutes.de.model import number_key

AMENDMENT, EDITORIAL, RESIDUE = "amendment", "editorial", "residue"
KINDS = (AMENDMENT, EDITORIAL, RESIDUE)

# inflectional endings that may differ between two forms of one word (not "er": Gesellschaft ≠
# Gesellschafter, Stift ≠ Stifter)
_ENDINGS = {"", "e", "n", "en", "s", "es", "t", "et"}
# closed-class paradigms: a replacement inside one is inflection, across them (einer → seiner) is not
_PARADIGMS = [
    {"der", "die", "das", "den", "dem", "des"},
    {"ein", "eine", "einer", "eines", "einem", "einen"},
    {"dieser", "diese", "dieses", "diesem", "diesen"},
    {"gilt", "gelten"},
    {"§", "§§"},
    {"im", "in"}, {"am", "an"}, {"zum", "zu"}, {"zur", "zu"}, {"vom", "von"}, {"beim", "bei"},
]
_ABBREVIATIONS = {"abs": "absatz", "nr": "nummer", "buchst": "buchstabe"}  # keys as _bare leaves them
_ARTICLES = _PARADIGMS[0] | _PARADIGMS[1]
_PREPOSITIONS = {"gegen", "von", "zu", "in", "an", "auf", "für", "mit", "bei", "aus", "nach", "über", "unter"}
_PUNCT = ",.;:!?"

MARKER_RE = re.compile(r"^(\(\d+[a-z]?\)|\d+[a-z]?\.|[a-z]{1,2}\))$")
FOOTNOTE_MARKER_RE = re.compile(r"(\*\)|\[\^|\^\d|\u00b9|\u00b2|\u00b3)")
FURNITURE_RE = re.compile(r"(gesetze-im-internet|Bundesministeriums|Seite\s*\d+\s*von|Fußnote|\+\+\+|Amtlicher Hinweis)")
REPEAL_NOTE_RE = re.compile(r"^\((weggefallen|aufgehoben)\)$")


@dataclass(frozen=True)
class Hunk:
    """One replaced/inserted/deleted run of words, Markdown → PDF, with its class and why."""
    old: tuple[str, ...]
    new: tuple[str, ...]
    kind: str
    reason: str

    def show(self, max_words: int | None = None) -> str:
        """``[-old-]{+new+}``; with ``max_words`` a longer side keeps its first and last words."""
        def cut(words: tuple[str, ...]) -> str:
            if max_words is None or len(words) <= max_words:
                return " ".join(words)
            head = max_words - max_words // 3
            return " ".join(words[:head]) + f" …({len(words) - max_words} words)… " + " ".join(words[-(max_words - head):])
        return f"[-{cut(self.old)}-]{{+{cut(self.new)}+}}"


@dataclass(frozen=True)
class Reform:
    """An amending act between the two text states and the §§ it rewrote (inclusive ranges)."""
    name: str
    act: str
    in_force: dt.date
    ranges: tuple[tuple[str, str], ...]

    def covers(self, number: str) -> bool:
        k = number_key(number)
        return any(number_key(lo) <= k <= number_key(hi) for lo, hi in self.ranges)


# Corroboration only (see the module docstring). Each entry is an act whose BGB changes took effect
# between 2021-12-21 and 2024-11-28 and whose §§ are well documented; the Markdown's own metadata
# lists the 2021 acts as "textlich nachgewiesen" without their later-effective wording.
REFORMS: tuple[Reform, ...] = (
    Reform("Stiftungsrecht", "G zur Vereinheitlichung des Stiftungsrechts v. 16.7.2021 I 2947",
           dt.date(2023, 7, 1), (("80", "88"),)),
    Reform("Vormundschafts- und Betreuungsrecht", "G zur Reform des Vormundschafts- und Betreuungsrechts "
           "v. 4.5.2021 I 882", dt.date(2023, 1, 1), (("1358", "1358"), ("1773", "1921"))),
    Reform("Personengesellschaftsrecht (MoPeG)", "G zur Modernisierung des Personengesellschaftsrechts "
           "v. 10.8.2021 I 3436", dt.date(2024, 1, 1), (("54", "54"), ("705", "740c"), ("899a", "899a"))),
    Reform("Mietspiegel", "Mietspiegelreformgesetz v. 10.8.2021 I 3515", dt.date(2022, 7, 1),
           (("558c", "558d"),)),
    Reform("Verbraucherrechte (RL (EU) 2019/2161)", "G v. 10.8.2021 I 3483", dt.date(2022, 5, 28),
           (("312", "312a"), ("312e", "312e"), ("312j", "312j"), ("355", "361"))),
    Reform("Faire Verbraucherverträge (Kündigungsbutton)", "G für faire Verbraucherverträge v. 10.8.2021 I 3433",
           dt.date(2022, 7, 1), (("312k", "312k"),)),
    Reform("Heizungsanlagen (GEG-Novelle)", "G v. 16.10.2023 I Nr. 280", dt.date(2024, 1, 1),
           (("555b", "555b"), ("557b", "557b"), ("559", "559e"))),
    Reform("Digitale Dienste", "Digitale-Dienste-Gesetz v. 6.5.2024 I Nr. 149", dt.date(2024, 5, 14),
           (("312c", "312c"), ("312i", "312i"))),
)


def reform_of(number: str) -> Reform | None:
    """The known reform whose ranges hold § ``number``, if any."""
    return next((r for r in REFORMS if r.covers(number)), None)


_CITATION_RE = re.compile(r"§§?\s+(\d+[a-z]?(?:(?:\s*,\s*|\s+(?:und|bis|oder)\s+)\d+[a-z]?(?![\w.]))*)")


def cited_sections(text: str) -> set[str]:
    """§ numbers a text cites ("§ 1827 Absatz 1", "§§ 1850 bis 1854", "§§ 28, 31a"); numbers after
    "Absatz", "Satz", "Nummer" are not § numbers and are not picked up."""
    return {n for m in _CITATION_RE.finditer(text) for n in re.findall(r"\d+[a-z]?", m.group(1))}


def reform_cited(old_text: str, new_text: str) -> Reform | None:
    """The known reform one of whose §§ the new text newly cites: § 630d's "§ 1901a" becoming
    "§ 1827" points to the guardianship reform (a consequential amendment)."""
    new = sorted(cited_sections(new_text) - cited_sections(old_text), key=number_key)
    return next((r for n in new for r in REFORMS if r.covers(n)), None)


# ----------------------------------------------------------------------------------------------
# words


def _bare(word: str) -> str:
    return word.strip(_PUNCT).casefold().replace("ß", "ss")


def _one_e_apart(a: str, b: str) -> bool:
    """``b`` is ``a`` with one "e" more or less: Ort/Orte, Reugelds/Reugeldes, Ermittlung/Ermittelung."""
    short, long_ = sorted((a, b), key=len)
    if len(long_) != len(short) + 1:
        return False
    return any(long_[i] == "e" and long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def same_word(a: str, b: str) -> str | None:
    """Why two printed words are one word in another form ("orthography", "inflection",
    "abbreviation", "punctuation"), or None when they are different words. Anything with a digit
    must be equal character for character."""
    if a == b:
        return "equal"
    if any(c.isdigit() for c in a + b):
        return "punctuation" if a.strip(_PUNCT) == b.strip(_PUNCT) else None
    x, y = _bare(a), _bare(b)
    if x == y:
        if a.strip(_PUNCT) == b.strip(_PUNCT):
            return "punctuation"
        return "orthography"
    if _ABBREVIATIONS.get(x, x) == _ABBREVIATIONS.get(y, y):
        return "abbreviation"
    if any(x in p and y in p for p in _PARADIGMS):
        return "inflection"
    if _one_e_apart(x, y):
        return "inflection"
    n = 0  # common prefix, then both remainders must be inflectional endings
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    if n >= 4 and x[n:] in _ENDINGS and y[n:] in _ENDINGS:
        return "inflection"
    return None


# ----------------------------------------------------------------------------------------------
# hunks


def _is_marker(word: str) -> bool:
    return bool(MARKER_RE.match(word))


def classify_hunk(old: list[str], new: list[str], before: list[str] | None = None) -> tuple[str, str]:
    """(kind, reason) of one diff hunk; ``before`` are the words preceding it (for a repeated
    preposition)."""
    joined_old, joined_new = "".join(old), "".join(new)
    if joined_old == joined_new:
        return RESIDUE, "spacing"
    if re.sub(r"[-\u2010\u2011]", "", joined_old) == re.sub(r"[-\u2010\u2011]", "", joined_new):
        return RESIDUE, "hyphenation"
    one_side = new if not old else old if not new else None
    changed = old + new
    if bool(FURNITURE_RE.search(" ".join(old))) != bool(FURNITURE_RE.search(" ".join(new))):
        return RESIDUE, "page furniture or footnote text"
    if any(FOOTNOTE_MARKER_RE.search(w) for w in changed) and \
            [FOOTNOTE_MARKER_RE.sub("", w) for w in old if FOOTNOTE_MARKER_RE.sub("", w)] == \
            [FOOTNOTE_MARKER_RE.sub("", w) for w in new if FOOTNOTE_MARKER_RE.sub("", w)]:
        return RESIDUE, "footnote marker"
    markers_old, markers_new = [w for w in old if _is_marker(w)], [w for w in new if _is_marker(w)]
    if (not markers_old or not markers_new) and (markers_old or markers_new) and \
            [w for w in old if not _is_marker(w)] == [w for w in new if not _is_marker(w)]:
        # markers only added or only dropped; "2." → "3." is a changed number, not a lost marker
        return RESIDUE, "structure markers"
    if one_side is not None and all(REPEAL_NOTE_RE.match(w) for w in one_side):
        return RESIDUE, "repeal note"
    if re.sub(rf"[\s{re.escape(_PUNCT)}]", "", joined_old) == re.sub(rf"[\s{re.escape(_PUNCT)}]", "", joined_new):
        return EDITORIAL, "punctuation"
    if one_side is not None:
        words = [_bare(w) for w in one_side]
        recent = {_bare(w) for w in (before or [])[-6:]}
        if len(words) <= 2 and all(w in _ARTICLES or w == "so" or (w in _PREPOSITIONS and w in recent) for w in words):
            return EDITORIAL, "function word"
        return AMENDMENT, "reference" if any(re.search(r"\d|§", w) for w in one_side) else "content words"
    if len(old) == len(new):
        reasons = [same_word(a, b) for a, b in zip(old, new)]
        if all(reasons):
            kinds = sorted({r for r in reasons if r != "equal"})
            return EDITORIAL, "+".join(kinds)
    if any(re.search(r"\d", w) for w in changed) or any("§" in w for w in changed):
        return AMENDMENT, "reference"
    return AMENDMENT, "content words"


def diff_hunks(old_text: str, new_text: str) -> list[Hunk]:
    """Classified word-level hunks between two normalised texts (Markdown → PDF)."""
    a, b = old_text.split(), new_text.split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            kind, reason = classify_hunk(a[i1:i2], b[j1:j2], a[max(0, i1 - 6):i1])
            out.append(Hunk(tuple(a[i1:i2]), tuple(b[j1:j2]), kind, reason))
    return out


@dataclass
class SectionClass:
    """The class of one differing § with the hunks that decided it."""
    number: str
    kind: str
    reasons: list[str]  # the decisive hunks' reasons, most frequent first
    hunks: list[Hunk]
    reform: Reform | None = None  # the known reform whose ranges hold this § (amendments only)
    status_change: str = ""  # "in_force → repealed" when the status differs
    cites: Reform | None = None  # outside every range: the reform whose §§ the new text newly cites

    def evidence(self, limit: int = 3, max_words: int = 12) -> str:
        """A short word diff of the decisive hunks (for the report): ``limit`` hunks of at most
        ``max_words`` words a side."""
        shown = [h.show(max_words) for h in self.hunks if h.kind == self.kind][:limit]
        more = sum(h.kind == self.kind for h in self.hunks) - len(shown)
        return " … ".join(shown) + (f" … (+{more} more)" if more > 0 else "")


def classify_section(number: str, markdown_text: str, pdf_text: str, markdown_status: str, pdf_status: str,
                     title: str = "") -> SectionClass:
    """Classify one § whose normalised text or status differs between the sources.

    ``title`` (the § title, normalised) lets a title glued into the text on one side count as residue."""
    hunks = diff_hunks(markdown_text, pdf_text)
    if title:
        t = title.split()
        for i, h in enumerate(hunks):
            side = h.new if not h.old else h.old if not h.new else ()
            if side and list(side) == t:
                hunks[i] = Hunk(h.old, h.new, RESIDUE, "title in text")
    status = "" if markdown_status == pdf_status else f"{markdown_status} → {pdf_status}"
    if status:
        repeal_text_only = {markdown_status, pdf_status} == {"in_force", "repealed"} and all(
            h.kind == RESIDUE and h.reason == "repeal note" for h in hunks)
        if repeal_text_only:
            kind = RESIDUE
        else:
            kind = AMENDMENT
            hunks = [Hunk(h.old, h.new, AMENDMENT, "status") if h.kind != AMENDMENT else h for h in hunks] or \
                [Hunk((), (), AMENDMENT, "status")]
    elif any(h.kind == AMENDMENT for h in hunks):
        kind = AMENDMENT
    elif any(h.kind == RESIDUE for h in hunks):
        kind = RESIDUE
    elif hunks:
        kind = EDITORIAL
    else:
        raise ValueError(f"§ {number}: texts and status are equal; nothing to classify")
    counts: dict[str, int] = {}
    for h in hunks:
        if h.kind == kind:
            counts[h.reason] = counts.get(h.reason, 0) + 1
    reasons = sorted(counts, key=lambda r: (-counts[r], r))
    reform = reform_of(number) if kind == AMENDMENT else None
    cites = reform_cited(markdown_text, pdf_text) if kind == AMENDMENT and reform is None else None
    return SectionClass(number, kind, reasons, hunks, reform, status, cites)
