"""From a model's free-text answer to (option, cited unit ids): the gAIus evaluation step.

The paper (sect. 4.2) automates scoring with "a simple evaluation agent that extracts the chosen
answer and the cited articles into a structured JSON format". This module holds that agent's
prompt and everything deterministic around it:

* :func:`find_json_object` — the first JSON object in a reply (code fences and chatter tolerated);
* :func:`parse_citation` — Polish citations (``art. 109^1 § 2 k.c.``, ``Art. 109¹ §2``,
  ``artykułu 445 § 1 pkt 2``) or corpus ids (``pl:kc:art:109^1:par:2``) → unit ids;
* :func:`resolve_citations` — checks ids against the corpus: invented articles/paragraphs and other
  acts become *invalid citations* (scored as wrong references), points/letters missing from the
  corpus fall back to their existing parent; ``art. 1091`` is read as ``109^1`` only when that is
  the one existing reading (superscripts flattened by copy-paste, as in the paper's Table 1);
* :func:`parse_extraction` — the whole reply → :class:`Extraction`. Never raises on model output:
  malformed output yields ``option=None`` and a note in ``problems``.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping

from pipelines.answers.types import AnswerQuestion

__all__ = ["EXTRACTION_SYSTEM_PROMPT", "EXTRACTION_USER_TEMPLATE", "Extraction", "find_json_object",
           "parse_citation", "resolve_citations", "parse_extraction", "extraction_messages",
           "known_unit_ids_from_corpus"]

# --- prompt -------------------------------------------------------------------------------------
EXTRACTION_SYSTEM_PROMPT = (
    "Jesteś asystentem, który porządkuje odpowiedzi na pytania egzaminacyjne z prawa polskiego. "
    "Otrzymasz pytanie jednokrotnego wyboru z wariantami odpowiedzi oraz odpowiedź udzieloną przez "
    "innego asystenta. Twoim jedynym zadaniem jest odczytać z tej odpowiedzi:\n"
    "1. literę wariantu, który asystent wybrał (null, jeśli nie wybrał żadnego albo wybrał kilka);\n"
    "2. wszystkie przepisy, na które asystent się powołał, w brzmieniu z jego odpowiedzi, "
    "np. \"art. 109^1 § 2 k.c.\".\n"
    "Nie oceniaj poprawności odpowiedzi, nie poprawiaj jej i nie dodawaj przepisów, których asystent "
    "nie wymienił.\n"
    "Zwróć wyłącznie obiekt JSON, bez żadnego komentarza, w postaci:\n"
    "{\"option\": \"a\", \"articles\": [\"art. 109^1 § 2 k.c.\"]}"
)
EXTRACTION_USER_TEMPLATE = (
    "Pytanie:\n{question}\n\nWarianty odpowiedzi:\n{options}\n\n"
    "Odpowiedź asystenta:\n{reply}"
)

_OPTION_KEYS = ("option", "odpowiedz", "odpowiedź", "answer", "wariant", "choice")
_ARTICLE_KEYS = ("articles", "artykuly", "artykuły", "przepisy", "citations", "cited_articles", "provisions")


def format_options(options: Mapping[str, str]) -> str:
    """``a) text`` lines in the letter order of the source."""
    return "\n".join(f"{k}) {v}" for k, v in options.items())


def extraction_messages(question: AnswerQuestion, reply: str) -> list[dict[str, str]]:
    """The chat messages of one extraction call."""
    user = EXTRACTION_USER_TEMPLATE.format(question=question.question,
                                           options=format_options(question.options), reply=reply)
    return [{"role": "system", "content": EXTRACTION_SYSTEM_PROMPT}, {"role": "user", "content": user}]


# --- JSON ---------------------------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def find_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (inside a ```json fence or bare among prose), else None."""
    if not text:
        return None
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        for i, ch in enumerate(cand):
            if ch != "{":
                continue
            try:
                value, _ = decoder.raw_decode(cand, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


# --- citations ----------------------------------------------------------------------------------
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUP_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_NUM = r"\d+[a-z]?(?:\^\d+)?"
_LIST = r"\s*(?:,|\bi\b|\boraz\b|\blub\b)\s*"
# "art. 5", "art. 5 i 6", "artykułu 445", "Art. 109^1"
_ART = re.compile(rf"\bart(?:ykuł\w*|icle\b|\.|\b)\s*({_NUM}(?:{_LIST}{_NUM}(?!\w))*)", re.I)
_NUM_RE = re.compile(_NUM)
_ID = re.compile(r"\b([a-z]{2}:[a-z0-9_]+:art:[0-9a-z^]+(?::(?:par|pt|lit):[0-9a-z^]+)*)", re.I)
_PAR = re.compile(rf"§\s*({_NUM}(?:{_LIST}(?:§\s*)?{_NUM}(?!\w))*)")  # "§ 1", "§ 1 i 2", "§ 1 i § 2"
_PT = re.compile(r"\bpkt\.?\s*(\d+[a-z]?(?:\^\d+)?)", re.I)
_LIT = re.compile(r"\blit\.?\s*([a-z])\b", re.I)
# Markers of acts, looked for after an article reference: any act's (``_ANY_ACT``), and the
# marker of the act answered (:func:`_own_marker`), which wins where both start.
_ANY_ACT = re.compile(
    r"\bk\.\s?(?:[a-ząćęłńóśźż]{1,3}\.\s?){2,3}"  # k.p.c., k.r.o., k.s.h., k.p.a.
    r"|\bk\.\s?[ckpw]\.(?!\s?[a-z]\.)"  # k.c., k.k., k.p., k.w.
    r"|kodeks\w*\s+\w+"  # Kodeksu cywilnego, Kodeksu postępowania …, Kodeksu pracy
    # "ustawy o …", "ustawy z dnia …" name an act; "sprzeczna z ustawą" in a gloss does not.
    r"|\bustaw[aąyie]{1,2}\s+(?:z\s+dnia|o)\b|\bust\.\s?\d|\bkonstytucj\w*|\bu\.\s?[a-z]\.|\bpr\.\s?[a-z]"
    r"|\brozporządzeni\w*\s+(?:z\s+dnia|w\s+sprawie|ministra|rady)",
    re.I)


_STEM = 4  # title words compared by their first letters: "Kodeksu cywilnego" is "Kodeks cywilny"


def _abbreviation(citation: str) -> str:
    """``k.p.c.`` → a regex with free spacing after each dot and the final dot optional, which
    does not match the start of a longer abbreviation (``k.p.`` is not ``k.p.c.``)."""
    parts = [re.escape(p) for p in re.findall(r"[^\s.]+", citation)]
    return (r"(?<![\w.])" + r"\.\s?".join(parts) + r"(?:\.(?!\s?[a-z]\.)(?!\w)|(?![\w.]))") if parts else ""


@functools.lru_cache(maxsize=64)
def _own_marker(act_id: str) -> re.Pattern:
    """The designations of ``act_id`` after an article number: its registry citation forms
    (``k.c.``), its slug as a bare word (``kc``) and its title in any case (``Kodeksu
    cywilnego``). An act the registry does not hold is known by its slug only."""
    from schemas.acts import registry

    slug = act_id.split(":", 1)[-1]
    forms = [rf"\b{re.escape(slug)}\b"] if re.fullmatch(r"[a-z]{2,6}", slug) else []
    try:
        act = registry().get(act_id)
    except KeyError:
        act = None
    if act is not None:
        forms += [_abbreviation(c) for c in act.citations if _abbreviation(c)]
        words = re.findall(r"\w+", act.title.lower())
        if words:
            forms.append(r"\s+".join(rf"{re.escape(w[:_STEM])}\w*" for w in words))
    return re.compile("|".join(forms) or r"(?!)", re.I)


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    text = _SUP_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)
    text = re.sub(r"\s*\^\s*", "^", text)
    return text.replace("\u00a0", " ")


