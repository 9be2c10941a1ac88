"""The texts of the representation store, from training material only.

Each :class:`Representation` is one text known to be about one article (``article_id``), or — for
the out-of-corpus detector — about an act the corpus does not hold (``article_id`` None, ``act_id``
that act). Sources:

* ``exam`` — bar/judicial exam questions of **2012–2020 only** (``../shared/data/pl/exams``), the
  exam lead-in naming the act left out (``query_prep.strip_boilerplate``): the answer key's legal
  basis (``art. 58 § 1 k.c.``, read by the Polish citation extractor) names the article. 2021–2023
  are the exam test years: :func:`exam_representations` refuses them (:data:`EXCLUDED_EXAM_YEARS`),
  and a test holds it to that.
* ``lqad`` — LQAD-PL train and dev (``pl/lqad``): exam questions of 2007–2019 with the paragraph that
  answers them; the paragraph is matched to the held article whose text contains it. Questions
  of any year in :data:`EXCLUDED_EXAM_YEARS` are refused as well.
* ``saos`` — the sentence around each citation of a held article in SAOS judgments (``pl/saos``),
  every citation blanked out, so the sentence says in the court's words what the article is about
  ("pozwany nie wykazał, aby cierpienie powodów miało wyjątkowy charakter"). The pages kept for
  evaluating citation extraction (347 dev, 355 test: :data:`EVALUATION_SAOS_PAGES`) are never read.

Questions of exams and LQAD about acts the corpus does not hold (k.s.h., k.r.o., k.p.a., Ordynacja
podatkowa, …) become ``outside`` rows: the detector of out-of-corpus questions learns from them what
a question about another act looks like, and which act it is.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Mapping

EXCLUDED_EXAM_YEARS = frozenset({2021, 2022, 2023})  # the exam test years: never a representation
TRAINING_EXAM_YEARS = tuple(range(2012, 2021))
EVALUATION_SAOS_PAGES = frozenset({347, 355})  # citation-extraction dev / test pages
MIN_SAOS_WORDS = 6  # a citation sentence with fewer words of 4+ letters says nothing ("na podstawie i")
MAX_CITED_ARTICLES = 3  # a citation of a wider range ("art. 353–356") is about none of them in particular
LQAD_MIN_CONTAINMENT = 0.85  # share of an LQAD paragraph's words found in the matched article


@dataclass(frozen=True)
class Representation:
    rep_id: str  # "exam:2015/adwokacki_radcowy#12", "lqad:2007_adw_1", "saos:<judgment id>:<offset>"
    kind: str  # exam | lqad | saos
    article_id: str | None  # None: a question about an act the corpus does not hold
    act_id: str | None  # the article's act, or the outside act (a known-acts id: pl:ksh)
    text: str
    year: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class SourceError(ValueError):
    """A training file that cannot be read as its source: the message names the file and record."""


def _check_years(years: Iterable[int], what: str) -> None:
    bad = sorted(set(years) & EXCLUDED_EXAM_YEARS)
    if bad:
        raise ValueError(f"{what}: exam years {bad} are the held-out test years; representations may only "
                         f"come from {TRAINING_EXAM_YEARS[0]}–{TRAINING_EXAM_YEARS[-1]}")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def _cited(text: str) -> list:
    from pipelines.citations.polish import extract_citations

    return extract_citations(text, keep_unresolved=False, addresses=False)


def exam_representations(exams_dir: Path, held_acts: Iterable[str],
                         years: Iterable[int] = TRAINING_EXAM_YEARS) -> list[Representation]:
    """One row per (question, gold article of a held act); a question whose legal basis cites only
    acts not held gives one ``outside`` row per act. Duplicates (the same question in several
    exams of a year or in later years) are kept once, at their first occurrence."""
    from pipelines.retrieval.query_prep import strip_boilerplate

    years = tuple(years)
    _check_years(years, "exam_representations")
    held = set(held_acts)
    out: list[Representation] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for year in years:
        for f in sorted((Path(exams_dir) / str(year)).glob("*.jsonl")):
            for lineno, line in enumerate(f.open(encoding="utf-8"), 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    question, basis = r["question"], r["legal_basis"]
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise SourceError(f"{f}:{lineno}: not an exam question record ({exc})") from exc
                if int(r.get("year") or year) in EXCLUDED_EXAM_YEARS:
                    raise SourceError(f"{f}:{lineno}: a question of a held-out year ({r.get('year')})")
                text = _norm(strip_boilerplate(question))
                cits = _cited(basis)
                articles = list(dict.fromkeys(a for c in cits for a in c.article_ids()
                                              if a.split(":art:", 1)[0] in held))
                rid = f"exam:{year}/{f.stem}#{r.get('id', lineno)}"
                if articles:
                    rows = [(a, a.split(":art:", 1)[0]) for a in articles]
                else:
                    rows = [(None, act) for act in dict.fromkeys(c.act_id for c in cits) if act and act not in held]
                for article, act in rows:
                    key = (text.lower(), article, act)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(Representation(rid, "exam", article, act, text, year))
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[0-9a-ząćęłńóśźż]+", text.lower())


def _strip_unit_label(context: str) -> str:
    """" § 3. Orzeczona kara …" / "Artykuł 99 § 1. Wybrany …" → the paragraph's words only."""
    return re.sub(r"^\s*(?:Art(?:ykuł|\.)?\s*\d+\w*\.?\s*)?(?:§\s*\d+\w*\.?\s*)?", "", context)


