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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from harness_lab.bounded_json import JsonInputError, parse_json
from harness_lab.live.driver import CancelAnswer, Flush, LiveDriver, LiveSlot
from harness_lab.live.instances import Instance
from harness_lab.live.wire import KEEPALIVE_FRAME, Frames
from harness_lab.logs.codec import data, record_to_data
from harness_lab.states import SseEventKind
from harness_lab.store.base import RunStore
from harness_lab.store.sql import one_line
from harness_lab.version import __version__

__all__ = ["BODY_TIMEOUT_S", "CHAT_FIELDS", "HEALTH_CHECK_S", "KEEPALIVE_S", "MAX_BODY_BYTES",
           "EventWait", "SseStream", "create_app", "unstarted"]

MAX_BODY_BYTES = 64 * 1024
"""The largest ``POST /chat`` body accepted (413 beyond)."""

BODY_TIMEOUT_S = 10.0
"""Seconds a client has to send a whole ``POST /chat`` body once its headers are in (408
beyond; ``serve --body-timeout``)."""

HEALTH_CHECK_S = 2.0
"""Seconds ``/healthz`` waits for the store to answer before it reports the store down."""

KEEPALIVE_S = 15.0
"""Seconds of silence on a stream (a long provider call) after which a comment line is sent,
so proxies and browsers keep the connection open."""

CHAT_FIELDS = ("query", "sessionId")
"""The fields of a ``POST /chat`` body; any other is refused with 422, naming it."""

_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
          408: "request_timeout", 409: "conflict",
          413: "too_large", 415: "unsupported_media_type", 422: "unprocessable",
          500: "internal_failure", 503: "store_unavailable"}
log = logging.getLogger("harness_lab.serve")


def error(status: int, message: str, headers: Mapping[str, str] | None = None, *,
          run_id: str | None = None) -> JSONResponse:
    """The JSON error answer: ``{"error": {"code": ..., "message": ...}}`` (and ``runId``
    when a run was started for the request)."""
    body: dict[str, Any] = {"code": _CODES.get(status, "error"), "message": message}
    if run_id is not None:
        body["runId"] = run_id
    return JSONResponse({"error": body}, status_code=status, headers=dict(headers or {}))


