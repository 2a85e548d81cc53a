"""The wall-clock driver: each request is one unchanged core run on its own worker thread.

A request becomes a :class:`LiveSlot`. A worker thread submits it, with the run's parts from
the :class:`~harness_lab.live.sources.RunSource` (fresh providers) and the slot's probe, to a
:class:`~harness_lab.harness.Harness` of its own on a
:class:`~harness_lab.live.clock.WallClockEnvironment` (the store is shared) and runs it to its
end, exactly as the simulator does; only time is real.

Threads. The run's own objects (its SSE session, trace, tool boundary) are touched by its
worker thread alone. The server's threads do two things to a run, both thread-safe:

* **cancel at once**: a client disconnect or a user cancel calls the run's
  ``RunContext.cancel``, whose ``RunLifecycle.finish`` is a locked compare-and-set, so the
  first terminal state wins whichever thread gets there first (doc §14);
* **wake the run**: the worker then applies the disconnect to the SSE session itself, at its
  next event, boundary or wake-up, so the record says DISCONNECTED like a simulated one.

The run notices the cancel at its next boundary (``RunContext.check_active``); a provider
result that arrives after it is discarded there and never sent (doc §4).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from enum import Enum

from harness_lab.application.live import LiveRun
from harness_lab.core.context import Boundary, RunContext
from harness_lab.harness import Harness
from harness_lab.live.clock import WallClock, WallClockEnvironment
from harness_lab.live.sources import RunSource
from harness_lab.live.wire import Frames
from harness_lab.record import RunRecord
from harness_lab.sse import ChatSseSession
from harness_lab.states import CancellationReason, SseEventKind
from harness_lab.store.base import RunStore

__all__ = ["FLUSH_WAIT_S", "CancelAnswer", "EventSink", "Flush", "LiveDriver",
           "LiveSlot"]

_log = logging.getLogger("harness_lab.live")

FLUSH_WAIT_S = 10.0
"""Seconds a run waits for its stream's writer to confirm delivery before it sends a result
(a writer that cannot write as fast, to a slow client, lets the run go on after this)."""

_RESULT_KINDS = frozenset({SseEventKind.CONTENT, SseEventKind.FAILURE, SseEventKind.DONE})


class Flush:
    """A request to the stream's writer, queued after the events so far: confirm that every
    one of them was written and the client is still connected (:meth:`answer`)."""

    __slots__ = ("written", "delivered")

    def __init__(self) -> None:
        self.written = threading.Event()
        self.delivered = True

    def answer(self, delivered: bool) -> None:
        """The writer's answer: ``delivered`` False when the client has gone."""
        self.delivered = delivered
        self.written.set()


EventSink = Callable[[Frames | Flush | None], None]
"""Receives the SSE events the run sends (in :class:`~harness_lab.live.wire.Frames`, each
batch once), and a :class:`Flush` before each result, on the run's thread, then ``None`` at
its end."""


class CancelAnswer(Enum):
    """What a user-cancel request got."""

    ACCEPTED = "accepted"  # this cancel is the run's terminal state (or will be, at its start)
    UNKNOWN = "unknown"  # no such run
    TERMINAL = "terminal"  # the run already ended (its first terminal state won)


class LiveSlot:
    """One request: its ids, its run once started, and what the server asked of it."""

    __slots__ = ("run_id", "session_id", "query", "sink", "live", "env", "record", "error",
                 "done", "gone", "cancel_requested", "stopping", "writer_gone", "_gone_applied",
                 "_cancel_applied", "_stop_applied", "forwarded")

    def __init__(self, run_id: str, session_id: str, query: str, sink: EventSink) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.query = query
        self.sink = sink
        self.live: LiveRun | None = None
        self.env: WallClockEnvironment | None = None
        self.record: RunRecord | None = None
        self.error: str | None = None
        # flags set by one thread and read by another (plain attributes: each read or write is
        # atomic, and nobody waits on them)
        self.done = False
        self.gone = False  # the client went away
        self.cancel_requested = False  # a user cancel was accepted
        self.stopping = False  # the server is shutting down
        self.writer_gone = False  # the stream's writer has ended: nothing is sent
        self._gone_applied = False
        self._cancel_applied = False
        self._stop_applied = False
        self.forwarded = 0  # SSE events handed to the sink

    def before_send(self, session: ChatSseSession, k: int, kind: SseEventKind) -> None:
        """Before a result (``content``, ``failure``) or ``done`` is sent: the events so far
        are written and the client is still there, or the session is disconnected and the
        result refused, as the document says for a client that left; a record never claims a
        delivery that did not happen."""
        if kind not in _RESULT_KINDS:
            return
        self.tick()  # forward what is pending, apply a disconnect already noticed
        if not session.is_open:
            return
        flush = Flush()
        if not self.writer_gone:
            self.sink(flush)
        waited = 0.0
        while not flush.written.wait(0.05):  # a writer that has ended answers no more
            waited += 0.05
            if self.writer_gone or waited >= FLUSH_WAIT_S:
                flush.answer(not self.writer_gone)
        if not flush.delivered:
            self.gone = True
            self.tick()

    def tick(self) -> None:
        """On the run's thread: apply what the server asked, forward new SSE events."""
        live = self.live
        if live is None:
            return
        if self.gone and not self._gone_applied:
            self._gone_applied = True
            live.disconnect()
        if self.cancel_requested and not self._cancel_applied:
            self._cancel_applied = True
            live.user_cancel()
        if self.stopping and not self._stop_applied:
            self._stop_applied = True
            live.cancel(CancellationReason.SERVER_SHUTDOWN, "server shutting down")
        events = live.sse.events
        if self.forwarded < len(events):
            batch = events[self.forwarded:]
            self.forwarded = len(events)
            self.sink(Frames(batch))


