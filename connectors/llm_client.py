"""An OpenAI-compatible chat-completions client over httpx (async), built for batch evaluation.

Why not the ``openai`` SDK: we talk to any compatible server (vLLM, llama.cpp, Ollama, a gateway)
and need exact control of what is retried, how long we wait and how many requests are in flight;
httpx is already a dependency. Why async: a benchmark run is hundreds of mostly-waiting
conversations; an ``asyncio.Semaphore`` caps the requests in flight so we never flood the
endpoint.

Behaviour: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` when a key is
set. 429, 5xx, timeouts and transport errors are retried with exponential backoff and jitter
(``Retry-After`` honoured, capped); other 4xx fail at once (retrying a bad request only burns
quota). A 200 whose body is not a chat completion is retried too (truncating proxies). The key is a
``SecretStr``: it appears in no repr, log line or exception message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Sequence

import httpx
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from connectors.http import parse_retry_after, redact_url

__all__ = ["LLMSettings", "ToolCall", "ChatCompletion", "LLMError", "ChatClient"]

log = logging.getLogger(__name__)

_RETRYABLE_EXC = (httpx.TransportError,)  # timeouts, connect/read errors, protocol errors


class LLMSettings(BaseSettings):
    """Endpoint, model and key of an OpenAI-compatible server (``LEXPIPE_LLM_*`` variables).

    ``base_url`` includes any version prefix (``http://host:8000/v1``). ``max_retries`` counts
    retries after the first attempt. ``max_concurrency`` caps requests in flight per client (and
    questions in flight per agent run).
    """

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_LLM_", extra="ignore")

    base_url: str = Field(..., description="API root, e.g. https://api.openai.com/v1")
    model: str = Field(..., description="model name sent in every request")
    api_key: SecretStr | None = Field(None, description="bearer token; never logged")
    temperature: float = Field(0.0, description="0.0 as in the gAIus paper, for reproducibility")
    max_tokens: int | None = Field(None, description="completion token cap; None = server default")
    timeout_s: float = Field(120.0, description="read/write/pool timeout per request")
    connect_timeout_s: float = Field(10.0, description="TCP/TLS connect timeout")
    max_retries: int = Field(4, ge=0, description="retries on 429/5xx/transport errors")
    backoff_base_s: float = Field(1.0, ge=0)
    backoff_max_s: float = Field(30.0, ge=0)
    max_concurrency: int = Field(4, ge=1, description="requests in flight")
    json_mode: bool = Field(False, description="send response_format=json_object on extraction calls "
                                               "(only if the server supports it)")


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model; ``arguments`` is the raw JSON string it sent."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """Arguments as a dict; raises ``ValueError`` when the model sent something else."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"tool arguments are not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise ValueError(f"tool arguments are {type(value).__name__}, not an object")
        return value

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ChatCompletion:
    """The first choice of a completion: text and/or tool calls, plus what it cost."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to the conversation before sending tool results back."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return msg


class LLMError(Exception):
    """A request that produced no usable completion (after retries, or a non-retryable status)."""

    def __init__(self, reason: str, *, status: int | None = None, attempts: int = 1,
                 retryable: bool = True) -> None:
        self.reason = reason
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        what = "gave up after" if retryable else "failed (not retryable) after"
        last = f"HTTP {status}: {reason}" if status is not None else reason
        super().__init__(f"chat completion {what} {attempts} attempt(s); last: {last}")


class _BadReply(Exception):
    """A 2xx response whose body is not a chat completion."""


def parse_completion(body: Any) -> ChatCompletion:
    """Read the first choice of a chat-completions response body; raises ``_BadReply``."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise _BadReply(f"no choices[0].message ({type(exc).__name__})") from exc
    if not isinstance(message, Mapping):
        raise _BadReply("choices[0].message is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        # Some servers send content parts; keep the text parts.
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        else:
            raise _BadReply(f"content is {type(content).__name__}")
    calls: list[ToolCall] = []
    for i, tc in enumerate(message.get("tool_calls") or ()):
        fn = tc.get("function") if isinstance(tc, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise _BadReply(f"tool_calls[{i}] has no function name")
        args = fn.get("arguments")
        if isinstance(args, (dict, list)):  # some servers send parsed arguments
            args = json.dumps(args, ensure_ascii=False)
        calls.append(ToolCall(id=str(tc.get("id") or f"call_{i}"), name=fn["name"], arguments=args or ""))
    usage = body.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}  # accounting only: never fail a reply on it
    finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
    return ChatCompletion(content=content, tool_calls=tuple(calls), finish_reason=finish,
                          prompt_tokens=_int(usage.get("prompt_tokens")),
                          completion_tokens=_int(usage.get("completion_tokens")))


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


@dataclass
class ChatClient:
    """Async client; use ``async with ChatClient(settings) as client: await client.chat(...)``.

    ``sleep``/``rng`` are injectable so retry tests run instantly and deterministically;
    ``transport`` lets tests plug an ``httpx.MockTransport``. The semaphore and the httpx client
    are created on first use, inside the running event loop.
    """

    settings: LLMSettings
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    transport: httpx.AsyncBaseTransport | None = None

    def __post_init__(self) -> None:
        self.url = self.settings.base_url.rstrip("/") + "/chat/completions"
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self.requests_sent = 0

    def __repr__(self) -> str:  # never show the settings' key, even masked, in reprs of the client
        return f"ChatClient(url={redact_url(self.url)!r}, model={self.settings.model!r})"

    async def __aenter__(self) -> "ChatClient":
        self._ensure()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self._semaphore = None  # bound to this event loop; a later run creates a fresh one

    def _ensure(self) -> httpx.AsyncClient:
        if self._client is None:
            s = self.settings
            timeout = httpx.Timeout(s.timeout_s, connect=s.connect_timeout_s)
            limits = httpx.Limits(max_connections=s.max_concurrency,
                                  max_keepalive_connections=s.max_concurrency)
            self._client = httpx.AsyncClient(timeout=timeout, limits=limits, transport=self.transport)
            self._semaphore = asyncio.Semaphore(s.max_concurrency)
        return self._client

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.api_key is not None and self.settings.api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {self.settings.api_key.get_secret_value()}"
        return headers

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter in [cap/2, cap]."""
        s = self.settings
        cap = min(s.backoff_max_s, s.backoff_base_s * (2 ** (attempt - 1)))
        return cap * (0.5 + 0.5 * self.rng.random())

    async def chat(self, messages: Sequence[Mapping[str, Any]], *,
                   tools: Sequence[Mapping[str, Any]] | None = None,
                   tool_choice: str | Mapping[str, Any] | None = None,
                   response_format: Mapping[str, Any] | None = None,
                   temperature: float | None = None,
                   max_tokens: int | None = None) -> ChatCompletion:
        """One chat completion (first choice). Raises :class:`LLMError` when none was obtained."""
        client = self._ensure()
        assert self._semaphore is not None
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": list(messages),
                                "temperature": s.temperature if temperature is None else temperature}
        if (max_tokens or s.max_tokens) is not None:
            body["max_tokens"] = max_tokens or s.max_tokens
        if tools:
            body["tools"] = list(tools)
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if response_format is not None:
            body["response_format"] = dict(response_format)

        attempts = s.max_retries + 1
        status: int | None = None
        reason = ""
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            async with self._semaphore:
                self.requests_sent += 1
                try:
                    resp = await client.post(self.url, json=body, headers=self._headers())
                except _RETRYABLE_EXC as exc:
                    status, reason = None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                else:
                    status = resp.status_code
                    if resp.is_success:
                        try:
                            completion = parse_completion(resp.json())
                        except (ValueError, _BadReply) as exc:  # JSON decode errors are ValueErrors
                            reason = f"malformed completion body: {exc}"
                        else:
                            return _with_attempts(completion, attempt)
                    else:
                        reason = _error_reason(resp)
                        if not (status == 429 or status >= 500):
                            raise LLMError(reason, status=status, attempts=attempt, retryable=False)
                        retry_after = parse_retry_after(resp.headers.get("retry-after"))
            if attempt == attempts:
                break
            delay = (min(retry_after, s.backoff_max_s) if retry_after is not None
                     else self._backoff(attempt))
            log.warning("chat completion at %s attempt %d/%d failed (%s); retrying in %.2fs",
                        redact_url(self.url), attempt, attempts,
                        f"HTTP {status}" if status is not None else reason, delay)
            await self.sleep(delay)
        raise LLMError(reason, status=status, attempts=attempts)


def _with_attempts(c: ChatCompletion, attempts: int) -> ChatCompletion:
    return ChatCompletion(c.content, c.tool_calls, c.finish_reason, c.prompt_tokens,
                          c.completion_tokens, attempts)


def _error_reason(resp: httpx.Response) -> str:
    """The server's error message (OpenAI ``{"error": {"message": …}}``), else the reason phrase;
    truncated so a huge HTML error page does not flood logs and result files."""
    try:
        err = resp.json().get("error")
        msg = err.get("message") if isinstance(err, Mapping) else err
    except Exception:
        msg = None
    text = str(msg) if msg else (resp.reason_phrase or "")
    return text[:300]
