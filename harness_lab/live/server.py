"""The HTTP and SSE face of the live harness (a Starlette application; docs/live.md).

``POST /chat`` answers with the run's doc §11 stream, one SSE event per toolkit
:class:`~harness_lab.sse.SseEvent` (``event:`` its kind, ``data:`` its payload as JSON,
``id:`` its sequence number). The stream watches its connection the whole time, not only when
it writes: a client that goes away cancels its run at that moment
(:meth:`~harness_lab.live.driver.LiveDriver.disconnect`), even while a provider call is in
flight. Every other answer is JSON; errors are ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from harness_lab.bounded_json import JsonInputError, parse_json
from harness_lab.live.driver import CancelAnswer, LiveDriver, LiveSlot
from harness_lab.logs.codec import data, record_to_data
from harness_lab.sse import SseEvent
from harness_lab.states import SseEventKind
from harness_lab.store.base import RunStore
from harness_lab.version import __version__

__all__ = ["CHAT_FIELDS", "KEEPALIVE_S", "MAX_BODY_BYTES", "SseStream", "create_app",
           "sse_frame"]

MAX_BODY_BYTES = 64 * 1024
"""The largest ``POST /chat`` body accepted (413 beyond)."""

KEEPALIVE_S = 15.0
"""Seconds of silence on a stream (a long provider call) after which a comment line is sent,
so proxies and browsers keep the connection open."""

CHAT_FIELDS = ("query", "sessionId")
"""The fields of a ``POST /chat`` body; any other is refused with 422, naming it."""

_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 409: "conflict",
          413: "too_large", 415: "unsupported_media_type", 422: "unprocessable"}
_KEEPALIVE_FRAME = b": keep-alive\n\n"
log = logging.getLogger("harness_lab.serve")


def error(status: int, message: str, headers: Mapping[str, str] | None = None
          ) -> JSONResponse:
    """The JSON error answer: ``{"error": {"code": ..., "message": ...}}``."""
    return JSONResponse({"error": {"code": _CODES.get(status, "error"), "message": message}},
                        status_code=status, headers=dict(headers or {}))


def sse_frame(event: SseEvent) -> bytes:
    """One SSE event on the wire: ``id``, ``event`` (the kind) and ``data`` (the payload)."""
    payload = json.dumps(data(event.data), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.kind.value}\ndata: {payload}\n\n".encode()


class SseStream(Response):
    """A run's event stream, which also listens for the client going away."""

    media_type = "text/event-stream"

    def __init__(self, driver: LiveDriver, slot: LiveSlot, queue: asyncio.Queue[SseEvent | None],
                 keepalive_s: float = KEEPALIVE_S) -> None:
        super().__init__(status_code=200)
        self.keepalive_s = keepalive_s
        # no content-length: the body is a stream, ended when the run is
        self.raw_headers = [(b"content-type", b"text/event-stream; charset=utf-8"),
                            (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        self.driver = driver
        self.slot = slot
        self.queue = queue

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the events as the run makes them; a disconnect cancels the run at once."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": self.raw_headers})
        finished = False
        async with anyio.create_task_group() as group:
            async def watch() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        break
                if not finished:
                    self.driver.disconnect(self.slot)
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                await self._relay(send)
            except OSError:  # the connection broke while writing: the client is gone
                self.driver.disconnect(self.slot)
            finished = True
            group.cancel_scope.cancel()

    async def _relay(self, send: Send) -> None:
        slot = self.slot
        while True:
            try:
                event = await asyncio.wait_for(self.queue.get(), self.keepalive_s)
            except TimeoutError:  # a silent stretch (a long call): a comment keeps it open
                await send({"type": "http.response.body", "body": _KEEPALIVE_FRAME,
                            "more_body": True})
                continue
            if event is None:
                break
            if slot.cancel_requested.is_set() and event.kind in (SseEventKind.CONTENT,
                                                                SseEventKind.DONE):
                self.driver.late_sent += 1  # never expected: counted so a test can say so
            await send({"type": "http.response.body", "body": sse_frame(event),
                        "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def create_app(driver: LiveDriver, store: RunStore, *, max_body: int = MAX_BODY_BYTES,
               keepalive_s: float = KEEPALIVE_S, cors_origins: Sequence[str] = ()
               ) -> Starlette:
    """The application: chat, cancel, the stored row and trace, the record, health.

    ``cors_origins`` lets browsers on those origins call it (``*`` any; none by default).
    """

    async def chat(request: Request) -> Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return error(415, f"POST /chat takes application/json, not {kind or 'no type'!r}")
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body:
            return error(413, f"the body is {declared} bytes; at most {max_body} are accepted")
        body = b""
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_body:
                    return error(413, f"the body exceeds {max_body} bytes")
        except ClientDisconnect:  # the client left while sending: no run was started
            log.info("POST /chat: the client left before its body was read")
            return Response(status_code=400)
        parsed = _chat_body(body)
        if isinstance(parsed, Response):
            return parsed
        query, session_id = parsed
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[SseEvent | None] = asyncio.Queue()

        def sink(event: SseEvent | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:  # the server is shutting down: nobody is listening
                pass

        slot = driver.start(query, session_id, sink)
        return SseStream(driver, slot, queue, keepalive_s)

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        answer = driver.cancel(run_id)
        if answer is CancelAnswer.ACCEPTED:
            return JSONResponse({"runId": run_id, "cancel": "requested"}, status_code=202)
        if answer is CancelAnswer.TERMINAL:
            return error(409, f"run {run_id} has already ended")
        if await anyio.to_thread.run_sync(store.get_run, run_id) is not None:
            return error(409, f"run {run_id} has already ended")
        return error(404, f"no run {run_id}")

    def run_row(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        row = store.get_run(run_id)
        if row is None:
            return error(404, f"no run {run_id}")
        return JSONResponse(data(dict(row)))

    def run_trace(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if store.get_run(run_id) is None:
            return error(404, f"no run {run_id}")
        trace_of = getattr(store, "trace", None)
        rows = trace_of(run_id) if trace_of is not None else []
        return JSONResponse(data(rows))

    def run_record(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        slot = driver.slot(run_id)
        if slot is None:
            if store.get_run(run_id) is not None:
                return error(404, f"no record of run {run_id} is held by this server (its "
                                  f"stored row is GET /runs/{run_id})")
            return error(404, f"no run {run_id}")
        if slot.record is None:
            return error(409, f"run {run_id} has not finished")
        return JSONResponse(record_to_data(slot.record))

    def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__, "runs": driver.stats()})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error(exc.status_code, str(exc.detail), exc.headers)  # 405 keeps its Allow

    routes = [
        Route("/chat", chat, methods=["POST"]),
        Route("/runs/{run_id}/cancel", cancel, methods=["POST"]),
        Route("/runs/{run_id}", run_row, methods=["GET"]),
        Route("/runs/{run_id}/trace", run_trace, methods=["GET"]),
        Route("/runs/{run_id}/record", run_record, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
    ]
    middleware = ([Middleware(CORSMiddleware, allow_origins=list(cors_origins),
                              allow_methods=["GET", "POST"], allow_headers=["content-type"],
                              expose_headers=["content-type"])] if cors_origins else [])
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error},
                     middleware=middleware)


def _chat_body(body: bytes) -> tuple[str, str | None] | Response:
    """The query and session id of a ``POST /chat`` body, or the 4xx answer saying why not.

    The body is read by the toolkit's bounded JSON reader (a deeply nested or huge-number
    body is a 400, never a server error); a field this API does not know is a 422 naming it
    (a misspelt ``session_id`` would otherwise start a new session unnoticed); a string that
    a store cannot keep (a NUL character, an unpaired surrogate) is a 400.
    """
    try:
        value: Any = parse_json(body.decode("utf-8"), source="the body")
    except UnicodeDecodeError as exc:
        return error(400, f"the body is not UTF-8: {exc.reason} at byte {exc.start}")
    except JsonInputError as exc:
        return error(400, str(exc))
    if not isinstance(value, Mapping):
        return error(400, "the body must be a JSON object: {\"query\": ..., \"sessionId\": ...}")
    unknown = sorted(str(k) for k in value if k not in CHAT_FIELDS)
    if unknown:
        return error(422, f"unknown field(s) {', '.join(map(repr, unknown))}; POST /chat takes "
                          f"{' and '.join(map(repr, CHAT_FIELDS))}")
    query = value.get("query")
    if not isinstance(query, str) or not query.strip():
        return error(400, "field 'query': a non-empty string is required")
    session_id = value.get("sessionId")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        return error(400, "field 'sessionId': a non-empty string or null is required")
    for field, text in (("query", query), ("sessionId", session_id)):
        problem = _unstorable(text)
        if problem is not None:
            return error(400, f"field {field!r}: {problem}")
    return query, session_id


def _unstorable(text: str | None) -> str | None:
    """Why a store could not keep ``text``, or None."""
    if text is None:
        return None
    if "\x00" in text:
        return "a NUL character cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "an unpaired surrogate (\\ud800-\\udfff) is not text a store can keep"
    return None
