"""ProvidersServer: a scenario's scripted providers as a real HTTP server on 127.0.0.1.

Provider paths (the shapes the adapters speak): ``POST /v1/chat/completions`` (diagnosis
model, router, semantic guard, evidence repair, responder, told apart by their system
prompt), ``POST /tools/{name}`` (HTTP JSON tools) and ``POST /retriever``. Each answer is
delayed by its scripted latency times ``time_scale`` (really slept), a scripted failure is a
real HTTP error, an oversize tool result a really oversize body. With ``compensate`` the
harness's own time between one answer and its next call (what the simulation counts as no
time at all) is taken off the next call's sleep, so the harness's clock sees the scripted
timeline whenever its own work between two calls is shorter than the next call's latency;
each ``arrived`` event says that time (``own_s``).

Control paths, for a driver that has to act at a lifecycle point:

* ``PUT /_script`` ``{"path": FILE | "content": YAML, "variant": NAME, "turn": K,
  "time_scale": S}`` loads a scenario's providers (``turn``: an earlier turn's);
  ``GET /_script`` says what is loaded (its tools, its configuration);
* ``GET /_events?after=N&wait=S`` lists what happened after event ``N`` (a long poll of at
  most ``S`` seconds): ``arrived``, ``held``, ``answered`` for each call, with its kind,
  its ordinal among the calls of its kind, the tool's name and its ordinal among that tool's;
* ``PUT /_hold`` ``{"when": "before"|"after", "call": KIND, "n": N, "tool": NAME}`` holds
  that call before it is played or before its answer is written, until
  ``POST /_release`` ``{"id": HOLD}``; ``PUT /_run`` ``{"run_id": ...}`` names the run a
  reply's ``inv-N`` references expand for when the request itself names none.

Errors are JSON ``{"error": {"code": ..., "message": ...}}``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness_lab.background_http import BackgroundHTTPServer, ServedOverHTTP
from harness_lab.live.providers import Answer, ScriptedProviders
from harness_lab.live.sources import SourceError, load_scenario
from harness_lab.scenarios.spec import Scenario

__all__ = ["MAX_BODY_BYTES", "Hold", "ProvidersServer", "ScriptError", "load_script"]

MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body read (a scenario's content included)."""
HOLD_LIMIT_S = 120.0
"""A held call is let go after this long even if nobody releases it."""


class ScriptError(ValueError):
    """A script that cannot be loaded; the message names the file, field and line."""


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

    def matches(self, when: str, kind: str, ordinal: int, name: str, name_ordinal: int
                ) -> bool:
        """Whether this hold is for the call described."""
        if self.hit or when != self.when or kind != self.call:
            return False
        if self.tool is not None:
            return name == self.tool and name_ordinal == self.n
        return ordinal == self.n


def load_script(path: str | None, content: str | None, variant: str | None) -> Scenario:
    """The scenario of a file (or of YAML text), one variant of it; ScriptError otherwise."""
    try:
        return load_scenario(path, variant, content=content)[0]
    except SourceError as exc:
        raise ScriptError(str(exc)) from None