class _TickProbe:
    """A boundary probe that lets the slot act before and after every external call."""

    __slots__ = ("slot",)

    def __init__(self, slot: LiveSlot) -> None:
        self.slot = slot

    def at_boundary(self, ctx: RunContext, boundary: Boundary) -> None:
        """Apply a disconnect or cancel the server recorded, on the run's own thread."""
        self.slot.tick()


class _Workers:
    """``count`` threads, all started at once, that run each submitted slot in turn.

    Started before the first request, never by it: a thread's start waits until the new
    thread runs, and under a crowd that wait, on the event loop, is what every other client
    would wait for.
    """

    def __init__(self, count: int, work: Callable[[LiveSlot], None]) -> None:
        self._queue: queue.SimpleQueue[LiveSlot | None] = queue.SimpleQueue()
        self._work = work
        self._threads = [threading.Thread(target=self._serve, name=f"run_{i}", daemon=True)
                         for i in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, slot: LiveSlot) -> None:
        """Run ``slot`` on the next free thread (it waits for one when all are busy)."""
        self._queue.put(slot)

    def shutdown(self, timeout_s: float | None = None) -> None:
        """Let every thread finish what it runs and what is queued, then end; wait for them
        (at most ``timeout_s`` in all: a thread blocked on a database that does not answer
        is left, as a daemon, to end with the process)."""
        for _ in self._threads:
            self._queue.put(None)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _serve(self) -> None:
        while (slot := self._queue.get()) is not None:
            self._work(slot)