class SseStream(Response):
    """A run's event stream, which also listens for the client going away.

    ``events`` gives the run's events; ``first`` is the batch already taken before the answer
    started (the run's ``metadata`` and what followed it), or None when the run had sent
    nothing yet. Whatever is ready when the stream writes is written at once, with one send.
    """

    media_type = "text/event-stream"

    def __init__(self, driver: LiveDriver, slot: LiveSlot, events: EventWait,
                 keepalive_s: float = KEEPALIVE_S, first: Frames | None = None) -> None:
        super().__init__(status_code=200)
        self.keepalive_s = keepalive_s
        # no content-length: the body is a stream, ended when the run is
        self.raw_headers = [(b"content-type", b"text/event-stream; charset=utf-8"),
                            (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        self.driver = driver
        self.slot = slot
        self.events = events
        self.first = first
        self.gone = False  # the client went away (its disconnect was received)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the events as the run makes them; a disconnect cancels the run at once."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": self.raw_headers})
        finished = False
        try:
            async with anyio.create_task_group() as group:
                async def watch() -> None:
                    while True:
                        message = await receive()
                        if message["type"] == "http.disconnect":
                            break
                    self.gone = True
                    if not finished:
                        self.driver.disconnect(self.slot)
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                try:
                    await self._relay(send)
                except OSError:  # the connection broke while writing: the client is gone
                    self.gone = True
                    self.driver.disconnect(self.slot)
                finished = True
                group.cancel_scope.cancel()
        except asyncio.CancelledError:
            # the HTTP server cut the stream as it stopped at once (a second Ctrl-C, or the
            # grace period's end): the run is cancelled SERVER_SHUTDOWN as the server ends, and
            # the task ends here, quietly, rather than as an error with its traceback
            log.info("run %s: its stream was cut as the server stopped", self.slot.run_id)
        finally:  # a run waiting to hear that its result was written hears it was not
            self.slot.writer_gone = True
            self.events.refuse_flushes()

    async def _relay(self, send: Send) -> None:
        sent = 0
        if self.first is not None:
            await self._write(send, self.first.wire)
            sent = 1
        ended = False
        while not ended:
            item = await self.events.next(self.keepalive_s)
            if item is _SILENCE:  # a silent stretch (a long call): a comment keeps it open
                await self._write(send, KEEPALIVE_FRAME)
                continue
            wire: list[bytes] = []
            flushes: list[Flush] = []
            for batch in (item, *self.events.ready()):  # what is ready goes in one send
                if batch is None:
                    ended = True
                    break
                if isinstance(batch, Flush):  # answered once what came before is written
                    flushes.append(batch)
                    continue
                assert isinstance(batch, Frames)
                self._count_late(batch)
                wire.append(batch.wire)
            if wire:
                await self._write(send, b"".join(wire))
                sent += 1
            for flush in flushes:  # what came before is written: is the client there?
                flush.answer(not self.gone)
        if sent == 0:  # the run ended before its stream opened: say why, never an empty body
            slot = self.slot
            code, message = unstarted(slot)
            payload = json.dumps({"sessionId": slot.session_id, "runId": slot.run_id,
                                  "code": code, "message": message},
                                 ensure_ascii=False, separators=(",", ":"))
            await self._write(send, f"event: failure\ndata: {payload}\n\n".encode())
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    @staticmethod
    async def _write(send: Send, body: bytes) -> None:
        await send({"type": "http.response.body", "body": body, "more_body": True})

    def _count_late(self, batch: Frames) -> None:
        """Content or done after a user cancel was accepted: never expected, counted so a
        test can say so."""
        if self.slot.cancel_requested:
            self.driver.late_sent += sum(
                kind in (SseEventKind.CONTENT, SseEventKind.DONE) for kind in batch.kinds)


_SILENCE = object()


class EventWait:
    """Takes a queue's items one by one with a time limit, losing none when the limit passes
    (the pending ``get`` is kept for the next call, never cancelled)."""

    def __init__(self, queue: asyncio.Queue[Frames | Flush | None]) -> None:
        self.queue = queue
        self.pending: asyncio.Future[Frames | Flush | None] | None = None

    def refuse_flushes(self) -> None:
        """The stream has ended: answer every delivery question left that it was not."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.cancel()
        for item in self.ready():
            if isinstance(item, Flush):
                item.answer(False)

    async def next(self, timeout_s: float) -> Frames | Flush | None | object:
        """The next item, or ``_SILENCE`` when none came within ``timeout_s``."""
        if self.pending is None and not self.queue.empty():
            return self.queue.get_nowait()
        if self.pending is None:
            self.pending = asyncio.ensure_future(self.queue.get())
        done, _ = await asyncio.wait({self.pending}, timeout=timeout_s)
        if not done:
            return _SILENCE
        item, self.pending = self.pending.result(), None
        return item

    def ready(self) -> list[Frames | Flush | None]:
        """Every item queued now (none is pending after :meth:`next` returned one)."""
        items = []
        while not self.queue.empty():
            items.append(self.queue.get_nowait())
        return items


def unstarted(slot: LiveSlot) -> tuple[str, str]:
    """The failure code and message of a run that ended before it sent any event: its store
    refused the RUNNING row (``STORE_FAILURE``), or its worker failed (``INTERNAL_FAILURE``)."""
    record = slot.record
    if record is not None and record.error is not None:
        code = "STORE_FAILURE" if record.error.startswith("StoreError") else "INTERNAL_FAILURE"
        return code, record.error
    return "INTERNAL_FAILURE", slot.error or "the run ended before it started"


def create_app(driver: LiveDriver, store: RunStore, *, max_body: int = MAX_BODY_BYTES,
               body_timeout_s: float = BODY_TIMEOUT_S, keepalive_s: float = KEEPALIVE_S,
               cors_origins: Sequence[str] = (),
               store_check: Callable[[], str | None] | None = None,
               instance: Instance | None = None) -> Starlette:
    """The application: chat, cancel, the stored row and trace, the record, health.

    ``cors_origins`` lets browsers on those origins call it (``*`` any; none by default).
    A ``POST /chat`` body not complete ``body_timeout_s`` after its headers is a 408, and its
    connection is closed.
    ``store_check`` says why the store does not answer now (None when it does); ``/healthz``
    calls it and answers 503 when it names a problem. ``instance`` is this server as the
    database knows it: a cancel of a run another server runs says which, and ``/healthz``
    answers 503 while its last heartbeat could not be written.
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
            async with asyncio.timeout(body_timeout_s):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > max_body:
                        return error(413, f"the body exceeds {max_body} bytes")
        except ClientDisconnect:  # the client left while sending: no run was started
            log.info("POST /chat: the client left before its body was read")
            return Response(status_code=400)
        except TimeoutError:  # a client trickling its body would hold the connection for ever
            log.info("POST /chat from %s: the body was not complete within %g s; closed",
                     request.client, body_timeout_s)
            return error(408, f"the body was not complete within {body_timeout_s:g} s of its "
                              "headers", {"connection": "close"})
        parsed = _chat_body(body)
        if isinstance(parsed, Response):
            return parsed
        query, session_id = parsed
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Frames | Flush | None] = asyncio.Queue()

        def sink(event: Frames | Flush | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:  # the server is shutting down: nobody is listening
                pass

        slot = driver.start(query, session_id, sink)
        # the answer starts with the run's first event, so a run that cannot start (its store
        # refuses the RUNNING row) is a 503 rather than an empty stream
        events = EventWait(queue)
        first = await events.next(keepalive_s)
        if first is None:
            code, message = unstarted(slot)
            status = 503 if code == "STORE_FAILURE" else 500
            return error(status, message, {"retry-after": "5"} if status == 503 else None,
                         run_id=slot.run_id)
        if first is _SILENCE:  # no worker yet, or a slow store: start the stream anyway
            return SseStream(driver, slot, events, keepalive_s)
        assert isinstance(first, Frames)
        return SseStream(driver, slot, events, keepalive_s, first)

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        answer = driver.cancel(run_id)
        if answer is CancelAnswer.ACCEPTED:
            return JSONResponse({"runId": run_id, "cancel": "requested"}, status_code=202)
        if answer is CancelAnswer.TERMINAL:
            return error(409, f"run {run_id} has already ended")
        row = await anyio.to_thread.run_sync(store.get_run, run_id)
        if row is None:
            return error(404, f"no run {run_id}")
        if row["status"] != "RUNNING":
            return error(409, f"run {run_id} has already ended ({row['status']})")
        owner = (await anyio.to_thread.run_sync(instance.owner, run_id)
                 if instance is not None else None)
        where = ("another serve process" if owner is None else
                 f"serve instance {owner['instance_id']} (host {owner['host']}, pid "
                 f"{owner['pid']})")
        return error(409, f"run {run_id} is not running on this server: it is RUNNING on "
                          f"{where}, which alone can cancel it")

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

    async def health(request: Request) -> Response:
        problem = None
        if store_check is not None:
            try:
                problem = await asyncio.wait_for(asyncio.to_thread(store_check), HEALTH_CHECK_S)
            except TimeoutError:
                problem = f"the store did not answer within {HEALTH_CHECK_S:g} s"
        if problem is None and instance is not None and instance.write_error is not None:
            problem = f"the store refused the last heartbeat: {instance.write_error}"
        store_state = {"ok": problem is None, "error": problem,
                       "failures": driver.store_failures, "lastError": driver.last_store_error}
        answer: dict[str, Any] = {
            "status": "ok" if problem is None else "store_unavailable",
            "version": __version__, "runs": driver.stats(), "store": store_state}
        if instance is not None:
            answer["instance"] = {"id": instance.instance_id, "orphansEnded": instance.reaped}
        return JSONResponse(answer,
                            status_code=200 if problem is None else 503)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error(exc.status_code, str(exc.detail), exc.headers)  # 405 keeps its Allow

    async def store_down(request: Request, exc: Exception) -> Response:
        """A read the store refused (it is down): 503, as for a run it could not start."""
        log.error("%s %s: the store failed: %s", request.method, request.url.path,
                  one_line(exc))
        return error(503, f"the store did not answer: {one_line(exc)}", {"retry-after": "5"})

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
    return Starlette(routes=routes, middleware=middleware,
                     exception_handlers={HTTPException: http_error, SQLAlchemyError: store_down})


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