class ProvidersServer(ServedOverHTTP):
    """Scripted providers on an HTTP port; start with a scenario or load one later.

    ``port=0`` takes a free port. Use as a context manager, or ``start``/``stop``.
    """

    def __init__(self, scenario: Scenario | None = None, *, port: int = 0,
                 host: str = "127.0.0.1", time_scale: float = 1.0,
                 compensate: bool = False) -> None:
        self.compensate = compensate
        self.time_scale = time_scale
        self.providers: ScriptedProviders | None = (
            ScriptedProviders(scenario) if scenario is not None else None)
        self.events: list[dict[str, Any]] = []
        self.holds: list[Hold] = []
        self._counts: dict[str, int] = {}
        self._last_done: float | None = None
        self._cond = threading.Condition()
        # uncapped: a load test holds hundreds of provider calls open at once
        self._server = BackgroundHTTPServer(_handler(self), name="providers server",
                                            host=host, port=port)

    # -- lifecycle ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Release every hold, stop serving and free the port."""
        with self._cond:
            for hold in self.holds:
                hold.released.set()
        super().stop()

    # -- control ------------------------------------------------------------------------------

    def load(self, scenario: Scenario, *, turn: int | None = None,
             time_scale: float | None = None) -> int:
        """Play ``scenario``'s providers from now on; the events seen so far are kept.

        Returns the number of the last event before the load (a driver waits after it).
        """
        providers = ScriptedProviders(scenario, turn=turn)
        with self._cond:
            for hold in self.holds:
                hold.released.set()
            self.holds = []
            self.providers = providers
            self._counts = {}
            self._last_done = None
            if time_scale is not None:
                self.time_scale = time_scale
            return len(self.events)

    def run_started(self, at: float | None = None) -> None:
        """The run being played started at ``at`` (``time.monotonic``; default now): with
        ``compensate``, the harness's time before its first call is counted from there."""
        with self._cond:
            if self._last_done is None and not self._counts:
                self._last_done = time.monotonic() if at is None else at

    def hold(self, when: str, call: str, n: int, tool: str | None = None) -> Hold:
        """Hold the call described until :meth:`release`."""
        with self._cond:
            hold = Hold(len(self.holds) + 1, when, call, n, tool)
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
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._cond:
            while len(self.events) <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return [dict(e) for e in self.events[max(0, after):]]

    def describe(self) -> dict[str, Any]:
        """What is loaded: the scenario's name, tools (paths, flags) and configuration."""
        providers = self.providers
        if providers is None:
            return {"scenario": None, "time_scale": self.time_scale}
        sc = providers.scenario
        return {"scenario": sc.name, "turn": providers.turn, "time_scale": self.time_scale,
                "tools": {name: {"path": f"/tools/{name}", "evidence": t.evidence,
                                 "read_only": t.read_only, "required": list(t.required)}
                          for name, t in sc.tools.items()},
                "config": sc.config.model_dump(mode="json"),
                "events": len(self.events)}

    # -- serving a provider call --------------------------------------------------------------

    def _event(self, **fields: Any) -> dict[str, Any]:
        with self._cond:
            event = {"seq": len(self.events) + 1, "t": time.monotonic(), **fields}
            self.events.append(event)
            self._cond.notify_all()
            return event

    def _wait_held(self, when: str, call: dict[str, Any]) -> None:
        with self._cond:
            hold = next((h for h in self.holds
                         if h.matches(when, call["kind"], call["ordinal"], call["name"],
                                      call["name_ordinal"])), None)
            if hold is not None:
                hold.hit = True
        if hold is not None:
            self._event(phase="held", hold=hold.id, when=when, **call)
            hold.released.wait(HOLD_LIMIT_S)

    def _kind_of(self, providers: ScriptedProviders, path: str, body: Any) -> tuple[str, str]:
        from harness_lab.live.providers import (
            CHAT_PATH,
            RETRIEVER_PATH,
            TOOL_PREFIX,
            classify_chat,
        )

        if path == CHAT_PATH:
            messages = body.get("messages") if isinstance(body, Mapping) else None
            kind = classify_chat(messages) if isinstance(messages, list) else None
            return (kind.value if kind is not None else "chat"), ""
        if path.startswith(TOOL_PREFIX):
            return "tool", path[len(TOOL_PREFIX):]
        if path == RETRIEVER_PATH:
            return "retriever", ""
        return "", ""

    def serve_call(self, path: str, body: Any) -> Answer | None:
        """Answer one provider call: count it, honour holds, play it, sleep its latency."""
        providers = self.providers
        if providers is None:
            return None
        kind, name = self._kind_of(providers, path, body)
        if not kind:
            return None
        arrived = time.monotonic()
        with self._cond:
            ordinal = self._counts[kind] = self._counts.get(kind, 0) + 1
            key = f"{kind}:{name}"
            name_ordinal = self._counts[key] = self._counts.get(key, 0) + 1 if name else 0
            own = arrived - self._last_done if self._last_done is not None else 0.0
        call = {"kind": kind, "name": name, "ordinal": ordinal, "name_ordinal": name_ordinal}
        self._event(phase="arrived", own_s=round(own, 6), **call)
        self._wait_held("before", call)
        answer = providers.answer(path, body)
        if answer is None:
            return None
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


