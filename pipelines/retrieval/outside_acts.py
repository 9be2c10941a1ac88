"""Acts the corpus does not hold, and whether a query names one ("ustawa o prawach konsumenta", "RODO").

Why: a question about an act lexpipe does not hold still gets ten hits from the acts it does hold
("czy mogę odstąpić od umowy kupionej przez internet" → warranty articles of the Civil Code). When
the query names such an act, the search answer says so — the act's name, and that the corpus does
not hold it — instead of letting the hits pass for the answer.

The acts come from the table of known acts (``schemas/known_acts.toml``: Polish and EU acts courts
cite, held or not) minus the act registry's (what the corpus holds). A query names an act by its
title in any case ending ("ustawy o prawach konsumenta", "Prawa budowlanego", "Kodeksem spółek
handlowych"), by a dotted short form ("k.s.h.", "u.o.p.l.") or by an upper-case one ("RODO",
"GDPR"). When that table cannot be read, :data:`FALLBACK` (a dozen acts people ask about most)
keeps the feature working.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_LETTER = "a-ząćęłńóśźż"
TITLE_WORDS = 5  # a long title is recognised by its first words ("o ochronie praw lokatorów")


@dataclass(frozen=True)
class OutsideAct:
    id: str  # known-acts id: pl:upk, eu:2016/679
    name: str  # as a sentence names it: "ustawa o prawach konsumenta", "RODO"
    pattern: re.Pattern


# (id, name, title, short forms): used only when schemas/known_acts.toml cannot be loaded
FALLBACK: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("pl:upk", "ustawa o prawach konsumenta", "o prawach konsumenta", ("u.p.k.",)),
    ("pl:ukk", "ustawa o kredycie konsumenckim", "o kredycie konsumenckim", ("u.k.k.",)),
    ("pl:uopl", "ustawa o ochronie praw lokatorów", "o ochronie praw lokatorów", ("u.o.p.l.",)),
    ("pl:uwl", "ustawa o własności lokali", "o własności lokali", ("u.w.l.",)),
    ("pl:prd", "Prawo o ruchu drogowym", "Prawo o ruchu drogowym", ("p.r.d.",)),
    ("pl:pb", "Prawo budowlane", "Prawo budowlane", ("p.b.",)),
    ("pl:kro", "Kodeks rodzinny i opiekuńczy", "Kodeks rodzinny i opiekuńczy", ("k.r.o.",)),
    ("pl:ksh", "Kodeks spółek handlowych", "Kodeks spółek handlowych", ("k.s.h.",)),
    ("pl:kpa", "Kodeks postępowania administracyjnego", "Kodeks postępowania administracyjnego", ("k.p.a.",)),
    ("pl:kpk", "Kodeks postępowania karnego", "Kodeks postępowania karnego", ("k.p.k.",)),
    ("pl:kw", "Kodeks wykroczeń", "Kodeks wykroczeń", ("k.w.",)),
    ("pl:op", "Ordynacja podatkowa", "Ordynacja podatkowa", ("o.p.",)),
    ("eu:2016/679", "RODO", "ogólne rozporządzenie o ochronie danych", ("RODO", "GDPR")),
)


def _word_pattern(word: str) -> str:
    w = word.lower()
    if len(w) <= 3:
        return re.escape(w)
    stem = re.sub(r"[aeiouyąę]+$", "", w)
    return re.escape(stem if len(stem) >= 3 else w) + rf"[{_LETTER}]*"


def _title_words(title: str) -> list[str]:
    return [w.lower() for w in re.findall(rf"[{_LETTER}A-ZĄĆĘŁŃÓŚŹŻ]+", title)]


def title_regex(title: str) -> str:
    """The title's first :data:`TITLE_WORDS` words, each by its stem (case endings free)."""
    words = re.findall(rf"[{_LETTER}A-ZĄĆĘŁŃÓŚŹŻ]+", title)[:TITLE_WORDS]
    if len(words) < 2:
        return ""
    return r"(?<![\w])" + r"\s+".join(_word_pattern(w) for w in words) + r"(?![\w])"


