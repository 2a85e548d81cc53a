"""A small, synchronous client for OpenAI-compatible ``/chat/completions`` endpoints.

It speaks the subset the adapters need (messages, function tools, JSON output, usage) to a
hosted provider or to a local server (llama.cpp, vLLM, Ollama, the reference server). The
request body is serialized with sorted keys and no whitespace, so the same call always sends
the same bytes and a recording matches it. Every failure is a
:class:`~harness_lab.errors.ProviderError` carrying the HTTP status when there was one.
"""

from __future__ import annotations

import functools
import json
import os
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness_lab.bounded_json import JsonInputError, NotJsonError, parse_json
from harness_lab.errors import ProviderError
from harness_lab.ports import TokenUsage
from harness_lab.recorded.divergence import preview

__all__ = ["ChatCompletion", "ChatToolCall", "DEFAULT_BASE_URL", "JsonEndpoint",
           "OpenAICompatibleClient", "encode_body", "http_client", "parse_completion",
           "preview", "shared_ssl_context"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""The hosted OpenAI API, used by :meth:`OpenAICompatibleClient.from_env` by default."""


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The one TLS context of this process: certificate verification against certifi's CA
    bundle, as httpx sets it up when it ignores the environment.

    Loading the CA bundle costs about 20 ms, which every new ``httpx.Client`` otherwise pays
    again, though a replayed run never opens a connection. A context is safe to share
    between clients and threads; it is created on first use.
    """
    return httpx.create_ssl_context(trust_env=False)


def http_client() -> httpx.Client:
    """A new ``httpx.Client`` that ignores proxy and certificate environment variables and
    verifies TLS with :func:`shared_ssl_context`: what a scenario's recorded components use,
    whether they replay a cassette or record one."""
    return httpx.Client(trust_env=False, verify=shared_ssl_context())


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a JSON request body: sorted keys, compact, UTF-8."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


class JsonEndpoint:
    """What POSTs canonical JSON over an ``httpx.Client``: the one given (left open) or its
    own, which :meth:`close` closes."""

    timeout_s: float

    def __init__(self, http_client: httpx.Client | None) -> None:
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client()

    @property
    def url(self) -> str:
        """The URL every request is POSTed to."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_http:
            self._http.close()

    def _post(self, body: bytes, headers: Mapping[str, str], what: str,
              error: type[Exception]) -> httpx.Response:
        """POST ``body`` to :attr:`url`; a timeout or transport failure is ``error`` saying
        ``what`` failed."""
        try:
            return self._http.post(self.url, content=body, headers=dict(headers),
                                   timeout=self.timeout_s)
        except httpx.TimeoutException as exc:
            raise error(f"{what} timed out after {self.timeout_s}s ({type(exc).__name__}) "
                        f"at {self.url}") from exc
        except httpx.HTTPError as exc:
            raise error(f"{what} transport error at {self.url}: {type(exc).__name__}: "
                        f"{exc}") from exc


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """One function call the model asked for; ``arguments`` is the decoded JSON object."""

    name: str
    arguments: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatCompletion:
    """The parts of one chat completion the adapters use."""

    content: str | None
    tool_calls: tuple[ChatToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    model: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def usage(self) -> TokenUsage:
        """The token usage as the harness counts it."""
        return TokenUsage(self.prompt_tokens, self.completion_tokens)


class OpenAICompatibleClient(JsonEndpoint):
    """POSTs chat completions to ``{base_url}/chat/completions``.

    ``base_url`` includes the API version prefix (``https://api.openai.com/v1``,
    ``http://127.0.0.1:8080/v1``). ``api_key`` is sent as ``Authorization: Bearer``,
    ``organization`` as ``OpenAI-Organization``; local servers usually need neither. Give
    ``http_client`` to control transport, proxies or pooling; the client then does not
    close it. ``seed`` is forwarded when set (providers that honour it sample repeatably).
    """

    def __init__(self, base_url: str, *, api_key: str | None = None,
                 model: str = "gpt-4o-mini", timeout_s: float = 30.0,
                 http_client: httpx.Client | None = None, organization: str | None = None,
                 seed: int | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.seed = seed
        self._api_key = api_key
        self._organization = organization
        super().__init__(http_client)

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient({self.base_url!r}, model={self.model!r})"

    @classmethod
    def from_env(cls, base_url: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
                 base_url_env: str = "OPENAI_BASE_URL", organization_env: str | None = None,
                 model: str = "gpt-4o-mini", **kw: Any) -> OpenAICompatibleClient:
        """A client whose key (and, unless given, base URL) come from environment variables.

        A missing key variable means no ``Authorization`` header, which is what replay from
        a cassette and most local servers need. The base URL defaults to ``$OPENAI_BASE_URL``,
        else ``https://api.openai.com/v1``.
        """
        url = base_url or os.environ.get(base_url_env) or DEFAULT_BASE_URL
        organization = os.environ.get(organization_env) if organization_env else None
        return cls(url, api_key=os.environ.get(api_key_env) or None, model=model,
                   organization=organization, **kw)

    @property
    def url(self) -> str:
        """The chat completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def headers(self) -> dict[str, str]:
        """The request headers (with the credentials, which cassettes never store)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        if self._organization:
            headers["OpenAI-Organization"] = self._organization
        return headers

    def request_body(self, messages: Sequence[Mapping[str, Any]], *,
                     tools: Sequence[Mapping[str, Any]] | None = None,
                     json_output: bool = False, tool_choice: str | None = None,
                     max_tokens: int | None = None) -> dict[str, Any]:
        """The JSON body of one call: always ``temperature=0``; tools only when given."""
        body: dict[str, Any] = {"model": self.model,
                                "messages": [dict(m) for m in messages],
                                "temperature": 0}
        if tools:
            body["tools"] = [dict(t) for t in tools]
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if json_output:
            body["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def complete(self, messages: Sequence[Mapping[str, Any]], *,
                 tools: Sequence[Mapping[str, Any]] | None = None, json_output: bool = False,
                 tool_choice: str | None = None, max_tokens: int | None = None
                 ) -> ChatCompletion:
        """Send one chat completion and parse the first choice; raise ProviderError."""
        body = self.request_body(messages, tools=tools, json_output=json_output,
                                 tool_choice=tool_choice, max_tokens=max_tokens)
        response = self._post(encode_body(body), self.headers(), "chat completion", ProviderError)
        return parse_completion(response, self.url)


def parse_completion(response: httpx.Response, url: str) -> ChatCompletion:
    """A ChatCompletion from an HTTP response, or ProviderError naming what is wrong."""
    status = response.status_code
    if status >= 400:
        raise ProviderError(f"chat completion failed: HTTP {status} from {url}: "
                            f"{_error_message(response)}", status=status)
    bad = functools.partial(_bad_completion, url, status)
    try:
        # 128-bit integers: a usage past what a store holds is the store's to refuse
        data = parse_json(response.text, source=url, wide_ints=True)
    except NotJsonError as exc:
        raise bad(f" is not JSON: {preview(response.text)}") from exc
    except JsonInputError as exc:  # JSON past the bounded reader's limits
        raise bad(f" is JSON this toolkit does not read: {exc.message}") from exc
    if not isinstance(data, Mapping):
        raise bad(" is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise bad(" has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise bad(" has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise bad(": content is not text")
    raw_usage = data.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    return ChatCompletion(
        content=content,
        tool_calls=_tool_calls(message.get("tool_calls"), bad),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason"),
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        raw=data,
    )


def _bad_completion(url: str, status: int, what: str) -> ProviderError:
    return ProviderError(f"chat completion from {url}{what}", status=status)


def _tool_calls(raw: Any, bad: Callable[[str], ProviderError]) -> tuple[ChatToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad(": tool_calls is not a list")
    calls = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise bad(f": tool_calls[{i}] has no function name")
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = (parse_json(arguments, source=f"tool_calls[{i}]")
                             if arguments.strip() else {})
            except JsonInputError as exc:
                raise bad(f": tool_calls[{i}] ({function['name']}) arguments are not JSON: "
                          f"{preview(function.get('arguments'))}") from exc
        elif arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise bad(f": tool_calls[{i}] ({function['name']}) arguments are not a JSON object")
        call_id = call.get("id")
        calls.append(ChatToolCall(function["name"], dict(arguments),
                                  call_id if isinstance(call_id, str) and call_id else None))
    return tuple(calls)


def _error_message(response: httpx.Response) -> str:
    try:
        data = parse_json(response.text, source="the error body")
    except JsonInputError:
        return preview(response.text) or response.reason_phrase
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return preview(response.text)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