@dataclass(frozen=True)
class ParsedCitation:
    raw: str
    unit_ids: tuple[str, ...]  # empty when the text names no article of ``default_act``
    foreign: tuple[str, ...] = ()  # references to other acts, as written ("art. 5 k.p.c.")


def parse_citation(text: str, *, default_act: str) -> ParsedCitation:
    """Unit ids named by one citation string. Articles without an act marker belong to
    ``default_act`` (the act the questions are about: the caller names it, none is assumed);
    one article with several ``§`` gives one id per paragraph.

    With ``default_act="pl:kc"``: ``art. 109^1 § 2 k.c.`` → ``pl:kc:art:109^1:par:2``;
    ``art. 5 i art. 7 k.c.`` → two ids; ``art. 5 k.p.c.`` → listed in ``foreign`` (not a unit of
    the act). With ``default_act="pl:kp"`` the roles swap: ``art. 5 k.c.`` is foreign."""
    norm = _normalize(text)
    ids = [m.group(1) for m in _ID.finditer(norm)]
    if ids:
        return ParsedCitation(text, tuple(dict.fromkeys(ids)))
    arts = list(_ART.finditer(norm))
    out: list[str] = []
    foreign: list[str] = []
    for i, m in enumerate(arts):
        seg = norm[m.end(): arts[i + 1].start() if i + 1 < len(arts) else len(norm)]
        # An act marker may sit after a later article of the same list ("art. 5 i 6 k.p.c.");
        # the first marker anywhere after this reference decides.
        tail = norm[m.end():]
        other, own = _ANY_ACT.search(tail), _own_marker(default_act).search(tail)
        if other and (own is None or other.start() < own.start()):
            foreign.append((norm[m.start(): m.end()] + " " + other.group(0)).strip())
            continue
        numbers = [n.lower() for n in _NUM_RE.findall(m.group(1))]
        # "art. 5 i 6 § 2": the units after the list belong to its last article.
        out.extend(f"{default_act}:art:{n}" for n in numbers[:-1])
        base = f"{default_act}:art:{numbers[-1]}"
        pars = [n for p in _PAR.finditer(seg) for n in _NUM_RE.findall(p.group(1))]
        pt = _PT.search(seg)
        lit = _LIT.search(seg)
        if not pars:
            unit = base
            if pt:
                unit += f":pt:{pt.group(1)}"
                if lit:
                    unit += f":lit:{lit.group(1).lower()}"
            out.append(unit)
            continue
        for j, p in enumerate(pars):
            unit = f"{base}:par:{p}"
            if j == 0 and len(pars) == 1 and pt:
                unit += f":pt:{pt.group(1)}"
                if lit:
                    unit += f":lit:{lit.group(1).lower()}"
            out.append(unit)
    return ParsedCitation(text, tuple(dict.fromkeys(out)), tuple(dict.fromkeys(foreign)))


