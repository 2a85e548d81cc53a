"""ProvidersServer: scripted providers as a real HTTP server on a local port.

It answers the paths the harness's adapters call (``POST /v1/chat/completions``,
``POST /tools/{name}`` and other tool paths, ``POST /retriever``) from a script (see
:mod:`harness_lab.scripted`): a scenario's providers, the chat callers told apart by their
system prompt, a scripted failure a real HTTP error, an oversize tool result a really
oversize body; or a scripted conversation, which :class:`ReferenceServer` serves as a hosted
provider would (a bearer token on every path, a read timeout, a cap on connections).

Each answer is delayed by its scripted latency times ``time_scale`` (really slept). With
``compensate`` the harness's own time between one answer and its next call (what the
simulation counts as no time at all) is taken off the next call's sleep, so the harness's
clock sees the scripted timeline whenever its own work between two calls is shorter than the
next call's latency; each ``arrived`` event says that time (``own_s``).

Every request is checked before it can consume a scripted reply; a bad one is refused with
an OpenAI-style error body (``{"error": {"message": ..., "type": ...}}``), http.server's own
refusals included (the statuses: ``docs/recording.md``). Like a hosted provider, it answers
with an organization header and a cookie, gzip-compressed when the client accepts it, so a
test can prove that cassettes scrub credentials and store decoded bodies. It keeps the last
``keep_requests`` requests (at most ``keep_bytes`` of bodies) and the last
:data:`KEEP_EVENTS` events; ``received`` and ``rejected`` count all of them, ``seen`` all the
events. Its control paths (``/_script``, ``/_events``, ``/_hold``, ``/_release``, ``/_run``)
let a driver load a scenario and act at a lifecycle point: see ``docs/conform.md``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import re
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from harness_lab.background_http import BackgroundHTTPServer
from harness_lab.bounded_json import JsonInputError, parse_json
from harness_lab.scenarios.spec import Scenario
from harness_lab.scripted.answer import (
    CHAT_PATH,
    RETRIEVER_PATH,
    TOOL_PREFIX,
    Answer,
    encode,
    error_body,
)
from harness_lab.scripted.conversation import Conversation, ScriptedCompletion, ToolRoute
from harness_lab.scripted.scenario import ScriptedProviders, ScriptError, classify_chat, load_script

__all__ = ["HOLD_LIMIT_S", "KEEP_EVENTS", "MAX_BODY_BYTES", "MAX_CONNECTIONS", "MAX_HEADER_BYTES",
           "READ_TIMEOUT_S", "Hold", "ProvidersServer", "ReceivedRequest", "ReferenceServer",
           "RequestLog", "Script"]

MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body read by default (a scenario's content included)."""
MAX_HEADER_BYTES = 8 * 1024
"""The longest header value accepted by default."""
READ_TIMEOUT_S = 5.0
"""How long a :class:`ReferenceServer` waits for a request's headers or body."""
MAX_CONNECTIONS = 256
"""Connections a :class:`ReferenceServer` serves at once (one thread each); the next wait in
the backlog."""
KEEP_EVENTS = 10_000
"""The events kept (at least): the oldest go first."""
HOLD_LIMIT_S = 120.0
"""A held call is let go after this long even if nobody releases it."""

_Reply = tuple[int, bytes, str]
"""(status, body, content type)."""


Script = ScriptedProviders | Conversation
"""What a :class:`ProvidersServer` plays: each ``serves(path)`` and ``answer(path, body)``."""


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
            return parse_json(self.body.decode("utf-8"), source="the request body")
        except (JsonInputError, UnicodeDecodeError):
            return None


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


