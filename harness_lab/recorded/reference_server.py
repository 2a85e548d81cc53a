"""ReferenceServer: a local OpenAI-compatible HTTP server playing a scripted conversation.

It exists to exercise the real record path without a provider: the adapters talk HTTP to
it, vcrpy records the exchange, and the cassette then replays with no server at all. It
binds 127.0.0.1 on an ephemeral port, serves ``POST /v1/chat/completions`` from a scripted
sequence (content or tool calls, with usage) and any number of tool API paths for
:class:`~harness_lab.recorded.tool.HttpJsonTool`, and records every request it got.

Like a hosted provider it requires ``Authorization: Bearer <api_key>`` on every path and
answers with an organization header and a cookie, gzip-compressed when the client accepts
it, so a test can prove that cassettes scrub credentials and store decoded bodies.

It checks every request before a scripted reply is consumed, and refuses with an
OpenAI-style error body: 401 (bearer token), 404 (path), 405 (method), 411 (no
``Content-Length``), 400 (a ``Content-Length`` that is not a count, a body that is not a
JSON object or shorter than announced, a chat request without ``model`` and ``messages``),
408 (a body slower than ``read_timeout``), 413 (a body over ``max_body_bytes``), 415 (not
``application/json``), 431 (a header value over ``max_header_bytes``); http.server's own
refusals (a request line that does not parse, 414, 501) get the same JSON shape. It listens
with a deep backlog and one daemon thread per connection (at most ``MAX_CONNECTIONS`` at
once: idle connections cannot pile up threads), and keeps only the last
``keep_requests`` requests (at most ``keep_bytes`` of bodies); ``received`` and ``rejected``
count all of them.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from harness_lab.background_http import LISTEN_BACKLOG, BackgroundHTTPServer, ServedOverHTTP

__all__ = [
    "LISTEN_BACKLOG",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "READ_TIMEOUT_S",
    "RawResponse",
    "ReceivedRequest",
    "ReferenceServer",
    "RequestLog",
    "ScriptedCompletion",
    "ScriptedToolCall",
    "ToolRoute",
    "completion",
    "error_response",
    "json_completion",
    "tool_call_completion",
]


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """One function call in a scripted completion; ``id`` defaults to ``call_<n>``."""

    name: str
    arguments: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ScriptedCompletion:
    """One scripted chat completion: content and/or tool calls, with token usage."""

    content: str | None = None
    tool_calls: Sequence[ScriptedToolCall] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None

    def body(self, model: str, n: int) -> dict[str, Any]:
        """The completion as the JSON body of the ``n``-th answer (1-based)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id or f"call_{n}_{i}", "type": "function",
                 "function": {"name": call.name,
                              "arguments": json.dumps(dict(call.arguments), sort_keys=True)}}
                for i, call in enumerate(self.tool_calls)]
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        return {"id": f"chatcmpl-reference-{n}", "object": "chat.completion", "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": self.prompt_tokens,
                          "completion_tokens": self.completion_tokens,
                          "total_tokens": self.prompt_tokens + self.completion_tokens}}


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A response sent byte for byte: a scripted error or a malformed body."""

    status: int = 500
    body: bytes | str = b""
    content_type: str = "application/json"

    def payload(self) -> bytes:
        """The body as bytes."""
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


ToolRoute = Mapping[str, Any] | RawResponse | Callable[[Any], Mapping[str, Any] | RawResponse]
"""What a tool path answers: a fixed JSON body, a raw response, or ``fn(scope)``."""


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request the server got, and the status it was answered with (0: not yet)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    status: int = 0

    @property
    def json(self) -> Any:
        """The body decoded as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None


def completion(content: str, *, usage: tuple[int, int] = (0, 0)) -> ScriptedCompletion:
    """A completion answering ``content``; ``usage`` is (prompt, completion) tokens."""
    return ScriptedCompletion(content, prompt_tokens=usage[0], completion_tokens=usage[1])


def json_completion(payload: Mapping[str, Any], *, usage: tuple[int, int] = (0, 0)
                    ) -> ScriptedCompletion:
    """A completion whose content is ``payload`` as JSON text."""
    return completion(json.dumps(payload, sort_keys=True), usage=usage)