def _handler(server: ProvidersServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """One request: control paths, then provider paths."""

        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the caller gave up (a timeout): nothing to say

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data, sort_keys=True).encode("utf-8"))

        def _fail(self, status: int, code: str, message: str) -> None:
            self._json(status, {"error": {"code": code, "message": message}})

        def _body(self) -> Any:
            raw = self.headers.get("Content-Length") or "0"
            length = int(raw) if raw.isdigit() else -1
            if length < 0 or length > MAX_BODY_BYTES:
                raise _Refused(413 if length > 0 else 400, "body_size",
                               f"a body of {raw} bytes is not accepted (at most "
                               f"{MAX_BODY_BYTES})")
            data = self.rfile.read(length) if length else b""
            if not data:
                return {}
            try:
                return json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise _Refused(400, "bad_json", f"the body is not JSON: {exc}") from None

        def _route(self) -> None:
            parts = urlsplit(self.path)
            path = parts.path
            try:
                body = self._body() if self.command in ("POST", "PUT") else {}
                if path.startswith("/_"):
                    self._control(path, parse_qs(parts.query), body)
                    return
                if self.command != "POST":
                    raise _Refused(405, "method", f"{self.command} {path}: use POST")
                answer = server.serve_call(path, body)
                if answer is None:
                    raise _Refused(404, "no_route", f"no provider at {path} (is a script "
                                                    "loaded? PUT /_script)")
                self._send(answer.status, answer.payload())
            except _Refused as refused:
                self._fail(refused.status, refused.code, refused.message)

        def _control(self, path: str, query: Mapping[str, list[str]], body: Any) -> None:
            if not isinstance(body, Mapping):
                raise _Refused(400, "bad_body", "the body must be a JSON object")
            if path == "/_script" and self.command == "GET":
                self._json(200, server.describe())
            elif path == "/_script" and self.command == "PUT":
                self._load(body)
            elif path == "/_events" and self.command == "GET":
                after = _number(query, "after", 0)
                wait = min(30.0, float(_number(query, "wait", 0)))
                self._json(200, {"events": server.events_after(int(after), wait)})
            elif path == "/_hold" and self.command == "PUT":
                hold = server.hold(str(body.get("when", "before")), str(body.get("call", "")),
                                   int(body.get("n", 1)), body.get("tool"))
                self._json(200, {"id": hold.id})
            elif path == "/_release" and self.command == "POST":
                hold_id = body.get("id")
                self._json(200, {"released": server.release(
                    int(hold_id) if hold_id is not None else None)})
            elif path == "/_run" and self.command == "PUT":
                if server.providers is not None:
                    server.providers.run_id = str(body.get("run_id", ""))
                self._json(200, {"run_id": body.get("run_id")})
            else:
                raise _Refused(404, "no_route", f"no control path {self.command} {path}")

        def _load(self, body: Mapping[str, Any]) -> None:
            try:
                scenario = load_script(body.get("path"), body.get("content"),
                                       body.get("variant"))
                turn = body.get("turn")
                if turn is not None and not (isinstance(turn, int)
                                             and 0 <= turn < len(scenario.turns)):
                    raise ScriptError(f"{scenario.name}: no earlier turn {turn!r} (it has "
                                      f"{len(scenario.turns)})")
                scale = body.get("time_scale")
                if scale is not None and not (isinstance(scale, int | float) and scale > 0):
                    raise ScriptError(f"time_scale {scale!r}: give a number > 0")
            except ScriptError as exc:
                raise _Refused(400, "bad_script", str(exc)) from None
            last = server.load(scenario, turn=turn,
                               time_scale=float(scale) if scale is not None else None)
            self._json(200, {"scenario": scenario.name, "events": last})

        do_GET = _route  # noqa: N815 - http.server's naming
        do_POST = _route  # noqa: N815
        do_PUT = _route  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: the events say what arrived."""

    return Handler


class _Refused(Exception):  # noqa: N818
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _number(query: Mapping[str, list[str]], key: str, default: float) -> float:
    values = query.get(key)
    if not values:
        return default
    try:
        return float(values[0])
    except ValueError:
        raise _Refused(400, "bad_query", f"{key}={values[0]!r} is not a number") from None
