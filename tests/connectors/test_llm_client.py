"""ChatClient against a real HTTP server on 127.0.0.1 speaking the chat-completions protocol."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import threading
import time
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from connectors.llm_client import ChatClient, LLMError, LLMSettings, parse_completion

KEY = "sk-test-SECRET-0123456789"


def completion(content: str | None = "ok", tool_calls: list[dict] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


def ok(body: dict) -> Response:
    return Response(json.dumps(body), content_type="application/json")


def settings(url: str, **kw: Any) -> LLMSettings:
    opts: dict[str, Any] = dict(base_url=url, model="test-model", api_key=KEY, timeout_s=2.0,
                                connect_timeout_s=1.0, max_retries=2, backoff_base_s=0.5,
                                backoff_max_s=4.0, max_concurrency=2)
    opts.update(kw)
    return LLMSettings(**opts)


class Script:
    """Answers successive requests with successive handlers (last repeats); records bodies."""

    def __init__(self, server: HTTPServer, *items: Any) -> None:
        self.items = items
        self.requests: list[tuple[dict[str, str], dict]] = []
        server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self)

    def __call__(self, request: Request) -> Response:
        self.requests.append((dict(request.headers), json.loads(request.data or b"null")))
        item = self.items[min(len(self.requests) - 1, len(self.items) - 1)]
        return item if isinstance(item, Response) else item(request)


def run_chat(s: LLMSettings, sleeps: list[float] | None = None, **chat_kw: Any):
    async def go():
        async def fake_sleep(d: float) -> None:
            if sleeps is not None:
                sleeps.append(d)

        async with ChatClient(s, sleep=fake_sleep, rng=random.Random(1)) as client:
            return await client.chat([{"role": "user", "content": "Pytanie?"}], **chat_kw)
    return asyncio.run(go())


def test_request_shape_auth_and_reply(httpserver: HTTPServer):
    script = Script(httpserver, ok(completion("Odpowiedź C")))
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    c = run_chat(settings(httpserver.url_for("/v1/")), tools=tools, tool_choice="auto")
    assert c.content == "Odpowiedź C" and c.prompt_tokens == 11 and c.attempts == 1
    headers, body = script.requests[0]
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert body["model"] == "test-model" and body["temperature"] == 0.0
    assert body["messages"] == [{"role": "user", "content": "Pytanie?"}]
    assert body["tools"] == tools and body["tool_choice"] == "auto" and "max_tokens" not in body


def test_no_key_no_authorization_header(httpserver: HTTPServer):
    script = Script(httpserver, ok(completion()))
    run_chat(settings(httpserver.url_for("/v1"), api_key=None))
    assert "Authorization" not in script.requests[0][0]


def test_tool_calls_are_parsed():
    body = completion(None, [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"query": "prokura"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": {"query": "x"}}},
    ])
    c = parse_completion(body)
    assert [t.parsed_arguments() for t in c.tool_calls] == [{"query": "prokura"}, {"query": "x"}]
    assert c.assistant_message()["tool_calls"][0]["function"]["name"] == "search"


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retryable_status_then_success(httpserver: HTTPServer, status: int):
    script = Script(httpserver, Response("busy", status=status), ok(completion("po chwili")))
    sleeps: list[float] = []
    c = run_chat(settings(httpserver.url_for("/v1")), sleeps)
    assert c.content == "po chwili" and c.attempts == 2 and len(script.requests) == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5  # first backoff: jitter in [base/2, base]


def test_retry_after_is_honoured_and_capped(httpserver: HTTPServer):
    Script(httpserver, Response("slow down", status=429, headers={"Retry-After": "3"}),
           Response("slow down", status=429, headers={"Retry-After": "120"}), ok(completion()))
    sleeps: list[float] = []
    run_chat(settings(httpserver.url_for("/v1")), sleeps)
    assert sleeps == [3.0, 4.0]  # the second capped at backoff_max_s


def test_gives_up_after_retries_with_reason(httpserver: HTTPServer):
    script = Script(httpserver, Response(json.dumps({"error": {"message": "overloaded"}}), status=503,
                                         content_type="application/json"))
    with pytest.raises(LLMError) as ei:
        run_chat(settings(httpserver.url_for("/v1"), max_retries=2), [])
    assert len(script.requests) == 3 and ei.value.attempts == 3 and ei.value.status == 503
    assert "overloaded" in str(ei.value) and ei.value.retryable


def test_client_error_is_not_retried(httpserver: HTTPServer):
    script = Script(httpserver, Response(json.dumps({"error": {"message": "unknown model"}}), status=404,
                                         content_type="application/json"))
    with pytest.raises(LLMError) as ei:
        run_chat(settings(httpserver.url_for("/v1")), [])
    assert len(script.requests) == 1 and not ei.value.retryable and "unknown model" in str(ei.value)


def test_malformed_body_is_retried_then_fails(httpserver: HTTPServer):
    script = Script(httpserver, Response("<html>gateway</html>", content_type="text/html"),
                    ok({"choices": []}), ok({"unexpected": True}))
    with pytest.raises(LLMError, match="malformed completion body"):
        run_chat(settings(httpserver.url_for("/v1")), [])
    assert len(script.requests) == 3


def test_timeout_is_retried(httpserver: HTTPServer):
    # the loopback server answers one request at a time: the retry (sent at 1.5 s + a 0.25–0.5 s
    # backoff) waits until the slow handler is done (2.0 s), and its own 1.5 s leave a busy host
    # over a second of slack. With 0.7 / 0.6 s, a fresh clone's suite on a loaded host timed out
    # the connect and the retry too (3 attempts); the connect timeout is not what this tests.
    def slow(_request: Request) -> Response:
        time.sleep(2.0)
        return ok(completion("late"))

    script = Script(httpserver, slow, ok(completion("in time")))
    c = run_chat(settings(httpserver.url_for("/v1"), timeout_s=1.5, connect_timeout_s=5.0), [])
    assert c.content == "in time" and c.attempts == 2 and len(script.requests) == 2


def test_connection_refused_is_retried_then_fails():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    with pytest.raises(LLMError, match="ConnectError") as ei:
        run_chat(settings(f"http://127.0.0.1:{port}/v1", max_retries=1), sleeps)
    assert ei.value.status is None and len(sleeps) == 1


def test_key_never_in_repr_logs_or_errors(httpserver: HTTPServer, caplog, monkeypatch):
    monkeypatch.setenv("LEXPIPE_LLM_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("LEXPIPE_LLM_MODEL", "env-model")
    monkeypatch.setenv("LEXPIPE_LLM_API_KEY", KEY)
    monkeypatch.setenv("LEXPIPE_LLM_MAX_RETRIES", "1")
    s = LLMSettings()
    assert s.model == "env-model" and s.api_key.get_secret_value() == KEY
    assert KEY not in repr(s) and KEY not in str(s) and KEY not in s.model_dump_json()
    Script(httpserver, Response("down", status=500))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(LLMError) as ei:
        run_chat(s.model_copy(update={"backoff_base_s": 0.0}))
    assert KEY not in caplog.text and KEY not in str(ei.value)
    assert "retrying" in caplog.text
    assert KEY not in repr(ChatClient(s))


def test_concurrency_is_capped():
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    async def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.02)
        with lock:
            state["now"] -= 1
        return httpx.Response(200, json=completion())

    async def go():
        s = settings("http://llm.invalid/v1", max_concurrency=3)
        async with ChatClient(s, transport=httpx.MockTransport(handler)) as client:
            await asyncio.gather(*(client.chat([{"role": "user", "content": str(i)}]) for i in range(12)))
            return client.requests_sent

    assert asyncio.run(go()) == 12
    assert state["max"] == 3


def test_lenient_about_accounting_and_content_parts():
    c = parse_completion({"choices": [{"message": {"content": [{"type": "text", "text": "Odp"},
                                                               {"type": "text", "text": "owiedź"}]}}],
                          "usage": "n/a"})
    assert c.content == "Odpowiedź" and c.prompt_tokens == 0 and c.finish_reason is None
