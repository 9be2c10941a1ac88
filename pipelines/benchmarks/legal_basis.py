"""Legal-basis strings of exam answer keys → unit references with corpus ids.

``art. 109^1 § 2 k.c.`` → act ``pl:kc``, article ``pl:kc:art:109^1``, unit ``pl:kc:art:109^1:par:2``.
The ids follow :mod:`pipelines.statutes.pl.parser` (``:par:`` for §, ``:pt:`` for points, which
hang under the paragraph or, without §, under the article; ``:lit:`` for letters), so a gold
reference joins the corpus tables directly. Statutes other than codes number their paragraphs
``ust.`` (ustęp); those become ``:ust:N`` — what the printed text says, for a future parser of
such acts to match.

Why a grammar and not one regex: the answer keys write many forms — ``art. 58 § 1 i 2 k.c.`` (two
paragraphs), ``art. 32 i art. 39 pkt 1 k.k.`` (two articles, one act at the end),
``art. 97 § 2 w zw. z art. 205 § 1 k.s.h.``, ``art. 7 ust. 1 pkt 1 i ust. 3 ustawy z dnia …
o Rzeczniku Praw Obywatelskich``, ``art. 142 § 1 zd. 2 k.s.h.`` (a sentence: not a unit in the
corpus, so the reference stops at the paragraph). The act designation after a group applies to
every unit cited since the previous designation, as in Polish citation practice.

Acts: code abbreviations (``k.c.``, ``k.p.c.``, ``k.r. i o.`` …) and code names (``Kodeksu
cywilnego``) map to short ids (``pl:kpc``); other statutes cited by title (``ustawy z dnia 29
lipca 2005 r. o przeciwdziałaniu narkomanii``) get ``pl:ustawa:<title slug>`` (the date is left
out: the same act is cited with and without it); the Constitution is ``pl:konst``; the EU treaties
``eu:teu`` / ``eu:tfeu``. Only acts in ``corpus_acts`` (default: the registry's Polish acts) are ``in_corpus``;
the others are kept, marked ``in_corpus=False``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable

from schemas.acts import ActRegistry, registry


def exam_corpus_acts() -> frozenset[str]:
    """The acts whose references count as ``in_corpus``: every Polish act of the registry (read at
    call time, so a registry set for a run is the one used)."""
    return frozenset(registry().ids("pl"))


@dataclass(frozen=True)
class UnitRef:
    """One cited unit. ``unit_id`` is the most specific unit (article, paragraph, point or letter);
    ``article_id`` its article, for article-level retrieval metrics. ``raw`` is this reference
    alone, written as a citation with the act as printed (``art. 58 § 2 k.c.``). When the act
    could not be determined the ids are None."""

    act_id: str | None
    unit_id: str | None
    article_id: str | None
    in_corpus: bool
    raw: str

    def to_dict(self) -> dict:
        return {"act_id": self.act_id, "unit_id": self.unit_id, "article_id": self.article_id,
                "in_corpus": self.in_corpus, "raw": self.raw}


# ----------------------------------------------------------------------------------------------
# acts


@dataclass(frozen=True)
class Code:
    act_id: str
    abbreviations: tuple[str, ...]  # as printed; spacing between the letters is free
    name: str  # nominative title, used to recognise "Kodeksu …" in any case


CODES: tuple[Code, ...] = (
    Code("pl:kc", ("k.c.",), "Kodeks cywilny"),
    Code("pl:kpc", ("k.p.c.",), "Kodeks postępowania cywilnego"),
    Code("pl:kro", ("k.r.o.", "k.r. i o."), "Kodeks rodzinny i opiekuńczy"),
    Code("pl:kp", ("k.p.",), "Kodeks pracy"),
    Code("pl:kk", ("k.k.",), "Kodeks karny"),
    Code("pl:kpk", ("k.p.k.",), "Kodeks postępowania karnego"),
    Code("pl:kkw", ("k.k.w.",), "Kodeks karny wykonawczy"),
    Code("pl:kks", ("k.k.s.",), "Kodeks karny skarbowy"),
    Code("pl:kw", ("k.w.",), "Kodeks wykroczeń"),
    Code("pl:kpsw", ("k.p.s.w.", "k.p.w."), "Kodeks postępowania w sprawach o wykroczenia"),
    Code("pl:ksh", ("k.s.h.",), "Kodeks spółek handlowych"),
    Code("pl:kpa", ("k.p.a.",), "Kodeks postępowania administracyjnego"),
    Code("pl:km", ("k.m.",), "Kodeks morski"),
    Code("pl:kwyb", ("k.wyb.",), "Kodeks wyborczy"),
    # statutes with a customary abbreviation; cited by title ("ustawy z dnia … – Prawo o …") they
    # resolve to the same id, because titles are matched against these names too
    Code("pl:ppsa", ("p.p.s.a.",), "Prawo o postępowaniu przed sądami administracyjnymi"),
    Code("pl:ukwh", ("u.k.w.h.",), "o księgach wieczystych i hipotece"),
)


def _fold(text: str) -> str:
    text = text.replace("ł", "l").replace("Ł", "L")
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).lower()


def slug(title: str) -> str:
    """``o prawie autorskim i prawach pokrewnych`` → ``o-prawie-autorskim-i-prawach-pokrewnych``."""
    return re.sub(r"[^a-z0-9]+", "-", _fold(title)).strip("-")


def _abbrev_pattern(abbrev: str) -> str:
    """Regex of one abbreviation: spacing after each dot is free ("k. r. i o."), the connective
    "i" may be glued ("k.r.io."), and the final dot may be missing ("k.s.h")."""
    parts = [re.escape(p) for p in re.findall(r"[^\s.]+", abbrev)]
    body = parts[0]
    for prev, part in zip(parts, parts[1:]):
        body += (r"\s*" if prev == "i" else r"\.\s*") + part
    return body + r"(?:\.(?![\w])|(?![\w.]))"


_STEM = 4  # words compared by their first letters, so "Kodeksu cywilnego" matches "Kodeks cywilny"


@dataclass(frozen=True)
class _Vocabulary:
    """The act designations recognised: :data:`CODES` plus every Polish registry act not among
    them (its ``citation`` forms and title), so a registered act is cited without code changes."""

    codes: tuple[Code, ...]
    abbreviations: list[tuple[str, int]]
    abbrev_re: re.Pattern
    code_stems: list[tuple[tuple[str, ...], str]]


@functools.lru_cache(maxsize=4)
def _vocabulary(reg: ActRegistry) -> _Vocabulary:
    known = {c.act_id for c in CODES}
    codes = CODES + tuple(Code(a.id, a.citations, a.title) for a in reg.of_jurisdiction("pl") if a.id not in known)
    abbreviations = sorted(((a, i) for i, c in enumerate(codes) for a in c.abbreviations), key=lambda ai: -len(ai[0]))
    abbrev_re = re.compile(
        r"(?<![\w.])(?:" + "|".join(f"(?P<a{k}>{_abbrev_pattern(a)})" for k, (a, _) in enumerate(abbreviations)) + ")",
        re.I,
    )
    stems = sorted(((tuple(w[:_STEM] for w in _fold(c.name).split()), c.act_id) for c in codes), key=lambda s: -len(s[0]))
    return _Vocabulary(codes, abbreviations, abbrev_re, stems)


def _code_by_name(title: str) -> str | None:
    stems = tuple(w[:_STEM] for w in re.findall(r"[a-z0-9]+", _fold(title)))
    for key, act_id in _vocabulary(registry()).code_stems:
        if stems[:len(key)] == key and (len(stems) == len(key) or key[0] == "kode"):
            return act_id
    return None


def act_for_title(kind: str, title: str) -> str | None:
    """Act id for a long-form designation: ``kind`` is ``ustawa`` / ``kodeks`` / ``traktat`` /
    ``konstytucja``; ``title`` what follows the date (``o przeciwdziałaniu narkomanii``)."""
    title = re.sub(r"\s*[-–—]\s*tekst\s+(uwzględniający|jednolity).*$", "", title.strip(), flags=re.I)
    title = re.sub(r"^[-–—]\s*", "", title).strip(" ,;")
    if kind == "konstytucja":
        return "pl:konst"
    if kind == "traktat":
        f = _fold(title)
        if "funkcjonowaniu unii europejskiej" in f:
            return "eu:tfeu"
        if "unii europejskiej" in f:
            return "eu:teu"
        return f"eu:traktat:{slug(title)}" if title else None
    if kind == "kodeks":
        return _code_by_name("kodeks " + title)
    if not title:
        return None
    return _code_by_name(title) or f"pl:ustawa:{slug(title)}"


_MONTHS = r"(?:stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|października|listopada|grudnia)"
_DATE = rf"z\s+dnia\s+\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}\s*r\.?"
# a long title runs until the next cited article, a semicolon, a parenthesis or the end
_TITLE_END = r"(?=\s*(?:;|\(|,?\s*(?:i|oraz|a\s+także|w\s+zw\.\s*z|w\s+związku\s+z)?\s*art(?:\.|ykuł)|$))"
_LONG_ACT_RE = re.compile(
    rf"(?P<kind>ustaw[aęyieą]|kodeks\w*|traktat\w*|konstytucj\w*)\s*(?:{_DATE})?\s*(?P<title>.*?){_TITLE_END}",
    re.I | re.S,
)


def _match_act(text: str, pos: int) -> tuple[str | None, str, int] | None:
    """An act designation starting at ``pos``: (act id, designation as printed, end) or None."""
    vocab = _vocabulary(registry())
    m = vocab.abbrev_re.match(text, pos)
    if m:
        group = next(k for k, v in m.groupdict().items() if v is not None)
        code = vocab.codes[vocab.abbreviations[int(group[1:])][1]]
        return code.act_id, m.group(0).strip(), m.end()
    m = _LONG_ACT_RE.match(text, pos)
    if m:
        word = _fold(m.group("kind"))
        kind = ("ustawa" if word.startswith("ustaw") else "kodeks" if word.startswith("kodeks")
                else "traktat" if word.startswith("traktat") else "konstytucja")
        printed = re.sub(r"\s+", " ", m.group(0)).strip()
        return act_for_title(kind, m.group("title")), printed, m.end()
    return None


# ----------------------------------------------------------------------------------------------
# units

_SUPERSCRIPTS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9"}
_SUP_RUN = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")

# a number may carry letters (19g, 1a) and a superscript (385^1, 300^73); letters never swallow the
# start of an abbreviation ("5k.c.")
NUM = r"\d+(?:[a-z]{1,2}(?![a-z]|\.[a-ząćęłńóśźż]))?(?:\^\d+)?"
_LETTER = r"[a-z](?:\^\d+)?(?![a-ząćęłńóśźż])"

RANK = {"art": 0, "par": 1, "ust": 1, "pt": 2, "lit": 3}
PRINTED = {"art": "art.", "par": "§", "ust": "ust.", "pt": "pkt", "lit": "lit."}

_UNIT_RE = re.compile(
    rf"(?:(?P<art>art(?:ykuł\w*|s?\.))|(?P<par>§+)|(?P<ust>ust\.)|(?P<pt>pkt\.?)|(?P<lit>lit\.))\s*"
    rf"(?P<num>(?(lit){_LETTER}|{NUM}))",
    re.I,
)
_SKIP_RE = re.compile(
    r"zd(?:\.|ani[ea]|aniu)\s*(?:\d+|pierwsze|drugie|trzecie|ostatnie)\b|in\s+fine\b|ab\s+initio\b"
    r"|i\s+nast\.?|nast\.|\([^)]*\)|tiret\s+\w+",
    re.I,
)
_SEP_RE = re.compile(r"w\s+zw\.\s*z|w\s+związku\s+z", re.I)
_CONJ_RE = re.compile(r"(?:i|oraz|lub|albo|a\s+także)(?![\w])|,", re.I)
_RANGE_RE = re.compile(r"[-–—]")
_BARE_RE = re.compile(rf"(?P<num>{NUM}|{_LETTER})", re.I)
_WORD_RE = re.compile(r"\S+?(?=\s|,|;|$)|\S")

MAX_RANGE = 50  # art. 405–407 expands to 405, 406, 407; longer ranges keep their ends only


def normalize_basis(text: str) -> str:
    """Unicode superscripts → ``^N``, NBSP and line breaks → spaces, soft hyphens dropped."""
    text = _SUP_RUN.sub(lambda m: "^" + "".join(_SUPERSCRIPTS[c] for c in m.group()), text)
    text = text.replace("\u00ad", "").replace("\u00a0", " ")
    return re.sub(r"\s+", " ", text).strip()


def _unit_id(act_id: str | None, path: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    if act_id is None:
        return None, None
    art = f"{act_id}:art:{path[0][1]}"
    return art + "".join(f":{lvl}:{num}" for lvl, num in path[1:]), art


def _citation(path: list[tuple[str, str]], act_printed: str) -> str:
    units = " ".join(f"{PRINTED[lvl]} {num}" for lvl, num in path)
    return f"{units} {act_printed}".strip()


def parse_legal_basis(text: str, *, corpus_acts: Iterable[str] | None = None) -> list[UnitRef]:
    """All units a legal-basis string cites, in order, without duplicates.

    A string without any ``art.`` yields ``[]``; units whose act is never named get ``act_id=None``
    (kept, so a caller can count what it could not resolve).
    """
    corpus = frozenset(corpus_acts) if corpus_acts is not None else exam_corpus_acts()
    text = normalize_basis(text)
    paths: list[list[tuple[str, str]]] = []  # emitted, waiting for their act
    done: list[tuple[list[tuple[str, str]], str | None, str]] = []
    cur: list[tuple[str, str]] = []
    dirty = False  # cur holds a unit not emitted yet
    continues = False  # a conjunction or dash was just read: a bare number continues the list
    ranged = False

    def emit() -> None:
        nonlocal dirty
        if dirty and cur and cur[0][0] == "art":
            paths.append(list(cur))
        dirty = False

    def put(level: str, num: str) -> None:
        nonlocal cur, dirty
        r = RANK[level]
        if dirty and any(RANK[lvl] >= r for lvl, _ in cur):
            emit()
        cur = [u for u in cur if RANK[u[0]] < r] + [(level, num)]
        dirty = True

    def put_range(level: str, end: str) -> None:
        start = cur[-1][1]
        if start.isdigit() and end.isdigit() and 0 < int(end) - int(start) <= MAX_RANGE:
            for n in range(int(start) + 1, int(end)):
                put(level, str(n))
        put(level, end)

    pos, n = 0, len(text)
    while pos < n:
        if text[pos].isspace() or text[pos] in ";:.":
            pos += 1
            continue
        m = _SEP_RE.match(text, pos)
        if m:
            emit()
            continues = ranged = False
            pos = m.end()
            continue
        m = _UNIT_RE.match(text, pos)
        if m:
            level = next(k for k in RANK if m.group(k))
            put(level, m.group("num"))
            continues = ranged = False
            pos = m.end()
            continue
        if cur and (continues or ranged):
            m = _BARE_RE.match(text, pos)
            level = cur[-1][0]
            if m and (level == "lit") == m.group("num")[0].isalpha():
                (put_range if ranged else put)(level, m.group("num"))
                continues = ranged = False
                pos = m.end()
                continue
        act = _match_act(text, pos)
        if act is not None:
            emit()
            act_id, printed, pos = act
            done.extend((p, act_id, printed) for p in paths)
            paths = []
            cur, continues, ranged = [], False, False
            continue
        m = _SKIP_RE.match(text, pos)
        if m:
            pos = m.end()
            continue
        m = _CONJ_RE.match(text, pos)
        if m:
            continues = True
            pos = m.end()
            continue
        if _RANGE_RE.match(text, pos) and cur:
            ranged = True
            pos += 1
            continue
        m = _WORD_RE.match(text, pos)  # anything else: skip a word
        continues = ranged = False
        pos = m.end() if m else pos + 1
    emit()
    done.extend((p, None, "") for p in paths)

    refs: list[UnitRef] = []
    seen: set[tuple[str | None, str]] = set()
    for path, act_id, printed in done:
        unit_id, article_id = _unit_id(act_id, path)
        citation = _citation(path, printed)
        key = (unit_id, citation if unit_id is None else "")
        if key in seen:
            continue
        seen.add(key)
        refs.append(UnitRef(act_id, unit_id, article_id, act_id in corpus, citation))
    return refs


def gold_articles(legal_basis: str, acts: Iterable[str] | None = None) -> tuple[str, ...]:
    """Article ids cited for ``acts``, in order, unique — a drop-in for
    ``pipelines.retrieval.evaluation.gold_articles`` (``art. 109^1 § 2 k.c.`` →
    ``("pl:kc:art:109^1",)``; empty when no cited act is in the corpus) that also reads mixed
    strings (``… k.c. w zw. z art. 10 k.p.c.`` gives only the k.c. article)."""
    wanted = frozenset(acts) if acts is not None else exam_corpus_acts()
    return tuple(dict.fromkeys(r.article_id for r in parse_legal_basis(legal_basis, corpus_acts=wanted)
                               if r.in_corpus and r.article_id))