def _parent(unit_id: str) -> str | None:
    parts = unit_id.split(":")
    idx = max((i for i, p in enumerate(parts) if p in ("par", "pt", "lit")), default=None)
    return ":".join(parts[:idx]) if idx is not None else None


def _deflattened(article_id: str, known: Collection[str]) -> str | None:
    """``…:art:1091`` → ``…:art:109^1`` when that is the only existing split (else None)."""
    head, _, num = article_id.rpartition(":art:")
    if not num.isdigit() or len(num) < 2:
        return None
    cands = [f"{head}:art:{num[:k]}^{num[k:]}" for k in range(1, len(num))
             if num[k] != "0"]
    cands = [c for c in cands if c in known]
    return cands[0] if len(cands) == 1 else None


def resolve_citations(citations: Iterable[str], known_unit_ids: Collection[str] | None = None, *,
                      default_act: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(valid unit ids, invalid citation strings, notes).

    Without ``known_unit_ids`` every parsed id of ``default_act`` is accepted (nothing to check against).
    With it: an article that does not exist makes the citation invalid, and so does a paragraph
    that does not exist in an article that has paragraphs (``art. 109^3 § 2``, the paper's
    hallucination example). A ``§`` of an article without paragraphs, or a point/letter we cannot
    place, is cut back to the existing parent: our point ids depend on the parser's reading of the
    unit, and a model's "pkt 3" is not a hallucination of the article. Pass the ids of
    ``nodes.parquet`` (:func:`known_unit_ids_from_corpus`), not only article ids."""
    valid: list[str] = []
    invalid: list[str] = []
    notes: list[str] = []
    for raw in citations:
        parsed = parse_citation(raw, default_act=default_act)
        for ref in parsed.foreign:
            # Another act's provision is a reference all the same: scored as a non-gold one.
            invalid.append(ref)
            notes.append(f"citation {raw!r}: {ref!r} is not a {default_act} provision")
        if not parsed.unit_ids and not parsed.foreign:
            invalid.append(raw)
            notes.append(f"citation {raw!r} names no article")
            continue
        for uid in parsed.unit_ids:
            if known_unit_ids is None or uid in known_unit_ids:
                valid.append(uid)
                continue
            resolved = _resolve_unit(uid, known_unit_ids)
            if resolved is None:
                invalid.append(uid)
                notes.append(f"citation {raw!r}: {uid} is not in the corpus")
            else:
                valid.append(resolved)
                notes.append(f"citation {raw!r}: {uid} read as {resolved}")
    return tuple(dict.fromkeys(valid)), tuple(dict.fromkeys(invalid)), tuple(notes)


def _resolve_unit(uid: str, known: Collection[str]) -> str | None:
    parts = uid.split(":")
    art_end = parts.index("art") + 2 if "art" in parts else len(parts)
    article = ":".join(parts[:art_end])
    rest = parts[art_end:]
    if article not in known:
        fixed = _deflattened(article, known)
        if fixed is None:
            return None
        article = fixed
    cur = article
    for level, num in zip(rest[::2], rest[1::2]):
        nxt = f"{cur}:{level}:{num}"
        if nxt in known:
            cur = nxt
        elif level == "par" and f"{cur}:par:1" in known:
            return None  # an invented paragraph ("art. 109^3 § 2") is a wrong reference
        else:
            break  # a point/letter we cannot place: keep the existing parent
    return cur


# --- the whole reply ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Extraction:
    option: str | None  # spelled as in question.options; None when missing or invalid
    cited_unit_ids: tuple[str, ...]
    invalid_citations: tuple[str, ...]
    problems: tuple[str, ...]


_LEADING_LETTER = re.compile(r"^\(?([a-z])\s*(?:\)|\.|:|$|\s)", re.I)


def _read_option(value: Any, question: AnswerQuestion) -> tuple[str | None, str | None]:
    """(option as spelled in the question, problem)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none", "brak")):
        return None, "no option chosen"
    if not isinstance(value, str):
        return None, f"option is {type(value).__name__}, not a letter"
    v = value.strip()
    # The model sometimes returns the option's text instead of its letter; check that first, since
    # option texts may start with a one-letter word ("w terminie …", "z chwilą …").
    by_text = [k for k, t in question.options.items()
               if t.strip().rstrip(",.;").lower() == v.rstrip(",.;").lower()]
    if len(by_text) == 1:
        return by_text[0], None
    v = re.sub(r"^(?:odpowied[zź]|wariant|option|answer)\s*[:\-]?\s*", "", v, flags=re.I)
    m = _LEADING_LETTER.match(v)
    if m:
        letter = question.option_letter(m.group(1))
        if letter is None:
            return None, f"option {m.group(1)!r} is not one of {', '.join(question.options)}"
        return letter, None
    return None, f"option {value[:40]!r} is not one of {', '.join(question.options)}"


def parse_extraction(reply: str | None, question: AnswerQuestion,
                     known_unit_ids: Collection[str] | None = None, *,
                     default_act: str) -> Extraction:
    """The extraction agent's reply → :class:`Extraction` (never raises on model output)."""
    obj = find_json_object(reply)
    if obj is None:
        return Extraction(None, (), (), ("extraction reply contains no JSON object",))
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    problems: list[str] = []
    opt_key = next((k for k in _OPTION_KEYS if k in lowered), None)
    if opt_key is None:
        option, problem = None, "extraction JSON has no 'option'"
    else:
        option, problem = _read_option(lowered[opt_key], question)
    if problem:
        problems.append(problem)
    art_key = next((k for k in _ARTICLE_KEYS if k in lowered), None)
    raw = lowered.get(art_key) if art_key else None
    if raw is None:
        raw = []
    elif isinstance(raw, str):
        raw = [raw]
    elif not isinstance(raw, list):
        problems.append(f"'articles' is {type(raw).__name__}, not a list")
        raw = []
    strings = [str(x) for x in raw if isinstance(x, (str, int, float))]
    if len(strings) != len(raw):
        problems.append("non-text entries in 'articles' ignored")
    valid, invalid, notes = resolve_citations(strings, known_unit_ids, default_act=default_act)
    problems.extend(notes)
    return Extraction(option, valid, invalid, tuple(problems))


def known_unit_ids_from_corpus(version_dir: Path | str) -> frozenset[str]:
    """Every unit id (articles, paragraphs, points, letters, structure) of one published corpus
    version, from its ``nodes.parquet`` — the set :func:`resolve_citations` checks against."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(version_dir) / "nodes.parquet", columns=["id"])
    return frozenset(table.column("id").to_pylist())