@dataclass(slots=True)
class Hold:
    """A call to hold: ``when`` (before/after) the ``n``-th ``call`` (of ``tool``)."""

    id: int
    when: str
    call: str
    n: int
    tool: str | None = None
    released: threading.Event = field(default_factory=threading.Event)
    hit: bool = False
    limit_s: float = HOLD_LIMIT_S
    """The longest the call is held: then it goes on, released or not."""

    def matches(self, when: str, *, kind: str, ordinal: int, name: str, name_ordinal: int
                ) -> bool:
        """Whether this hold is for the call described."""
        if self.hit or when != self.when or kind != self.call:
            return False
        if self.tool is not None:
            return name == self.tool and name_ordinal == self.n
        return ordinal == self.n


class _Refused(Exception):  # noqa: N818
    """A request refused: (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str, type_: str = "invalid_request_error") -> _Reply:
    return status, encode(error_body(message, type_)), "application/json"


class ProvidersServer(BackgroundHTTPServer):
    """Scripted providers on an HTTP port: a scenario's (or a scripted conversation), given
    now or loaded later. ``port=0`` takes a free port. Use as a context manager, or
    ``start``/``stop``.

    ``api_key`` (None: none asked) is the bearer token every request must carry;
    ``read_timeout`` (None: none) bounds the wait for a request's headers and body;
    ``max_connections`` (None: no cap) the connections served at once.
    """

    __test__ = False

    def __init__(self, script: Scenario | Script | None = None, *, port: int = 0,
                 host: str = "127.0.0.1", time_scale: float = 1.0, compensate: bool = False,
                 api_key: str | None = None, read_timeout: float | None = None,
                 max_connections: int | None = None, max_body_bytes: int = MAX_BODY_BYTES,
                 max_header_bytes: int = MAX_HEADER_BYTES, keep_requests: int = 1000,
                 keep_bytes: int = 16 * 1024 * 1024, name: str = "providers server") -> None:
        self.script: Script | None = (ScriptedProviders(script) if isinstance(script, Scenario)
                                      else script)
        self.time_scale = time_scale
        self.compensate = compensate
        self.api_key = api_key
        self.read_timeout = read_timeout
        self.max_body_bytes = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.requests = RequestLog(keep_requests, keep_bytes)
        self.received = 0
        self.rejected = 0
        self.events: list[dict[str, Any]] = []  # the last of them; ``seen`` in all
        self.seen = 0
        self.holds: list[Hold] = []
        self._counts: dict[str, int] = {}
        self._last_done: float | None = None
        self._cond = threading.Condition()
        super().__init__(_handler(self), name=name, host=host, port=port,
                         max_connections=max_connections)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``) of the chat path."""
        return f"{self.url}{CHAT_PATH.removesuffix('/chat/completions')}"

    @property
    def chat_requests(self) -> list[ReceivedRequest]:
        """The chat completion requests received (and still kept), in order."""
        return [r for r in self.requests if r.path == CHAT_PATH]

    # -- lifecycle ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Release every hold, stop serving and free the port."""
        self.release()
        super().stop()

    # -- control ------------------------------------------------------------------------------

    def load(self, scenario: Scenario, *, turn: int | None = None,
             time_scale: float | None = None) -> int:
        """Play ``scenario``'s providers from now on; the events seen so far are kept.

        Returns the number of the last event before the load (a driver waits after it).
        """
        providers = ScriptedProviders(scenario, turn=turn)
        with self._cond:
            self.release()
            self.holds = []
            self.script = providers
            self._counts = {}
            self._last_done = None
            if time_scale is not None:
                self.time_scale = time_scale
            return self.seen

    def run_started(self, at: float | None = None) -> None:
        """The run being played started at ``at`` (``time.monotonic``; default now): with
        ``compensate``, the harness's time before its first call is counted from there."""
        with self._cond:
            if self._last_done is None and not self._counts:
                self._last_done = time.monotonic() if at is None else at

    def hold(self, when: str, call: str, n: int, tool: str | None = None, *,
             limit_s: float = HOLD_LIMIT_S) -> Hold:
        """Hold the call described until :meth:`release`, or ``limit_s`` at the most."""
        with self._cond:
            hold = Hold(len(self.holds) + 1, when, call, n, tool, limit_s=limit_s)
            self.holds.append(hold)
            return hold

    def release(self, hold_id: int | None = None) -> int:
        """Let a held call (every one when ``hold_id`` is None) go on; how many were let go."""
        with self._cond:
            chosen = [h for h in self.holds if hold_id is None or h.id == hold_id]
        for hold in chosen:
            hold.released.set()
        return len(chosen)

    def events_after(self, after: int, wait_s: float = 0.0) -> list[dict[str, Any]]:
        """The events numbered above ``after``, waiting up to ``wait_s`` for one."""
        with self._cond:
            self._cond.wait_for(lambda: self.seen > after, max(0.0, wait_s))
            return [dict(e) for e in self.events[max(0, after - self.seen + len(self.events)):]]

    def describe(self) -> dict[str, Any]:
        """What is loaded: the scenario's name, tools (paths, flags) and configuration."""
        providers = self.script
        if not isinstance(providers, ScriptedProviders):
            return {"scenario": None, "time_scale": self.time_scale}
        sc = providers.scenario
        return {"scenario": sc.name, "turn": providers.turn, "time_scale": self.time_scale,
                "tools": {name: {"path": f"{TOOL_PREFIX}{name}", "evidence": t.evidence,
                                 "read_only": t.read_only, "required": list(t.required)}
                          for name, t in sc.tools.items()},
                "config": sc.config.model_dump(mode="json"),
                "events": self.seen}

    # -- answering a request --------------------------------------------------------------------

    def answer(self, request: ReceivedRequest, query: str = "") -> _Reply:
        """(status, body, content type) for one request; called by the handler thread.

        A request that fails a check (see the module doc) is answered with its error and
        never consumes a scripted reply.
        """
        with self._cond:
            self.received += 1
        script = self.script
        refused = True
        try:
            body = self._checked(request, script)
            refused = False
            if request.path.startswith("/_"):
                reply = self._control(request.method, request.path, query, body)
            else:
                assert script is not None
                answer = self._provide(script, request.path, body)
                reply = answer.status, answer.payload(), answer.content_type
        except _Refused as exc:
            reply = _error(exc.status, exc.message)
        with self._cond:
            self.rejected += refused
            self.requests.append(dataclasses.replace(request, status=reply[0]))
        return reply

    def refuse(self, request: ReceivedRequest, status: int, message: str) -> _Reply:
        """Log ``request`` as refused by the connection layer and give its error answer."""
        with self._cond:
            self.received += 1
            self.rejected += 1
            self.requests.append(dataclasses.replace(request, status=status))
        return _error(status, message)

    def _checked(self, request: ReceivedRequest, script: Script | None) -> Mapping[str, Any]:
        """The request's body as a JSON object; _Refused when a check fails."""
        path = request.path
        if self.api_key is not None and (
                request.headers.get("authorization") != f"Bearer {self.api_key}"):
            raise _Refused(401, "missing or invalid bearer token")
        if path.startswith("/_"):
            if not request.body:
                return {}
        else:
            if script is None or not script.serves(path):
                raise _Refused(404, f"no route {path}" + (
                    "" if script is not None else " (no script is loaded: PUT /_script)"))
            if request.method != "POST":
                raise _Refused(405, f"{request.method} is not allowed; use POST")
            media = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                raise _Refused(415, f"content type {media or '(none)'!r} is not accepted; "
                                    "send application/json")
        try:
            data = parse_json(request.body.decode("utf-8"), source="the body")
        except UnicodeDecodeError as exc:
            raise _Refused(400, f"the body is not JSON: {exc}") from None
        except JsonInputError as exc:  # not JSON, or past the bounded reader's limits
            raise _Refused(400, str(exc)) from None
        if not isinstance(data, dict):
            raise _Refused(400, f"the body must be a JSON object, not {type(data).__name__}")
        if path == CHAT_PATH:
            _check_chat(data)
        return data

    def _control(self, method: str, path: str, query: str, body: Mapping[str, Any]) -> _Reply:
        reply: Any
        if (method, path) == ("GET", "/_script"):
            reply = self.describe()
        elif (method, path) == ("PUT", "/_script"):
            reply = self._load(body)
        elif (method, path) == ("GET", "/_events"):
            params = parse_qs(query)
            after = _number(params, "after")
            reply = {"events": self.events_after(int(after), min(30.0, _number(params, "wait")))}
        elif (method, path) == ("PUT", "/_hold"):
            reply = {"id": self.hold(str(body.get("when", "before")), str(body.get("call", "")),
                                     int(body.get("n", 1)), body.get("tool")).id}
        elif (method, path) == ("POST", "/_release"):
            hold_id = body.get("id")
            reply = {"released": self.release(int(hold_id) if hold_id is not None else None)}
        elif (method, path) == ("PUT", "/_run"):
            if isinstance(self.script, ScriptedProviders):
                self.script.run_id = str(body.get("run_id", ""))
            reply = {"run_id": body.get("run_id")}
        else:
            raise _Refused(404, f"no control path {method} {path}")
        return 200, encode(reply), "application/json"

    def _load(self, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            scenario = load_script(body.get("path"), body.get("content"), body.get("variant"))
            turn = body.get("turn")
            if turn is not None and not (isinstance(turn, int)
                                         and 0 <= turn < len(scenario.turns)):
                raise ScriptError(f"{scenario.name}: no earlier turn {turn!r} (it has "
                                  f"{len(scenario.turns)})")
            scale = body.get("time_scale")
            if scale is not None and not (isinstance(scale, int | float) and scale > 0):
                raise ScriptError(f"time_scale {scale!r}: give a number > 0")
        except ScriptError as exc:
            raise _Refused(400, str(exc)) from None
        last = self.load(scenario, turn=turn,
                         time_scale=float(scale) if scale is not None else None)
        return {"scenario": scenario.name, "events": last}

    # -- serving a provider call --------------------------------------------------------------

    def _event(self, **fields: Any) -> None:
        with self._cond:
            self.seen += 1
            self.events.append({"seq": self.seen, "t": time.monotonic(), **fields})
            if len(self.events) >= 2 * KEEP_EVENTS:
                del self.events[:KEEP_EVENTS]
            self._cond.notify_all()

    def _wait_held(self, when: str, call: dict[str, Any]) -> None:
        with self._cond:
            hold = next((h for h in self.holds if h.matches(when, **call)), None)
            if hold is not None:
                hold.hit = True
        if hold is not None:
            self._event(phase="held", hold=hold.id, when=when, **call)
            hold.released.wait(hold.limit_s)

    def _provide(self, script: Script, path: str, body: Mapping[str, Any]) -> Answer:
        """Answer one provider call: count it, honour holds, play it, sleep its latency."""
        kind, name = _call_of(path, body)
        arrived = time.monotonic()
        with self._cond:
            ordinal = self._counts[kind] = self._counts.get(kind, 0) + 1
            key = f"{kind}:{name}"
            name_ordinal = self._counts[key] = self._counts.get(key, 0) + 1 if name else 0
            own = arrived - self._last_done if self._last_done is not None else 0.0
        call = {"kind": kind, "name": name, "ordinal": ordinal, "name_ordinal": name_ordinal}
        self._event(phase="arrived", own_s=round(own, 6), **call)
        self._wait_held("before", call)
        answer = script.answer(path, body)
        wall = answer.latency_s * self.time_scale
        if self.compensate:  # the harness's own time since the last answer counts as spent
            wall -= own
        if wall > 0:
            time.sleep(wall)
        self._wait_held("after", call)
        self._event(phase="answered", status=answer.status, **call)
        with self._cond:
            self._last_done = time.monotonic()
        return answer


class ReferenceServer(ProvidersServer):
    """A scripted :class:`~harness_lab.scripted.conversation.Conversation` on 127.0.0.1,
    served as a hosted provider serves: ``responses`` in order on the chat path, ``tools``
    (path -> answer) beside it, ``Authorization: Bearer <api_key>`` required on every path, a
    request read within ``read_timeout``, at most :data:`MAX_CONNECTIONS` served at once."""

    def __init__(self, responses: Sequence[ScriptedCompletion | Answer], *,
                 tools: Mapping[str, ToolRoute] | None = None, api_key: str = "reference-key",
                 read_timeout: float = READ_TIMEOUT_S, **options: Any) -> None:
        self.conversation = Conversation(responses, tools)
        super().__init__(self.conversation, api_key=api_key, read_timeout=read_timeout,
                         max_connections=MAX_CONNECTIONS, name="reference server", **options)

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL of the tool paths."""
        return self.url

    @property
    def used(self) -> int:
        """Scripted completions served."""
        return self.conversation.used

    @property
    def remaining(self) -> int:
        """Scripted completions not yet served."""
        return self.conversation.remaining


def _check_chat(data: Mapping[str, Any]) -> None:
    """Refuse a chat completion body without OpenAI's required fields."""
    if not isinstance(data.get("model"), str) or not data["model"]:
        raise _Refused(400, "`model` is required and must be a string")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Refused(400, "`messages` is required and must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise _Refused(400, f"messages[{i}] must be an object with a `role`")


def _call_of(path: str, body: Mapping[str, Any]) -> tuple[str, str]:
    """The kind of a provider call (its caller's, for a chat completion) and the tool's name."""
    if path == CHAT_PATH:
        kind = classify_chat(body["messages"])
        return (kind.value if kind is not None else "chat"), ""
    if path == RETRIEVER_PATH:
        return "retriever", ""
    return "tool", path.removeprefix(TOOL_PREFIX)


def _number(query: Mapping[str, list[str]], key: str) -> float:
    values = query.get(key)
    if not values:
        return 0.0
    try:
        return float(values[0])
    except ValueError:
        raise _Refused(400, f"{key}={values[0]!r} is not a number") from None


_COUNT = re.compile(r"[0-9]{1,18}")


def _handler(server: ProvidersServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Reads one request, lets the server answer it, writes the response."""

        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart
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
            try:
                chunks.extend(self._chunks(length))
            except TimeoutError:
                raise _Refused(408, f"the body stopped after {sum(map(len, chunks))} of "
                                    f"{length} bytes for {server.read_timeout:g} s") from None
            body = b"".join(chunks)
            if len(body) < length:
                raise _Refused(400, f"the body ended after {len(body)} of {length} bytes")
            return body

        def _chunks(self, limit: int) -> Iterator[bytes]:
            """What the client sends, as it arrives, up to ``limit`` bytes or its end."""
            while limit > 0:
                chunk = self.rfile.read1(min(limit, 65536))  # type: ignore[attr-defined]
                if not chunk:
                    return
                yield chunk
                limit -= len(chunk)

        def _serve(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            path, _, query = self.path.partition("?")
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
                reply = server.answer(ReceivedRequest(self.command, path, headers, body), query)
            except Exception as exc:  # noqa: BLE001 - a failing script answers 500, never hangs
                reply = _error(500, f"{server.name}: {type(exc).__name__}: {exc}",
                               "server_error")
            self._send(*reply, gzip_ok="gzip" in headers.get("accept-encoding", ""))

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
            with contextlib.suppress(OSError):
                for _ in self._chunks(server.max_body_bytes):
                    pass

        def _send(self, status: int, payload: bytes, content_type: str, *,
                  gzip_ok: bool) -> None:
            if gzip_ok:
                payload = gzip.compress(payload, mtime=0)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            if gzip_ok:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("OpenAI-Organization", "org-reference0001")
            self.send_header("Set-Cookie", "reference_sid=cookie0001; Path=/")
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
            """Quiet: ``requests`` and ``events`` say what arrived."""

    return Handler