class LiveDriver:
    """Runs requests on worker threads against ``source``'s providers and ``store``.

    ``workers`` bounds the runs in flight; further requests wait for a worker (their
    deadline starts when they do). ``keep`` finished runs stay answerable by id (records,
    cancels) before the oldest are forgotten; the store keeps every run. ``on_record`` is
    handed each finished run's record on its worker thread, once its stream has ended (it
    must return at once: ``serve --otlp`` queues it for export); whatever it raises is
    logged, and the run is not affected.
    """

    def __init__(self, source: RunSource, store: RunStore, clock: WallClock, *,
                 workers: int = 256, keep: int = 10_000,
                 on_record: Callable[[RunRecord], object] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"LiveDriver: workers must be >= 1, got {workers}")
        self.source = source
        self.store = store
        self.clock = clock
        self.keep = keep
        self.on_record = on_record
        self._pool = _Workers(workers, self._run)
        self._slots: OrderedDict[str, LiveSlot] = OrderedDict()
        self._lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self.finished = 0
        self.failed = 0  # runs whose worker raised (a bug: the run has no record)
        self.store_failures = 0  # runs the store refused to start or to complete
        self.last_store_error: str | None = None
        self.late_sent = 0  # content/done written after a user cancel was accepted (never)

    # -- requests -------------------------------------------------------------------------------

    def start(self, query: str, session_id: str | None, sink: EventSink) -> LiveSlot:
        """Accept one request: a fresh run id (and session id unless given); run it."""
        run_id = f"run-{uuid.uuid4().hex}"
        slot = LiveSlot(run_id, session_id or f"session-{uuid.uuid4().hex}", query, sink)
        with self._lock:
            self._slots[run_id] = slot
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self._pool.submit(slot)
        return slot

    def slot(self, run_id: str) -> LiveSlot | None:
        """The request with this run id, while it is remembered."""
        return self._slots.get(run_id)

    def disconnect(self, slot: LiveSlot) -> None:
        """The client went away: cancel the run now (CLIENT_DISCONNECTED), then wake it."""
        slot.gone = True
        self._cancel_now(slot, CancellationReason.CLIENT_DISCONNECTED, "client disconnected")
        self._wake(slot)

    def cancel(self, run_id: str) -> CancelAnswer:
        """A user cancel (USER_REQUESTED): accepted only if it is the run's first terminal."""
        slot = self._slots.get(run_id)
        if slot is None:
            return CancelAnswer.UNKNOWN
        if slot.done or not self._cancel_now(slot, CancellationReason.USER_REQUESTED,
                                             "user requested"):
            return CancelAnswer.TERMINAL
        slot.cancel_requested = True
        self._wake(slot)
        return CancelAnswer.ACCEPTED

    def drain(self, grace_s: float) -> int:
        """The server is stopping: give the runs in flight ``grace_s`` seconds to end, then
        cancel the rest (SERVER_SHUTDOWN; a client still connected gets a ``failure`` event
        naming it); the number cancelled."""
        deadline = time.monotonic() + grace_s
        while self.active and time.monotonic() < deadline:
            time.sleep(0.05)
        cancelled = 0
        for slot in list(self._slots.values()):
            if slot.done:
                continue
            slot.stopping = True
            if self._cancel_now(slot, CancellationReason.SERVER_SHUTDOWN,
                                "server shutting down"):
                cancelled += 1
            self._wake(slot)
        return cancelled

    def close(self, timeout_s: float | None = None) -> set[str]:
        """Cancel every run still going (SERVER_SHUTDOWN), wait for the workers to end (at
        most ``timeout_s``); the ids of the runs still in flight then (blocked on a call or on
        a store that does not answer), which the server leaves behind."""
        self.drain(0.0)
        self._pool.shutdown(timeout_s)
        return self.in_flight()

    def in_flight(self) -> set[str]:
        """The ids of the runs accepted and not yet ended (waiting for a worker or running)."""
        with self._lock:
            return {run_id for run_id, slot in self._slots.items() if not slot.done}

    def stats(self) -> dict[str, int]:
        """Runs in flight now, the most held at once, finished, lost to a worker error, failed
        by the store, and content or done events written after a user cancel was accepted."""
        return {"active": self.active, "max_active": self.max_active,
                "finished": self.finished, "worker_errors": self.failed,
                "store_failures": self.store_failures, "late_sent": self.late_sent}

    # -- the server's side of a run -------------------------------------------------------------

    @staticmethod
    def _cancel_now(slot: LiveSlot, reason: CancellationReason, detail: str) -> bool:
        """The run's cancel (:meth:`LiveRun.cancel`) from the server's thread; True if this
        cancel ended the run."""
        live = slot.live
        if live is None:
            return not slot.done  # not started: the worker applies it first thing
        return live.cancel(reason, detail)

    @staticmethod
    def _wake(slot: LiveSlot) -> None:
        env = slot.env
        if env is not None:
            env.wake.set()

    # -- the worker ------------------------------------------------------------------------------

    def _run(self, slot: LiveSlot) -> None:
        try:
            slot.record = self._play(slot)
            error = slot.record.error
            if error is not None and "StoreError" in error:
                with self._lock:
                    self.store_failures += 1
                    self.last_store_error = error
                _log.error("run %s: the store failed: %s", slot.run_id, error)
        except BaseException as exc:  # a bug in a component or here: said, never hidden
            slot.error = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self.failed += 1
            _log.exception("run %s: the worker failed", slot.run_id)
        finally:
            slot.done = True
            slot.sink(None)
            with self._lock:
                self.active -= 1
                self.finished += 1
                self._forget_old()
        if slot.record is not None and self.on_record is not None:
            try:
                self.on_record(slot.record)
            except Exception:  # the run is over and stored: what comes after costs it nothing
                _log.exception("run %s: handing its record on failed", slot.run_id)

    def _play(self, slot: LiveSlot) -> RunRecord:
        """Play the slot's request on this worker thread; its record.

        The run's parts are the source's with the slot's probe, as any submitted run's. It
        gets a harness of its own, though, because a harness owns one environment and this
        one is the run's: a wall clock stepped by this thread alone (simpy is not
        thread-safe), which the server's threads wake and whose every step ticks the slot.
        """
        parts = self.source.parts()
        env = WallClockEnvironment(self.clock, after_step=slot.tick)
        harness = Harness(parts.components, parts.config, store=self.store, env=env)
        handle = harness.submit(slot.query, slot.session_id, run_id=slot.run_id,
                                parts=parts.with_(probe=_TickProbe(slot),
                                                  before_send=slot.before_send))
        slot.env = env
        slot.live = handle.live
        slot.tick()  # a request disconnected or cancelled while it waited for a worker
        env.run(until=handle.process)
        slot.tick()
        return handle.record

    def _forget_old(self) -> None:
        while len(self._slots) > self.keep:
            run_id, oldest = next(iter(self._slots.items()))
            if not oldest.done:
                break
            del self._slots[run_id]