def short_form_regex(form: str) -> str:
    """A dotted short form with free spacing ("k. s. h."), or an upper-case one as a word ("RODO");
    lower-case undotted forms ("kpk", "upk") are left out: they are also words or typos."""
    if "." in form:
        parts = [p for p in form.split(".") if p.strip()]
        return r"(?<![\w.])" + r"\.?\s?".join(re.escape(p.strip()) for p in parts) + r"\.(?![\w])"
    if form.isupper() and len(form) >= 3:
        return rf"(?-i:(?<![\w]){re.escape(form)}(?![\w]))"
    return ""


def _compile(act_id: str, name: str, title: str, forms: tuple[str, ...], extra: tuple[str, ...] = ()) -> OutsideAct | None:
    alts = [p for p in (title_regex(title), *(short_form_regex(f) for f in forms), *extra) if p]
    if not alts:
        return None
    return OutsideAct(act_id, name, re.compile("|".join(f"(?:{a})" for a in alts), re.IGNORECASE))


@functools.lru_cache(maxsize=1)
def catalogue() -> tuple[OutsideAct, ...]:
    """Every Polish and EU act of the known-acts table that the registry does not hold."""
    from schemas.acts import registry

    held = set(registry().ids())
    out: list[OutsideAct] = []
    try:
        from schemas.known_acts import known_acts

        rows = known_acts().of_jurisdiction("pl", "eu")
    except Exception:  # the table is missing or invalid: a short built-in list instead
        rows = ()
    if rows:
        rows = [k for k in rows if k.id not in held]
        # an older act whose title begins a newer act's ("Kodeks rodzinny" 1950, "Kodeks rodzinny i
        # opiekuńczy" 1964; "Prawo budowlane" 1974 and 1994): a person naming it means the newer one
        # (and 1961: three acts of one title): the newest such act takes the older titles
        newer: dict[str, list[str]] = {}
        superseded: set[str] = set()
        for k in rows:
            words = _title_words(k.title)
            later = [o for o in rows if o is not k and o.date > k.date and _title_words(o.title)[:len(words)] == words]
            if later:
                newer.setdefault(max(later, key=lambda o: o.date).id, []).append(k.title)
                superseded.add(k.id)
        for k in rows:
            if k.id in superseded:
                continue
            forms = tuple(k.citations)
            name = forms[0] if k.jurisdiction == "eu" and forms and forms[0].isupper() else k.name
            extra = tuple(k.names) + tuple(title_regex(t) for t in newer.get(k.id, ()))
            act = _compile(k.id, name, k.title, forms, extra)
            if act is not None:
                out.append(act)
    else:
        for act_id, name, title, forms in FALLBACK:
            act = _compile(act_id, name, title, forms)
            if act is not None and act_id not in held:
                out.append(act)
    return tuple(out)


def named_outside_acts(query: str) -> list[OutsideAct]:
    """The not-held acts ``query`` names, in order of first mention (a longer name wins over a
    shorter one at the same place: "Kodeks postępowania karnego" is not "Kodeks karny")."""
    found: list[tuple[int, int, OutsideAct]] = []
    for act in catalogue():
        m = act.pattern.search(query)
        if m:
            found.append((m.start(), -(m.end() - m.start()), act))
    found.sort(key=lambda t: (t[0], t[1]))
    out: list[OutsideAct] = []
    taken: list[tuple[int, int]] = []
    for start, neg_len, act in found:
        end = start - neg_len
        if any(s <= start < e for s, e in taken) or act in out:
            continue
        taken.append((start, end))
        out.append(act)
    return out


def act_named_by_title(title: str) -> str | None:
    """The id of the not-held act a full title names ("Ustawa z dnia 15 września 2000 r. Kodeks spółek
    handlowych."), else ``pl:ustawa:<slug of the title>``; None for an empty title."""
    if not title.strip():
        return None
    named = named_outside_acts(title)
    if named:
        return named[0].id
    rest = re.sub(r"^\s*ustawa\s+z\s+dnia\s+\d{1,2}\s+\w+\s+\d{4}\s*r\.?\s*[-–]?\s*", "", title, flags=re.I)
    import unicodedata

    folded = unicodedata.normalize("NFKD", rest.lower().replace("ł", "l"))
    slug = re.sub(r"[^a-z0-9]+", "-", "".join(c for c in folded if not unicodedata.combining(c))).strip("-")
    return f"pl:ustawa:{slug}" if slug else None
