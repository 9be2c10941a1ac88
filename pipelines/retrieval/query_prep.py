"""Query preparation: turn an exam-style question into a retrieval query.

* :func:`strip_boilerplate` — rule-based and conservative: removes a leading lead-in that only
  names the source of law ("Zgodnie z Kodeksem cywilnym, …", "Zgodnie z ustawą z dnia … o …, …",
  "W świetle przepisów Kodeksu cywilnego, …", "W rozumieniu przepisów Kodeksu postępowania
  administracyjnego, …"). Nothing else in the question is touched. Such lead-ins hurt every
  retriever a little and gAIus a lot: its windows are as long as the query, so 29 characters of
  "Zgodnie z Kodeksem cywilnym, " push the matching text 29 characters into the window, which an
  article *starting* with that text cannot provide.
* :class:`Reformulator` — an LLM step as in the gAIus agent ("Who can be incapacitated?" →
  "Incapacitation"); :class:`OpenAIReformulator` speaks the OpenAI-compatible chat-completions
  protocol over httpx. It is used only when configured (:func:`reformulator_from_env`), and any
  failure falls back to :func:`strip_boilerplate`.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Callable, Protocol

import httpx

__all__ = ["strip_boilerplate", "Reformulator", "OpenAIReformulator", "prepare_query",
           "reformulator_from_env", "DEFAULT_REFORMULATE_PROMPT"]

log = logging.getLogger(__name__)

# --- lead-ins ---------------------------------------------------------------------------------
# "<opener> [przepisami|przepisów [ogólnymi]] <act> ," at the very start of the question.
_OPENER = r"(?:zgodn(?:ie|e)\s+z|stosownie\s+do|w\s+świetle|w\s+rozumieniu|w\s+myśl|na\s+gruncie|na\s+podstawie|według)"
_PROVISIONS = r"(?:(?:obowiązując\w+\s+)?przepis(?:ów|ami|u|em)\s+(?:ogóln\w+\s+)?)?"
# Codes by name: "Kodeks(em|u)" + words from the names of Polish codes only, so a question
# without a comma after the name ("Zgodnie z Kodeksem cywilnym w razie …, …") is left alone.
_CODE_WORD = (r"(?:(?:cywiln|postępowani|karn|skarbow|wykonawcz|spółek|handlow|administracyjn|rodzinn|"
              r"opiekuńcz|pracy|wykrocze|morsk|wyborcz|celn|drogow|sprawach)\w*|w|o|i)")
_CODE = rf"kodeks\w*(?:\s+{_CODE_WORD}(?=[\s,])){{1,6}}"
_CODE_ABBR = r"k\.\s?(?:[a-ząćęłńóśźż]{1,3}\.\s?){1,3}"  # k.c., k.p.c., k.r.o., k. c.
_STATUTE = r"ustaw(?:a|ą|y|ie|ami|ach)\b[^,:;?\n]{0,200}"  # "ustawą z dnia … o …" up to the comma
_CONSTITUTION = r"konstytucj\w*(?:\s+rzeczypospolitej\s+polskiej|\s+rp)?"
_NAMED_LAW = r"(?-i:Praw(?:em|a|o))\s+[a-ząćęłńóśźż\- ]{1,60}"  # "Prawem bankowym" (capitalised act title)
_REGULATION = r"rozporządzeni\w*[^,:;?\n]{0,250}"
_LEAD_IN = re.compile(
    rf"^\s*{_OPENER}\s+{_PROVISIONS}(?:{_CODE}|{_CODE_ABBR}|{_STATUTE}|{_CONSTITUTION}|{_NAMED_LAW}|{_REGULATION})"
    r"\s*,\s*",
    re.IGNORECASE,
)


def strip_boilerplate(question: str, *, capitalize: bool = False) -> str:
    """``question`` without a leading source-of-law lead-in; otherwise unchanged (only outer
    whitespace removed). Never returns an empty string for a non-empty question.

    ``capitalize``: when a lead-in was removed, upper-case the first character of what remains —
    the question's opening words often quote a provision's first words, which the statute
    capitalises, and gAIus compares characters case-sensitively. Off by default (removal only).
    """
    q = question.strip()
    m = _LEAD_IN.match(q)
    if m is None:
        return q
    rest = q[m.end():].strip()
    if not rest:
        return q
    return rest[:1].upper() + rest[1:] if capitalize else rest


# --- LLM reformulation ------------------------------------------------------------------------
DEFAULT_REFORMULATE_PROMPT = (
    "You prepare search queries for a retriever over the Polish Civil Code (Kodeks cywilny). "
    "The retriever matches the query character by character against the text of each article, "
    "so the query must use the wording the statute itself would use. Given a question (possibly "
    "an exam question with answer options), reply with ONLY a short, general retrieval query in "
    "Polish: the legal institution or the key phrase of the provision, a few words at most. "
    "No quotes, no explanation, no article numbers. Example: 'Kto może zostać "
    "ubezwłasnowolniony?' -> 'Ubezwłasnowolnienie'."
)


class Reformulator(Protocol):
    """Turns a user question into a (short) retrieval query."""

    def reformulate(self, question: str) -> str: ...


class OpenAIReformulator:
    """Reformulation by an OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

    ``base_url`` is the API root including any version prefix (e.g. ``http://host:8000/v1``).
    Any failure — connection error, timeout, HTTP error status, malformed or empty reply, reply
    longer than ``max_chars`` — is logged and answered by ``fallback`` (``strip_boilerplate``).
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 10.0, *,
                 system_prompt: str = DEFAULT_REFORMULATE_PROMPT, max_chars: int = 200,
                 fallback: Callable[[str], str] = strip_boilerplate) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.max_chars = max_chars
        self.fallback = fallback

    def _request(self, question: str) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "temperature": 0.0,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": question},
            ],
        }
        resp = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout)
        resp.raise_for_status()
        content = resp.json()["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise ValueError(f"reply content is {type(content).__name__}, not str")
        return _clean_reply(content)

    def reformulate(self, question: str) -> str:
        try:
            query = self._request(question)
            if not query:
                raise ValueError("empty reply")
            if len(query) > self.max_chars:
                raise ValueError(f"reply longer than {self.max_chars} characters")
            return query
        except Exception as exc:  # any failure: the rule-based query
            log.warning("query reformulation via %s failed (%s: %s); using strip_boilerplate",
                        self.url, type(exc).__name__, exc)
            return self.fallback(question)

    __call__ = reformulate


def _clean_reply(text: str) -> str:
    """First non-empty line, without a 'Query:' label, surrounding quotes/backticks and extra spaces."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(?:query|zapytanie)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip().strip("`\"'„”“«»").strip()
    return " ".join(line.split())


def prepare_query(question: str, reformulator: Reformulator | None = None) -> str:
    """The retrieval query for ``question``: the reformulator's when one is configured (it falls
    back by itself; any exception escaping a custom one falls back here), else strip_boilerplate."""
    if reformulator is None:
        return strip_boilerplate(question)
    try:
        query = reformulator.reformulate(question)
    except Exception as exc:
        log.warning("reformulator %r raised %s: %s; using strip_boilerplate", reformulator, type(exc).__name__, exc)
        return strip_boilerplate(question)
    return query if query and query.strip() else strip_boilerplate(question)


def reformulator_from_env(environ: dict[str, str] | None = None) -> OpenAIReformulator | None:
    """An :class:`OpenAIReformulator` when ``LEXPIPE_REFORMULATOR_BASE_URL`` and
    ``LEXPIPE_REFORMULATOR_MODEL`` are set (optional ``LEXPIPE_REFORMULATOR_API_KEY``,
    ``LEXPIPE_REFORMULATOR_TIMEOUT_S``); None otherwise — then queries are only stripped."""
    env = os.environ if environ is None else environ
    base_url, model = env.get("LEXPIPE_REFORMULATOR_BASE_URL"), env.get("LEXPIPE_REFORMULATOR_MODEL")
    if not base_url or not model:
        return None
    return OpenAIReformulator(base_url, model, api_key=env.get("LEXPIPE_REFORMULATOR_API_KEY") or None,
                              timeout=float(env.get("LEXPIPE_REFORMULATOR_TIMEOUT_S", "10")))
