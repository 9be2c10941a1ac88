"""The gAIus flow end to end against a scripted OpenAI-compatible server on 127.0.0.1.

The fake model decides from the conversation it receives (like a real one): agent calls get a
``search`` tool call until its scripted queries are used up, then the scripted prose answer; calls
with the extraction system prompt get the scripted extraction reply. So the tests check what our
code really sends back (tool results with the right ``tool_call_id``), not a fixed request order.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipelines.answers.extraction import EXTRACTION_SYSTEM_PROMPT
from pipelines.answers.gaius_agent import (FINAL_ANSWER_PROMPT, TOOL_NO_RESULTS, GaiusConfig,
                                           answer_questions, searched_act)
from connectors.llm_client import LLMSettings
from pipelines.answers.scoring import score_answers
from pipelines.answers.types import AnswerQuestion
from pipelines.retrieval.interface import Hit

KEY = "sk-agent-SECRET-42"

ARTICLES = {
    "pl:kc:art:109^1": "§ 1. Prokura jest pełnomocnictwem udzielonym przez przedsiębiorcę …\n"
                       "§ 2. Prokury nie można ograniczyć ze skutkiem wobec osób trzecich, chyba że "
                       "przepis szczególny stanowi inaczej.",
    "pl:kc:art:109^2": "§ 1. Prokurę można udzielić kilku osobom łącznie (prokura łączna) …",
    "pl:kc:art:8": "§ 1. Każdy człowiek od chwili urodzenia ma zdolność prawną.",
}
KNOWN = frozenset({*ARTICLES, "pl:kc:art:109^1:par:1", "pl:kc:art:109^1:par:2",
                   "pl:kc:art:8:par:1", "pl:kc:art:8:par:2"})
INDEX = {"Prokura": ["pl:kc:art:109^1", "pl:kc:art:109^2"], "Zdolność prawna": ["pl:kc:art:8"]}


def question(qid: str, text: str, gold: str = "C", articles: tuple[str, ...] = ("pl:kc:art:109^1",)):
    return AnswerQuestion(qid, text, {"A": "zawsze,", "B": "nigdy,", "C": "chyba że przepis szczególny "
                                      "stanowi inaczej."}, gold, articles)


PROKURA = question("q-prokura", "Zgodnie z Kodeksem cywilnym, prokury nie można ograniczyć ze skutkiem "
                                "wobec osób trzecich:")


@dataclass
class Script:
    """What the fake model does for one question (matched by a marker in the question text)."""

    queries: list[str] = field(default_factory=lambda: ["Prokura"])
    answer: str = "Prawidłowa odpowiedź to c). Zgodnie z art. 109^1 § 2 k.c. prokury nie można ograniczyć."
    extraction: str = '{"option": "c", "articles": ["art. 109^1 § 2 k.c."]}'
    tool_name: str = "search"
    raw_arguments: str | None = None  # send these arguments instead of {"query": …}
    fail_status: int | None = None  # answer every request of this question with this status
    delay_s: float = 0.0


def completion(content: str | None, tool_calls: list[dict] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


class FakeModel:
    """A chat-completions endpoint driven by per-question :class:`Script` s."""

    def __init__(self, server: HTTPServer, scripts: dict[str, Script]) -> None:
        self.scripts = scripts
        self.bodies: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.transient_failures = 0  # answer this many requests (any question) with 503 first
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self.handle)

    def script_for(self, body: dict) -> Script:
        text = "\n".join(str(m.get("content") or "") for m in body["messages"] if m["role"] == "user")
        return next(s for marker, s in self.scripts.items() if marker in text)

    def handle(self, request: Request) -> Response:
        body = json.loads(request.data)
        with self._lock:
            self.bodies.append(body)
            self.headers.append(dict(request.headers))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            transient = self.transient_failures > 0
            self.transient_failures -= transient
        try:
            if transient:
                return Response(json.dumps({"error": {"message": "try later"}}), status=503,
                                content_type="application/json")
            return self.reply(body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def reply(self, body: dict) -> Response:
        script = self.script_for(body)
        if script.delay_s:
            time.sleep(script.delay_s)
        if script.fail_status:
            return Response(json.dumps({"error": {"message": "model crashed"}}), status=script.fail_status,
                            content_type="application/json")
        messages = body["messages"]
        if messages[0]["content"] == EXTRACTION_SYSTEM_PROMPT:
            return self.json(completion(script.extraction))
        done = sum(1 for m in messages if m["role"] == "tool")
        if body.get("tool_choice") != "none" and done < len(script.queries):
            args = script.raw_arguments or json.dumps({"query": script.queries[done]}, ensure_ascii=False)
            call = {"id": f"call_{done}", "type": "function",
                    "function": {"name": script.tool_name, "arguments": args}}
            return self.json(completion(None, [call]))
        return self.json(completion(script.answer))

    @staticmethod
    def json(body: dict) -> Response:
        return Response(json.dumps(body, ensure_ascii=False), content_type="application/json")

    def agent_bodies(self, marker: str) -> list[dict]:
        return [b for b in self.bodies if b["messages"][0]["content"] != EXTRACTION_SYSTEM_PROMPT
                and marker in b["messages"][1]["content"]]


class FakeSearch:
    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.fail = fail

    def __call__(self, query: str, k: int) -> list[Hit]:
        self.calls.append((query, k))
        if self.fail:
            raise self.fail
        return [Hit(chunk_id=f"{a}#0", article_id=a, act_id="pl:kc", version="2025-11-13", score=1.0 / r,
                    rank=r, heading_path=f"KSIĘGA PIERWSZA › Art. {a.rsplit(':', 1)[1]}", text=ARTICLES[a])
                for r, a in enumerate(INDEX.get(query, [])[:k], 1)]


def llm_settings(server: HTTPServer, **kw: Any) -> LLMSettings:
    opts: dict[str, Any] = dict(base_url=server.url_for("/v1"), model="fake", api_key=KEY, timeout_s=5.0,
                                max_retries=2, backoff_base_s=0.01, backoff_max_s=0.02, max_concurrency=2)
    opts.update(kw)
    return LLMSettings(**opts)


def run(server, scripts, questions, search=None, config=None, **settings_kw):
    model = FakeModel(server, scripts)
    search = search or FakeSearch()
    results = answer_questions(questions, search, llm_settings(server, **settings_kw), act_id="pl:kc",
                               config=config, known_unit_ids=KNOWN)
    return model, search, results


def test_tool_call_round_trip_and_scores(httpserver: HTTPServer):
    model, search, [r] = run(httpserver, {"prokury nie można": Script()}, [PROKURA])

    assert r.error is None and r.option == "C"
    assert r.cited_unit_ids == ("pl:kc:art:109^1:par:2",) and r.invalid_citations == ()
    assert r.queries == ("Prokura",) and r.retrieved_article_ids == ("pl:kc:art:109^1", "pl:kc:art:109^2")
    assert r.explanation.startswith("Prawidłowa odpowiedź to c)")
    assert (r.llm_calls, r.prompt_tokens, r.completion_tokens) == (3, 300, 30) and r.latency_s > 0
    assert search.calls == [("Prokura", 50)]  # k = 50 as in the paper

    first, second = model.agent_bodies("prokury nie można")
    assert first["tools"][0]["function"]["name"] == "search" and first["temperature"] == 0.0
    assert "specjalizującym się w prawie polskim" in first["messages"][0]["content"]
    assert "które przeszukuje Kodeks cywilny i zwraca" in first["messages"][0]["content"]  # the paper's words
    assert "C) chyba że przepis szczególny" in first["messages"][1]["content"]
    assistant, tool = second["messages"][2], second["messages"][3]
    assert assistant["tool_calls"][0]["id"] == "call_0"
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_0"
    assert "[1] pl:kc:art:109^1" in tool["content"] and "Prokury nie można ograniczyć" in tool["content"]
    extraction = model.bodies[-1]
    assert extraction["messages"][0]["content"] == EXTRACTION_SYSTEM_PROMPT
    assert "art. 109^1 § 2 k.c. prokury" in extraction["messages"][1]["content"]
    assert all(h["Authorization"] == f"Bearer {KEY}" for h in model.headers)

    s = score_answers([(PROKURA, r)])
    assert (s.answer_correct, s.context_correct, s.joint_correct, s.failed) == (1, 1, 1, 0)


def test_the_prompt_names_the_act_searched():
    """No act is assumed: the caller names it, and the system prompt says what the tool searches."""
    assert searched_act("pl:kc") == "Kodeks cywilny" and searched_act("pl:kp") == "Kodeks pracy"
    assert searched_act("pl:zz") == "akt pl:zz"  # not in the registry: by its id
    with pytest.raises(TypeError, match="act_id"):
        answer_questions([PROKURA], FakeSearch(), LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"))


def test_agent_searches_again_after_a_miss(httpserver: HTTPServer):
    script = Script(queries=["ograniczenie pełnomocnika przedsiębiorcy", "Prokura"])
    model, search, [r] = run(httpserver, {"prokury": script}, [PROKURA])
    assert r.option == "C" and r.queries == ("ograniczenie pełnomocnika przedsiębiorcy", "Prokura")
    assert [c[0] for c in search.calls] == list(r.queries) and r.extra["tool_rounds"] == 2
    last_agent = model.agent_bodies("prokury")[-1]["messages"]
    tools = [m for m in last_agent if m["role"] == "tool"]
    assert tools[0]["content"] == TOOL_NO_RESULTS.format(query="ograniczenie pełnomocnika przedsiębiorcy")
    assert [m["tool_call_id"] for m in tools] == ["call_0", "call_1"]


def test_malformed_model_output_is_wrong_not_fatal(httpserver: HTTPServer):
    qs = [question("q-nojson", "NOJSON prokura?"), question("q-letter", "LETTER prokura?"),
          question("q-invented", "INVENTED prokura?"), question("q-ok", "OK prokura?")]
    scripts = {
        "NOJSON": Script(extraction="Asystent wybrał odpowiedź C i art. 109^1 k.c."),
        "LETTER": Script(extraction='{"option": "d", "articles": ["art. 109^1 § 2 k.c."]}'),
        # The right option, but the provision is invented (and another act is cited): context fails.
        "INVENTED": Script(extraction='{"option": "c", "articles": ["art. 1500 k.c.", "art. 109^1 § 5 k.c.",'
                                      ' "art. 5 k.p.c."]}'),
        "OK": Script(),
    }
    _, _, results = run(httpserver, scripts, qs)
    by = {r.question_id: r for r in results}
    assert [r.question_id for r in results] == [q.question_id for q in qs]  # input order kept
    assert all(r.error is None for r in results)
    assert by["q-nojson"].option is None and "contains no JSON" in by["q-nojson"].problems[0]
    assert by["q-letter"].option is None and any("'d' is not one of A, B, C" in p for p in by["q-letter"].problems)
    inv = by["q-invented"]
    assert inv.option == "C" and inv.cited_unit_ids == ()
    assert inv.invalid_citations == ("pl:kc:art:1500", "pl:kc:art:109^1:par:5", "art. 5 k.p.c.")

    s = score_answers(zip(qs, results))
    assert (s.answer_correct, s.context_correct, s.joint_correct, s.failed) == (2, 2, 1, 0)
    # No JSON: nothing at all. A bad letter loses the answer, yet its valid citation still counts
    # for context (the scores are independent, as in the paper's table).
    assert [q.context for q in s.per_question] == [False, True, False, True]


def test_bad_tool_calls_are_answered_with_errors(httpserver: HTTPServer):
    scripts = {"BROWSE": Script(tool_name="browse"), "BADARGS": Script(raw_arguments="{query: prokura")}
    qs = [question("q-browse", "BROWSE prokura?"), question("q-badargs", "BADARGS prokura?")]
    model, search, results = run(httpserver, scripts, qs)
    assert search.calls == []
    for r, marker in zip(results, ("BROWSE", "BADARGS")):
        assert r.error is None and r.option == "C"  # the model answered anyway
        tool_msg = next(m for m in model.agent_bodies(marker)[-1]["messages"] if m["role"] == "tool")
        assert tool_msg["content"].startswith("Błąd wywołania narzędzia")
    assert any("unknown tool 'browse'" in p for p in results[0].problems)
    assert any("bad tool arguments" in p for p in results[1].problems)


def test_search_loop_is_bounded(httpserver: HTTPServer):
    script = Script(queries=["Prokura"] * 10)
    model, search, [r] = run(httpserver, {"prokury": script}, [PROKURA],
                             config=GaiusConfig(max_tool_rounds=2))
    assert r.option == "C" and len(search.calls) == 2
    agent = model.agent_bodies("prokury")
    assert len(agent) == 3 and agent[-1]["tool_choice"] == "none"
    assert agent[-1]["messages"][-1] == {"role": "user", "content": FINAL_ANSWER_PROMPT}


def test_transient_5xx_is_retried(httpserver: HTTPServer):
    model = FakeModel(httpserver, {"prokury": Script()})
    model.transient_failures = 2
    [r] = answer_questions([PROKURA], FakeSearch(), llm_settings(httpserver, max_retries=2), act_id="pl:kc",
                           known_unit_ids=KNOWN)
    assert r.error is None and r.option == "C" and len(model.bodies) == 5  # 2 failures + 3 calls


def test_persistent_5xx_fails_only_that_question(httpserver: HTTPServer, caplog):
    caplog.set_level(logging.DEBUG)
    qs = [question("q-down", "AWARIA prokura?"), PROKURA]
    model, _, results = run(httpserver, {"AWARIA": Script(fail_status=503), "prokury": Script()}, qs,
                            max_retries=2)
    down, fine = results
    assert down.option is None and down.error.startswith("llm: ")
    assert "3 attempt(s)" in down.error and "HTTP 503" in down.error and "model crashed" in down.error
    assert len(model.agent_bodies("AWARIA")) == 3
    assert fine.error is None and fine.option == "C"
    s = score_answers(zip(qs, results))
    assert s.failed == 1 and s.failures["q-down"] == down.error and s.joint_correct == 1
    assert KEY not in caplog.text and KEY not in json.dumps([r.to_dict() for r in results])


def test_timeouts_are_retried_then_recorded(httpserver: HTTPServer):
    _, _, [r] = run(httpserver, {"prokury": Script(delay_s=0.4)}, [PROKURA], timeout_s=0.15, max_retries=1)
    assert r.option is None and r.error.startswith("llm: ") and "ReadTimeout" in r.error
    assert "2 attempt(s)" in r.error


def test_question_deadline(httpserver: HTTPServer):
    _, _, [r] = run(httpserver, {"prokury": Script(delay_s=0.3)}, [PROKURA],
                    config=GaiusConfig(question_timeout_s=0.2))
    assert r.error is not None and r.error.startswith("timeout:") and r.option is None


def test_retriever_crash_fails_the_question(httpserver: HTTPServer):
    _, search, [r] = run(httpserver, {"prokury": Script()}, [PROKURA],
                         search=FakeSearch(fail=RuntimeError("index gone")))
    assert r.error == "search failed: RuntimeError: index gone" and r.queries == ("Prokura",)


@pytest.fixture
def threaded_server():
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


def test_questions_run_concurrently_within_the_limit(threaded_server: HTTPServer):
    qs = [question(f"q{i}", f"PYTANIE-{i} prokura?") for i in range(6)]
    scripts = {f"PYTANIE-{i}": Script(delay_s=0.05) for i in range(6)}
    model = FakeModel(threaded_server, scripts)
    seen: list[str] = []
    results = answer_questions(qs, FakeSearch(), llm_settings(threaded_server, max_concurrency=2), act_id="pl:kc",
                               known_unit_ids=KNOWN, on_result=lambda r: seen.append(r.question_id))
    assert [r.option for r in results] == ["C"] * 6 and sorted(seen) == sorted(q.question_id for q in qs)
    assert model.max_in_flight == 2  # concurrent, but never above the limit
