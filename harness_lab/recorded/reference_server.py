"""ReferenceServer: a local OpenAI-compatible HTTP server playing a scripted conversation.

It exists to exercise the real record path without a provider: the adapters talk HTTP to
it, vcrpy records the exchange, and the cassette then replays with no server at all. It
binds 127.0.0.1 on an ephemeral port, serves ``POST /v1/chat/completions`` from a scripted
sequence (content or tool calls, with usage) and any number of tool API paths for
:class:`~harness_lab.recorded.tool.HttpJsonTool`, and records every request it got.

Like a hosted provider it requires ``Authorization: Bearer <api_key>`` on every path and
answers with an organization header and a cookie, gzip-compressed when the client accepts
it, so a test can prove that cassettes scrub credentials and store decoded bodies.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "RawResponse",
    "ReceivedRequest",
    "ReferenceServer",
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
    """One request the server got."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

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


class ReferenceServer:
    """An OpenAI-compatible server on 127.0.0.1 playing ``responses`` in order.

    ``tools`` maps a path (``"/tools/logs"``) to what it answers. Once the script is used
    up, a chat request gets HTTP 500. ``requests`` lists every request received, in order.
    """

    __test__ = False

    def __init__(self, responses: Sequence[ScriptedCompletion | RawResponse], *,
                 tools: Mapping[str, ToolRoute] | None = None,
                 api_key: str = "reference-key", chat_path: str = "/v1/chat/completions",
                 compress: bool = True, organization: str = "org-reference0001",
                 cookie: str = "reference_sid=cookie0001; Path=/") -> None:
        self.responses = tuple(responses)
        self.tools = dict(tools or {})
        self.api_key = api_key
        self.chat_path = chat_path
        self.compress = compress
        self.organization = organization
        self.cookie = cookie
        self.requests: list[ReceivedRequest] = []
        self.used = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> ReferenceServer:
        """Bind an ephemeral port on 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            return self
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,),
                                        name="reference-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        if self._httpd is None:
            raise RuntimeError("the reference server is not running")
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL of the tool paths."""
        return f"http://127.0.0.1:{self.port}"

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
        """(status, body, content type) for one request; called by the handler thread."""
        with self._lock:
            self.requests.append(request)
            if request.headers.get("authorization") != f"Bearer {self.api_key}":
                return _error(401, "missing or invalid bearer token", "invalid_request_error")
            if request.method != "POST":
                return _error(405, f"{request.method} is not allowed", "invalid_request_error")
            if request.path == self.chat_path:
                return self._chat(request)
            if request.path in self.tools:
                return self._tool(self.tools[request.path], request)
            return _error(404, f"no route {request.path}", "invalid_request_error")

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


def _handler(server: ReferenceServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Reads one request, lets the ReferenceServer answer it, writes the response."""

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            status, payload, content_type = server.answer(
                ReceivedRequest(self.command, path, headers, body))
            if server.compress and "gzip" in headers.get("accept-encoding", ""):
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
            self.send_header("X-Request-Id", f"req-{len(server.requests)}")
            self.end_headers()
            self.wfile.write(payload)

        do_POST = _serve  # noqa: N815 - http.server's naming
        do_GET = _serve  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Stay quiet: tests read ``server.requests`` instead of a log."""

    return Handler