def lqad_representations(lqad_dir: Path, articles: Mapping[str, Mapping[str, str]]) -> tuple[list[Representation], dict]:
    """LQAD-PL train + dev questions whose act is held and whose paragraph is found in one article
    of it (``articles``: act id → article id → text, all held versions joined), plus ``outside``
    rows for the questions of acts not held. Returns the rows and counts (matched, unmatched,
    outside) for the build report."""
    from pipelines.retrieval.act_mentions import named_acts
    from pipelines.retrieval.query_prep import strip_boilerplate

    words_of = {act: {aid: set(_words(text)) for aid, text in arts.items()} for act, arts in articles.items()}
    out: list[Representation] = []
    counts = {"matched": 0, "unmatched": 0, "outside": 0}
    seen: set[tuple[str, str | None, str | None]] = set()
    files = sorted(Path(lqad_dir).glob("lqad-pl-*.json"))
    if not files:
        raise FileNotFoundError(f"{lqad_dir}: no lqad-pl-*.json")
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))["data"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SourceError(f"{f}: not an LQAD (SQuAD-format) file ({exc})") from exc
        for doc in data:
            title = doc.get("title", "")
            held = [a for a in named_acts(title) if a in articles]
            outside = None if held else _outside_act(title)
            for para in doc.get("paragraphs", []):
                ctx = set(_words(_strip_unit_label(para.get("context", ""))))
                for qa in para.get("qas", []):
                    qid = str(qa.get("id", ""))
                    m = re.match(r"(\d{4})_", qid)
                    year = int(m.group(1)) if m else None
                    if year in EXCLUDED_EXAM_YEARS:
                        raise SourceError(f"{f}: question {qid} is of a held-out exam year")
                    text = _norm(strip_boilerplate(qa.get("question", "")))
                    if not text:
                        continue
                    if held:
                        article = _match_article(ctx, words_of[held[0]])
                        if article is None:
                            counts["unmatched"] += 1
                            continue
                        row = (article, held[0])
                        counts["matched"] += 1
                    elif outside:
                        row = (None, outside)
                        counts["outside"] += 1
                    else:
                        continue
                    key = (text.lower(), *row)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(Representation(f"lqad:{qid}", "lqad", row[0], row[1], text, year))
    return out, counts


def _match_article(ctx: set[str], arts: Mapping[str, set[str]]) -> str | None:
    """The article containing the paragraph's words (≥ :data:`LQAD_MIN_CONTAINMENT`), the shortest
    of equally good ones; None when no article does."""
    if len(ctx) < 3:
        return None
    best, best_key = None, None
    for aid, words in arts.items():
        share = len(ctx & words) / len(ctx)
        if share < LQAD_MIN_CONTAINMENT:
            continue
        key = (share, -len(words))
        if best_key is None or key > best_key:
            best, best_key = aid, key
    return best


def _outside_act(title: str) -> str | None:
    """The known-acts id of an act named by its title ("Ustawa z dnia 15 września 2000 r. Kodeks
    spółek handlowych."), or a slug id when the table does not know it."""
    from pipelines.retrieval.outside_acts import act_named_by_title

    return act_named_by_title(title)


# ------------------------------------------------------------------------------------------ SAOS

_ABBR = (r"(?:art|artt|ust|pkt|poz|nr|Nr|r|tj|np|tzw|zw|zob|lit|str|sygn|al|ul|m\.in|Dz|U|pr|t|j|ok|zm|in|ww|tzn|"
         r"godz|zł|proc|sp|o\.o|k\.c|k\.p\.c|k\.p|k\.k|[a-z])")
_BOUNDARY = re.compile(r"[.!?](?=\s+[A-ZĄĆĘŁŃÓŚŹŻ„\"(])|\n")
_BEFORE_ABBR = re.compile(r"(?:\b" + _ABBR + r"|\d|\b[A-ZŁŚ])$")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: a full stop, "!" or "?" before a capital, or a line break; a
    dot after an abbreviation ("art.", "ust.", "k.c.", initials) or a number ends none."""
    spans, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group(0) == "." and _BEFORE_ABBR.search(text[max(0, m.start() - 12):m.start()]):
            continue
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def citation_contexts(text: str, held_acts: Iterable[str], *, date: str | None = None) -> list[tuple[int, list[str], str]]:
    """(offset, cited held articles, sentence with every citation blanked) per citation in a
    judgment's clean text."""
    import bisect

    from pipelines.citations.polish import extract_citations

    held = set(held_acts)
    cits = extract_citations(text, date=date, keep_unresolved=True, addresses=True)
    spans = sentences(text)
    starts = [s for s, _ in spans]
    out = []
    for c in cits:
        if c.act_id is None or c.act_id not in held:
            continue
        arts = [a for a in c.article_ids() if a.split(":art:", 1)[0] in held]
        if not arts or len(arts) > MAX_CITED_ARTICLES:
            continue
        lo, hi = spans[bisect.bisect_right(starts, c.start) - 1]
        pieces, pos = [], lo
        for other in cits:
            if other.start >= pos and other.end <= hi:
                pieces.append(text[pos:other.start])
                pos = other.end
        pieces.append(text[pos:hi])
        out.append((c.start, arts, _norm(" ".join(pieces))))
    return out


def saos_representations(saos_dir: Path, held_acts: Iterable[str], *,
                         exclude_pages: Iterable[int] = EVALUATION_SAOS_PAGES) -> tuple[list[Representation], dict]:
    """Citation sentences of every judgment on the dump pages of ``saos_dir`` but ``exclude_pages``;
    sentences with fewer than :data:`MIN_SAOS_WORDS` words of 4+ letters are left out."""
    from pipelines.case_law.pl.text import clean_judgment_text

    excluded = set(exclude_pages)
    held = tuple(held_acts)
    out: list[Representation] = []
    counts = {"judgments": 0, "citations": 0, "kept": 0, "pages": []}
    seen: set[tuple[str, str]] = set()
    for f in sorted(Path(saos_dir).glob("judgments-page-*.json")):
        m = re.search(r"page-(\d+)", f.name)
        if not m or int(m.group(1)) in excluded:
            continue
        counts["pages"].append(int(m.group(1)))
        try:
            items = json.loads(f.read_text(encoding="utf-8"))["items"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SourceError(f"{f}: not a SAOS dump page ({exc})") from exc
        for j in items:
            counts["judgments"] += 1
            text = clean_judgment_text(j.get("textContent") or "").text
            date = j.get("judgmentDate")
            for start, arts, sentence in citation_contexts(text, held, date=date):
                counts["citations"] += 1
                if len(re.findall(r"[a-ząćęłńóśźż]{4,}", sentence.lower())) < MIN_SAOS_WORDS:
                    continue
                year = int(date[:4]) if date else None
                for a in arts:
                    if (sentence.lower(), a) in seen:
                        continue
                    seen.add((sentence.lower(), a))
                    counts["kept"] += 1
                    out.append(Representation(f"saos:{j.get('id')}:{start}", "saos", a, a.split(":art:", 1)[0],
                                              sentence, year))
    return out, counts


# ------------------------------------------------------------------------------------- GerLayQA

_BGB_SECTION = re.compile(r"^§+\s*(?P<num>\d+[a-z]?)\s*(?:BGB)?$", re.I)


def gerlayqa_representations(path: Path, act_id: str = "de:bgb") -> list[Representation]:
    """One row per (question, cited BGB §) of GerLayQA dev (``[{"Question_text", "Paragraphs":
    ["§ 573b", …]}]``); ``rep_id`` ``gerlayqa:<position>`` (the file has no ids: the position is the
    benchmark's question id, so a fold of the benchmark maps onto rows)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, list):
        raise SourceError(f"{path}: expected a JSON array of questions, got {type(data).__name__}")
    out: list[Representation] = []
    for i, r in enumerate(data):
        if not isinstance(r, dict) or not str(r.get("Question_text") or "").strip() \
                or not isinstance(r.get("Paragraphs"), list):
            raise SourceError(f"{path}: item {i} lacks 'Question_text' or a 'Paragraphs' list")
        text = _norm(r["Question_text"])
        sections = [m.group("num").lower() for p in r["Paragraphs"] if (m := _BGB_SECTION.match(str(p).strip()))]
        for num in dict.fromkeys(sections):
            out.append(Representation(f"gerlayqa:{i}", "gerlayqa", f"{act_id}:par:{num}", act_id, text))
    return out
