"""The gAIus agent (Matak & Chudziak): one LLM agent, one tool — the retriever.

Flow per question (paper sect. 3.1 and 4.2):

1. The agent gets the exam question with its options and the paper's system prompt (in Polish),
   plus a ``search`` tool. It reformulates the question into a short, general retrieval query
   ("Kto może zostać ubezwłasnowolniony?" → "Ubezwłasnowolnienie") and calls the tool, possibly
   several times with different queries if the first results miss.
2. Each tool call runs the injected retriever ``search(query, k)`` (k = 50 as in the paper: the
   articles are short and the model filters out the irrelevant ones) and sends the articles back
   as the tool result.
3. The agent answers in prose: the chosen option, an explanation and the cited articles.
4. The evaluation agent (:mod:`.extraction`) turns that prose into JSON (option, cited articles),
   which is validated against the question's options and the corpus.

Robustness is part of the contract: a question never raises out of :meth:`GaiusAgent.answer`.
Endpoint failures (after the client's retries), a question timeout or a crashing retriever give an
``AnswerResult`` with ``error`` set; malformed model output (no JSON, an option letter that does
not exist, invented articles) gives ``option=None`` / invalid citations and notes in ``problems``.
Why the retriever is an injected callable: the agent is testable without an index, and any
backend (embedded, Elasticsearch, the gAIus fuzzy matcher, hybrid) can be plugged in.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Collection, Sequence

import httpx

from pipelines.answers.extraction import extraction_messages, format_options, parse_extraction
from connectors.llm_client import ChatClient, ChatCompletion, LLMError, LLMSettings, ToolCall
from pipelines.answers.types import AnswerQuestion, AnswerResult
from pipelines.retrieval.interface import Hit
from pipelines.tools import openai_tool

__all__ = ["AGENT_SYSTEM_PROMPT", "AGENT_USER_TEMPLATE", "SEARCH_TOOL", "SearchFn", "GaiusConfig",
           "GaiusAgent", "answer_questions", "searched_act"]

log = logging.getLogger(__name__)

SearchFn = Callable[[str, int], Sequence[Hit]]

# --- prompts (Polish, as the paper's assistant was asked to respond in Polish) -----------------
# The paper's system prompt, translated, plus how to use the retriever (sect. 3.1).
AGENT_SYSTEM_PROMPT = (
    "Jesteś pomocnym asystentem specjalizującym się w prawie polskim. Otrzymasz pytania z egzaminu; "
    "każde składa się z pytania lub niedokończonego zdania oraz możliwych odpowiedzi oznaczonych "
    "literami {letters}.\n\n"
    "Twoim zadaniem jest:\n"
    "1. Wybrać poprawną odpowiedź.\n"
    "2. Podać szczegółowe uzasadnienie swojego wyboru.\n"
    "3. Wskazać właściwy artykuł (lub artykuły) jednego z polskich aktów prawnych.\n\n"
    "Masz do dyspozycji narzędzie „search”, które przeszukuje {act} i zwraca artykuły "
    "najlepiej pasujące do zapytania. Zanim odpowiesz, skorzystaj z niego: przeformułuj pytanie na "
    "krótkie, ogólne zapytanie oddające istotę zagadnienia, najlepiej słowami, których używa sam "
    "przepis (np. pytanie „Kto może zostać ubezwłasnowolniony?” → zapytanie "
    "„Ubezwłasnowolnienie”). Jeśli wśród wyników nie ma właściwego przepisu, wyszukaj ponownie "
    "innym zapytaniem. Powołuj się na przepisy, podając numer artykułu i paragrafu, np. "
    "„art. 109^1 § 2 k.c.”.\n\n"
    "Zadbaj o to, by odpowiedź była precyzyjna i rzeczowa. Odpowiadaj po polsku."
)
AGENT_USER_TEMPLATE = "{question}\n{options}"


def searched_act(act_id: str) -> str:
    """The act the search tool searches, as the system prompt names it (accusative): a code's
    title as it is (``Kodeks cywilny``: the prompt of the paper, word for word), another act as
    ``akt „<title>”``, an act the registry does not hold by its id."""
    from schemas.acts import registry

    try:
        title = registry().get(act_id).title
    except KeyError:
        return f"akt {act_id}"
    return title if title.startswith("Kodeks ") else f"akt „{title}”"

# The shared ``search`` definition (pipelines.tools: the one the MCP server lists), with only the
# argument the agent fills in: ``k`` is the agent's own (GaiusConfig.search_k), the act is the
# retriever's. The Polish guidance on how to query stays in AGENT_SYSTEM_PROMPT.
SEARCH_TOOL = openai_tool("search", properties=("query",))
TOOL_RESULTS_HEADER = "Wyniki wyszukiwania dla zapytania „{query}” (artykułów: {n}):"
TOOL_HIT_TEMPLATE = "[{rank}] {article_id} | {heading}\n{text}"
TOOL_NO_RESULTS = "Brak wyników dla zapytania „{query}”. Spróbuj innego, bardziej ogólnego zapytania."
TOOL_ERROR = "Błąd wywołania narzędzia: {reason}"
FINAL_ANSWER_PROMPT = ("Limit wyszukiwań został wyczerpany. Udziel teraz ostatecznej odpowiedzi: "
                       "wybierz wariant, uzasadnij wybór i wskaż przepisy.")


@dataclass(frozen=True)
class GaiusConfig:
    """Knobs of one run. ``max_tool_rounds`` bounds the search loop (the paper lets the agent
    search "multiple times"; an unbounded loop would let a confused model burn the budget); after
    it the model is asked for its final answer with tools disabled."""

    search_k: int = 50
    max_tool_rounds: int = 4
    max_hit_chars: int | None = 2000  # per article in the tool result; None = whole text
    question_timeout_s: float | None = 600.0
    max_concurrency: int | None = None  # questions in flight; None = the client's max_concurrency
    serialize_search: bool = True  # retrievers are not assumed thread-safe
    answerer: str = "gaius"


class _SearchFailed(Exception):
    pass


@dataclass
class _Trace:
    """What one question run accumulated; kept outside the coroutine so a timeout keeps it."""

    queries: list[str] = field(default_factory=list)
    retrieved: dict[str, None] = field(default_factory=dict)  # ordered set of article ids
    problems: list[str] = field(default_factory=list)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_rounds: int = 0
    reply: str = ""

    def count(self, c: ChatCompletion) -> None:
        self.llm_calls += 1
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens


class GaiusAgent:
    """Answers :class:`AnswerQuestion` s with the gAIus flow over an OpenAI-compatible endpoint.

    ``known_unit_ids`` (ids of ``nodes.parquet``, see
    :func:`pipelines.answers.extraction.known_unit_ids_from_corpus`) lets extraction reject
    invented articles; without it every well-formed citation of ``act_id`` is accepted. ``act_id``:
    the act the questions are about and ``search`` searches (named in the system prompt; articles
    cited without an act belong to it).
    """

    def __init__(self, client: ChatClient, search: SearchFn, *, act_id: str, config: GaiusConfig | None = None,
                 known_unit_ids: Collection[str] | None = None) -> None:
        self.client = client
        self.search = search
        self.act_id = act_id
        self.config = config or GaiusConfig()
        self.known_unit_ids = known_unit_ids
        self._search_lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------------

    async def answer(self, question: AnswerQuestion) -> AnswerResult:
        """One question, start to end; never raises for model, endpoint or retriever failures."""
        trace = _Trace()
        start = time.perf_counter()
        error: str | None = None
        option: str | None = None
        cited: tuple[str, ...] = ()
        invalid: tuple[str, ...] = ()
        try:
            run = self._run(question, trace)
            timeout = self.config.question_timeout_s
            option, cited, invalid = await (asyncio.wait_for(run, timeout) if timeout else run)
        except asyncio.TimeoutError:
            error = f"timeout: question not answered within {self.config.question_timeout_s}s"
        except LLMError as exc:
            error = f"llm: {exc}"
        except _SearchFailed as exc:
            error = f"search failed: {exc}"
        except Exception as exc:  # a bug must cost one question, not the whole benchmark run
            log.exception("question %s: unexpected error", question.question_id)
            error = f"internal: {type(exc).__name__}: {exc}"
        latency = time.perf_counter() - start
        if error:
            log.warning("question %s failed after %.1fs: %s", question.question_id, latency, error)
        return AnswerResult(
            question_id=question.question_id, option=None if error else option,
            explanation=trace.reply, cited_unit_ids=() if error else cited, error=error,
            latency_s=latency, answerer=self.config.answerer,
            invalid_citations=() if error else invalid, problems=tuple(trace.problems),
            queries=tuple(trace.queries), retrieved_article_ids=tuple(trace.retrieved),
            llm_calls=trace.llm_calls, prompt_tokens=trace.prompt_tokens,
            completion_tokens=trace.completion_tokens, extra={"tool_rounds": trace.tool_rounds})

    async def answer_all(self, questions: Sequence[AnswerQuestion], *,
                         on_result: Callable[[AnswerResult], None] | None = None) -> list[AnswerResult]:
        """All questions, at most ``max_concurrency`` at a time; results in question order.

        ``on_result`` is called as each finishes (e.g. to append to a JSONL file), so a long run
        that is interrupted keeps what it has."""
        limit = self.config.max_concurrency or self.client.settings.max_concurrency
        sem = asyncio.Semaphore(limit)

        async def one(q: AnswerQuestion) -> AnswerResult:
            async with sem:
                result = await self.answer(q)
            if on_result is not None:
                try:
                    on_result(result)
                except Exception:
                    log.exception("on_result callback failed for %s", q.question_id)
            return result

        return list(await asyncio.gather(*(one(q) for q in questions)))

    # -- the flow -------------------------------------------------------------------------------

    async def _run(self, q: AnswerQuestion,
                   trace: _Trace) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
        letters = ", ".join(q.options)
        messages: list[dict] = [
            {"role": "system", "content": AGENT_SYSTEM_PROMPT.format(letters=letters, act=searched_act(self.act_id))},
            {"role": "user", "content": AGENT_USER_TEMPLATE.format(question=q.question,
                                                                   options=format_options(q.options))},
        ]
        rounds = self.config.max_tool_rounds
        for round_no in range(rounds + 1):
            final = round_no == rounds
            if final:
                messages.append({"role": "user", "content": FINAL_ANSWER_PROMPT})
                comp = await self.client.chat(messages, tools=[SEARCH_TOOL], tool_choice="none")
            else:
                comp = await self.client.chat(messages, tools=[SEARCH_TOOL])
            trace.count(comp)
            if comp.tool_calls and not final:
                trace.tool_rounds += 1
                messages.append(comp.assistant_message())
                for call in comp.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": await self._tool_result(call, trace)})
                continue
            if comp.tool_calls:
                trace.problems.append("model still called tools after the search limit")
            trace.reply = (comp.content or "").strip()
            break

        if not trace.reply:
            trace.problems.append("empty answer")
            return None, (), ()
        ext_comp = await self.client.chat(
            extraction_messages(q, trace.reply),
            response_format={"type": "json_object"} if self.client.settings.json_mode else None)
        trace.count(ext_comp)
        ext = parse_extraction(ext_comp.content, q, self.known_unit_ids, default_act=self.act_id)
        trace.problems.extend(ext.problems)
        return ext.option, ext.cited_unit_ids, ext.invalid_citations

    async def _tool_result(self, call: ToolCall, trace: _Trace) -> str:
        """The tool message content for one call. Bad calls are answered with an error message the
        model can act on (it may retry); only a crashing retriever fails the question."""
        if call.name != SEARCH_TOOL["function"]["name"]:
            trace.problems.append(f"unknown tool {call.name!r}")
            return TOOL_ERROR.format(reason=f"nieznane narzędzie „{call.name}”; dostępne jest tylko „search”.")
        try:
            args = call.parsed_arguments()
        except ValueError as exc:
            trace.problems.append(f"bad tool arguments: {exc}")
            return TOOL_ERROR.format(reason="argumenty muszą być obiektem JSON z polem „query”.")
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            trace.problems.append("tool call without a query")
            return TOOL_ERROR.format(reason="brak zapytania w polu „query”.")
        query = query.strip()
        trace.queries.append(query)
        hits = await self._search(query)
        if not hits:
            return TOOL_NO_RESULTS.format(query=query)
        return self._format_hits(query, hits, trace)

    async def _search(self, query: str) -> list[Hit]:
        k = self.config.search_k

        def call() -> list[Hit]:
            if self.config.serialize_search:
                with self._search_lock:
                    return list(self.search(query, k))
            return list(self.search(query, k))

        try:
            # In a worker thread: retrieval is CPU-bound and must not stall the other questions'
            # HTTP traffic on the event loop.
            return await asyncio.to_thread(call)
        except Exception as exc:
            raise _SearchFailed(f"{type(exc).__name__}: {exc}") from exc

    def _format_hits(self, query: str, hits: Sequence[Hit], trace: _Trace) -> str:
        seen: set[str] = set()
        parts: list[str] = []
        limit = self.config.max_hit_chars
        for h in hits:
            if h.article_id in seen:
                continue
            seen.add(h.article_id)
            trace.retrieved.setdefault(h.article_id, None)
            text = h.text or ""
            if limit is not None and len(text) > limit:
                text = text[:limit].rstrip() + " […]"
            parts.append(TOOL_HIT_TEMPLATE.format(rank=len(parts) + 1, article_id=h.article_id,
                                                  heading=h.heading_path or h.article_id, text=text))
            if len(parts) == self.config.search_k:
                break
        return "\n\n".join([TOOL_RESULTS_HEADER.format(query=query, n=len(parts)), *parts])


def answer_questions(questions: Sequence[AnswerQuestion], search: SearchFn, settings: LLMSettings, *,
                     act_id: str, config: GaiusConfig | None = None,
                     known_unit_ids: Collection[str] | None = None,
                     on_result: Callable[[AnswerResult], None] | None = None,
                     transport: httpx.AsyncBaseTransport | None = None) -> list[AnswerResult]:
    """Synchronous entry point (CLI, Dagster, benchmarks): one event loop, one client, all
    questions; results in question order. Must not be called from inside a running event loop."""

    async def main() -> list[AnswerResult]:
        async with ChatClient(settings, transport=transport) as client:
            agent = GaiusAgent(client, search, act_id=act_id, config=config, known_unit_ids=known_unit_ids)
            return await agent.answer_all(questions, on_result=on_result)

    return asyncio.run(main())