def tool_call_completion(name: str, arguments: Mapping[str, Any] | None = None, *,
                         call_id: str | None = None,
                         content: str | Mapping[str, Any] | None = None,
                         usage: tuple[int, int] = (0, 0)) -> ScriptedCompletion:
    """A completion calling one tool; ``content`` (text or a JSON object) goes beside it."""
    text = json.dumps(content, sort_keys=True) if isinstance(content, Mapping) else content
    return ScriptedCompletion(text, (ScriptedToolCall(name, dict(arguments or {}), call_id),),
                              prompt_tokens=usage[0], completion_tokens=usage[1])


def error_response(status: int, message: str, *, type_: str = "server_error") -> RawResponse:
    """An OpenAI-style error body with ``status``."""
    return RawResponse(status, json.dumps({"error": {"message": message, "type": type_}}))


class RequestLog:
    """The last requests a server got: at most ``keep`` of them and ``keep_bytes`` of bodies.

    Iterates oldest first and supports ``len`` and indexing like a list.
    """

    def __init__(self, keep: int, keep_bytes: int) -> None:
        self.keep = keep
        self.keep_bytes = keep_bytes
        self._items: deque[ReceivedRequest] = deque()
        self._bytes = 0

    def append(self, request: ReceivedRequest) -> None:
        """Keep ``request``, dropping the oldest ones beyond the bounds."""
        self._items.append(request)
        self._bytes += len(request.body)
        while self._items and (len(self._items) > self.keep or self._bytes > self.keep_bytes):
            self._bytes -= len(self._items.popleft().body)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[ReceivedRequest]:
        return iter(list(self._items))

    def __getitem__(self, index: int) -> ReceivedRequest:
        return self._items[index]


MAX_BODY_BYTES = 1024 * 1024
"""The largest request body the reference server reads by default (1 MiB)."""

MAX_HEADER_BYTES = 8 * 1024
"""The longest header value it accepts by default."""

READ_TIMEOUT_S = 5.0
"""How long it waits for a request's headers or body by default."""

MAX_CONNECTIONS = 256
"""Connections served at once (one thread each); the next wait in the backlog."""


class ReferenceServer(ServedOverHTTP):
    """An OpenAI-compatible server on 127.0.0.1 playing ``responses`` in order.

    ``tools`` maps a path (``"/tools/logs"``) to what it answers. Once the script is used
    up, a chat request gets HTTP 500. ``requests`` holds the last ``keep_requests``
    requests received, in order; malformed ones are refused (see the module doc) and never
    consume a scripted reply.
    """

    __test__ = False

    def __init__(self, responses: Sequence[ScriptedCompletion | RawResponse], *,
                 tools: Mapping[str, ToolRoute] | None = None,
                 api_key: str = "reference-key", chat_path: str = "/v1/chat/completions",
                 compress: bool = True, organization: str = "org-reference0001",
                 cookie: str = "reference_sid=cookie0001; Path=/",
                 max_body_bytes: int = MAX_BODY_BYTES,
                 max_header_bytes: int = MAX_HEADER_BYTES,
                 read_timeout: float = READ_TIMEOUT_S, keep_requests: int = 1000,
                 keep_bytes: int = 16 * 1024 * 1024) -> None:
        self.responses = tuple(responses)
        self.tools = dict(tools or {})
        self.api_key = api_key
        self.chat_path = chat_path
        self.compress = compress
        self.organization = organization
        self.cookie = cookie
        self.max_body_bytes = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.read_timeout = read_timeout
        self.requests = RequestLog(keep_requests, keep_bytes)
        self.received = 0
        self.rejected = 0
        self.used = 0
        self._lock = threading.Lock()
        self._server = BackgroundHTTPServer(_handler(self), name="reference server",
                                            max_connections=MAX_CONNECTIONS)

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL of the tool paths."""
        return self.url

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``) for OpenAICompatibleClient."""
        prefix = self.chat_path.removesuffix("/chat/completions")
        return f"{self.root_url}{prefix}"

    @property
    def remaining(self) -> int:
        """Scripted completions not yet served."""
        return len(self.responses) - self.used

    @property
    def chat_requests(self) -> list[ReceivedRequest]:
        """The chat completion requests received, in order."""
        return [r for r in self.requests if r.path == self.chat_path]

    # -- answering ----------------------------------------------------------------------------

    def answer(self, request: ReceivedRequest) -> tuple[int, bytes, str]:
        """(status, body, content type) for one request; called by the handler thread.

        A request that fails a check (see the module doc) is answered with its error and
        never consumes a scripted reply.
        """
        with self._lock:
            self.received += 1
            refused = self._refusal(request)
            answer = refused if refused is not None else self._route(request)
            if answer[0] >= 400 and refused is not None:
                self.rejected += 1
            self.requests.append(ReceivedRequest(request.method, request.path,
                                                 request.headers, request.body, answer[0]))
            return answer

    def refuse(self, request: ReceivedRequest, status: int, message: str
               ) -> tuple[int, bytes, str]:
        """Log ``request`` as refused by the connection layer and give its error answer."""
        with self._lock:
            self.received += 1
            self.rejected += 1
            self.requests.append(ReceivedRequest(request.method, request.path,
                                                 request.headers, request.body, status))
        return _error(status, message, "invalid_request_error")

    def _refusal(self, request: ReceivedRequest) -> tuple[int, bytes, str] | None:
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "missing or invalid bearer token", "invalid_request_error")
        if request.path != self.chat_path and request.path not in self.tools:
            return _error(404, f"no route {request.path}", "invalid_request_error")
        if request.method != "POST":
            return _error(405, f"{request.method} is not allowed; use POST",
                          "invalid_request_error")
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return _error(415, f"content type {media or '(none)'!r} is not accepted; send "
                               "application/json", "invalid_request_error")
        try:
            data = json.loads(request.body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _error(400, f"the body is not JSON: {exc}", "invalid_request_error")
        if not isinstance(data, dict):
            return _error(400, f"the body must be a JSON object, not {type(data).__name__}",
                          "invalid_request_error")
        if request.path == self.chat_path:
            return _chat_refusal(data)
        return None

    def _route(self, request: ReceivedRequest) -> tuple[int, bytes, str]:
        if request.path == self.chat_path:
            return self._chat(request)
        return self._tool(self.tools[request.path], request)

    def _chat(self, request: ReceivedRequest) -> tuple[int, bytes, str]:
        if self.used >= len(self.responses):
            return _error(500, f"reference server: script exhausted after {self.used} "
                               "completion(s)", "server_error")
        self.used += 1
        scripted = self.responses[self.used - 1]
        if isinstance(scripted, RawResponse):
            return scripted.status, scripted.payload(), scripted.content_type
        data = request.json
        model = data.get("model", "reference") if isinstance(data, Mapping) else "reference"
        return 200, _encode(scripted.body(str(model), self.used)), "application/json"

    def _tool(self, route: ToolRoute, request: ReceivedRequest) -> tuple[int, bytes, str]:
        answer = route(request.json) if callable(route) else route
        if isinstance(answer, RawResponse):
            return answer.status, answer.payload(), answer.content_type
        return 200, _encode(answer), "application/json"


def _encode(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _error(status: int, message: str, type_: str) -> tuple[int, bytes, str]:
    return status, _encode({"error": {"message": message, "type": type_}}), "application/json"


def _chat_refusal(data: Mapping[str, Any]) -> tuple[int, bytes, str] | None:
    """Why a chat completion body is refused (OpenAI's required fields), or None."""
    if not isinstance(data.get("model"), str) or not data["model"]:
        return _error(400, "`model` is required and must be a string", "invalid_request_error")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        return _error(400, "`messages` is required and must be a non-empty list",
                      "invalid_request_error")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            return _error(400, f"messages[{i}] must be an object with a `role`",
                          "invalid_request_error")
    return None


_COUNT = re.compile(r"[0-9]{1,18}")


class _Refused(Exception):
    """A request refused while its body is read: (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _handler(server: ReferenceServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Reads one request, lets the ReferenceServer answer it, writes the response."""

        timeout = server.read_timeout  # applies to reading the headers and the body

        def _body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                raise _Refused(411, "chunked bodies are not accepted; send Content-Length")
            raw = self.headers.get("Content-Length")
            if raw is None:
                if self.command in ("POST", "PUT", "PATCH"):
                    raise _Refused(411, "Content-Length is required")
                return b""
            if not _COUNT.fullmatch(raw.strip()):
                raise _Refused(400, f"Content-Length {raw[:40]!r} is not a byte count")
            length = int(raw)
            if length > server.max_body_bytes:
                raise _Refused(413, f"the body of {length} bytes is over the limit of "
                                    f"{server.max_body_bytes} bytes")
            chunks: list[bytes] = []
            left = length
            try:
                while left:
                    chunk = self.rfile.read1(min(left, 65536))  # type: ignore[attr-defined]
                    if not chunk:
                        raise _Refused(400, f"the body ended after {length - left} of "
                                            f"{length} bytes")
                    chunks.append(chunk)
                    left -= len(chunk)
            except TimeoutError:
                raise _Refused(408, f"the body stopped after {length - left} of {length} "
                                    f"bytes for {server.read_timeout:g} s") from None
            return b"".join(chunks)

        def _serve(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            long = [k for k, v in headers.items() if len(v) > server.max_header_bytes]
            try:
                if long:
                    raise _Refused(431, f"header {long[0]!r} is over "
                                        f"{server.max_header_bytes} bytes")
                body = self._body()
            except _Refused as refused:
                self.close_connection = True
                self._send(*server.refuse(ReceivedRequest(self.command, path, headers, b""),
                                          refused.status, refused.message), gzip_ok=False)
                self._drain()
                return
            try:
                status, payload, content_type = server.answer(
                    ReceivedRequest(self.command, path, headers, body))
            except Exception as exc:  # noqa: BLE001 - a failing tool route answers 500, never hangs
                status, payload, content_type = _error(
                    500, f"reference server: {type(exc).__name__}: {exc}", "server_error")
            self._send(status, payload, content_type,
                       gzip_ok="gzip" in headers.get("accept-encoding", ""))

        def send_error(self, code: int, message: str | None = None,
                       explain: str | None = None) -> None:
            """Refusals of http.server itself (a request line that does not parse, too many
            or too long headers, an unsupported method) as JSON errors with a status line."""
            if self.request_version == "HTTP/0.9":
                self.request_version = "HTTP/1.0"  # answer garbage with a real status line
            self.close_connection = True
            path = (getattr(self, "path", "") or "").split("?", 1)[0]
            reason = message or HTTPStatus(code).phrase
            self._send(*server.refuse(ReceivedRequest(getattr(self, "command", "") or "", path,
                                                      {}, b""), int(code), reason),
                       gzip_ok=False)

        def _drain(self) -> None:
            """Read what the client already sent (bounded, briefly), so that closing the
            connection does not reset it before it reads the refusal."""
            self.connection.settimeout(0.05)
            left = server.max_body_bytes
            try:
                while left > 0:
                    chunk = self.rfile.read1(min(left, 65536))  # type: ignore[attr-defined]
                    if not chunk:
                        return
                    left -= len(chunk)
            except OSError:
                return

        def _send(self, status: int, payload: bytes, content_type: str, *,
                  gzip_ok: bool) -> None:
            if server.compress and gzip_ok:
                payload = gzip.compress(payload, mtime=0)
                encoding: str | None = "gzip"
            else:
                encoding = None
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("OpenAI-Organization", server.organization)
            self.send_header("Set-Cookie", server.cookie)
            self.send_header("X-Request-Id", f"req-{server.received}")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client left; nothing to tell it

        do_POST = _serve  # noqa: N815 - http.server's naming
        do_GET = _serve  # noqa: N815
        do_PUT = _serve  # noqa: N815
        do_PATCH = _serve  # noqa: N815
        do_DELETE = _serve  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Stay quiet: tests read ``server.requests`` instead of a log."""

    return Handler
