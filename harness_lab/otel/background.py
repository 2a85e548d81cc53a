"""Runs exported as they finish, away from the threads that run them (:class:`BackgroundExport`).

A program that makes runs all the time (``serve``, a pytest session) hands each finished
record to :meth:`BackgroundExport.submit`, which only queues it: one thread of its own turns
the queued runs into spans and sends them, as many runs in one export call as have queued
up meanwhile (so a busy program sends few large requests, an idle one a request per run).
The queue is bounded: a run that finds it full (the receiver slower than the runs, or gone)
is dropped and counted, never waited for. A receiver that cannot be reached costs the runs
nothing: each failure is counted, and said in one warning line at most once a minute.
:meth:`BackgroundExport.close` sends what is queued and shuts the exporter down.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from harness_lab.otel.export import OtlpExportError, export_runs, otlp_exporter
from harness_lab.redact import shown_url

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from harness_lab.record import RunRecord

__all__ = ["BATCH_RUNS", "QUEUE_RUNS", "WARN_EVERY_S", "BackgroundExport", "BackgroundSummary"]

QUEUE_RUNS: Final = 2_048
"""Finished runs waiting to be sent, at most (a record holds some 30 KiB: 60 MiB at worst);
a run beyond them is dropped (and counted)."""
BATCH_RUNS: Final = 256
"""Runs sent in one export call at most (its spans go in OTLP requests of at most
:data:`~harness_lab.otel.export.BATCH_SPANS`)."""
WARN_EVERY_S: Final = 60.0
"""Seconds between two warnings about runs that could not be sent."""

_log = logging.getLogger("harness_lab.otel")

_Run = tuple["RunRecord", "str | None", "float | None"]
_STOP: Final = None
_THREAD: Final = "otlp-export"


class _OwnWordsOnly(logging.Filter):
    """Drops what the exporter logs on the export thread (a line per retry of every batch):
    :class:`BackgroundExport` says what was not sent itself, at most once a minute."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a record logged on the export thread."""
        return record.threadName != _THREAD


_QUIET = _OwnWordsOnly()


@dataclass(frozen=True, slots=True)
class BackgroundSummary:
    """What a :class:`BackgroundExport` did: runs and spans sent; runs not sent because the
    receiver refused them or could not be reached (``failed``), because the queue was full
    (``dropped``), or because they were still queued when :meth:`~BackgroundExport.close`
    gave up (``abandoned``)."""

    runs: int
    spans: int
    failed: int
    dropped: int
    abandoned: int

    @property
    def lost(self) -> int:
        """Runs not sent, for whatever reason."""
        return self.failed + self.dropped + self.abandoned

    def describe(self, target: str) -> str:
        """One line: what was sent to ``target``, and what was not."""
        line = (f"otlp: {self.spans:,} span(s) of {self.runs:,} run(s) sent to "
                f"{shown_url(target)}")
        if self.lost:
            parts = [f"{n:,} {why}" for n, why in (
                (self.failed, "refused or unreachable"), (self.dropped, "dropped, the queue full"),
                (self.abandoned, "still queued at the end")) if n]
            line += f"; {self.lost:,} run(s) not sent ({', '.join(parts)})"
        return line


class BackgroundExport:
    """A bounded queue of finished runs and the thread that sends them as OTLP traces.

    ``endpoint`` is the traces URL (an OTLP/HTTP exporter is made for it), or ``exporter``
    any OpenTelemetry ``SpanExporter`` (shut down by :meth:`close` either way). ``capacity``
    bounds the queue; ``warn_every_s`` spaces the warnings about runs not sent.
    """

    def __init__(self, endpoint: str | None = None, *, exporter: SpanExporter | None = None,
                 capacity: int = QUEUE_RUNS, warn_every_s: float = WARN_EVERY_S) -> None:
        self.target = (type(exporter).__name__ if exporter is not None
                       else endpoint or "the OTLP default endpoint")
        self._exporter = exporter if exporter is not None else otlp_exporter(endpoint)
        logging.getLogger(type(self._exporter).__module__).addFilter(_QUIET)
        self._queue: queue.Queue[_Run | None] = queue.Queue(maxsize=capacity)
        self._warn_every_s = warn_every_s
        self._warned_at: float | None = None
        self._unsaid = 0  # runs lost since the last warning
        self._lock = threading.Lock()
        self._abandon = threading.Event()
        self.runs = self.spans = self.failed = self.dropped = self.abandoned = 0
        self._closed = False
        self._thread = threading.Thread(target=self._send_queued, name=_THREAD, daemon=True)
        self._thread.start()

    def submit(self, record: RunRecord, scenario: str | None = None,
               epoch: float | None = None) -> bool:
        """Queue ``record`` (played as ``scenario``; virtual second 0 at ``epoch``, None: its
        own, :func:`~harness_lab.otel.clock.epoch_of`) and return at once: True, or False
        when the queue is full or closed and the run is dropped."""
        if not self._closed:
            try:
                self._queue.put_nowait((record, scenario, epoch))
                return True
            except queue.Full:
                pass
        with self._lock:
            self.dropped += 1
        self._lost(1, "the export has ended" if self._closed else "the export queue is full")
        return False

    def summary(self) -> BackgroundSummary:
        """What was sent and lost so far."""
        with self._lock:
            return BackgroundSummary(self.runs, self.spans, self.failed, self.dropped,
                                     self.abandoned)

    def close(self, timeout_s: float = 30.0) -> BackgroundSummary:
        """Send what is queued (for ``timeout_s`` at most; what is left then is abandoned),
        stop the thread, shut the exporter down; what was sent and lost."""
        if not self._closed:
            self._closed = True
            deadline = time.monotonic() + timeout_s
            self._put_stop(deadline)
            self._thread.join(max(0.0, deadline - time.monotonic()))
            if self._thread.is_alive():  # a receiver that does not answer: stop trying
                self._abandon.set()
                self._exporter.shutdown()  # ends the exporter's retries at once
                self._thread.join(10.0)
            else:
                self._exporter.shutdown()
        return self.summary()

    def _put_stop(self, deadline: float) -> None:
        """Queue the end behind what is queued; past ``deadline``, what is queued is
        abandoned, so the thread makes room for it at once."""
        while self._thread.is_alive():
            try:
                self._queue.put(_STOP, timeout=max(0.01, deadline - time.monotonic()))
                return
            except queue.Full:
                if time.monotonic() >= deadline:
                    self._abandon.set()

    def _send_queued(self) -> None:
        stopping = False
        while not stopping:
            batch: list[_Run] = []
            item = self._queue.get()
            while item is not _STOP:
                batch.append(item)
                if len(batch) >= BATCH_RUNS:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            stopping = item is _STOP
            if self._abandon.is_set():
                with self._lock:
                    self.abandoned += len(batch)
                continue
            if batch:
                self._send(batch)

    def _send(self, batch: list[_Run]) -> None:
        try:
            sent = export_runs(batch, self._exporter, self.target)
        except OtlpExportError as exc:
            # the spans sent before the refusal went out, but no run of the batch is whole
            self._count(0, exc.sent, len(batch))
            self._lost(len(batch), "refused, or unreachable within the exporter's retries")
        except Exception as exc:  # noqa: BLE001 - a bug costs this batch, never the thread
            self._count(0, 0, len(batch))
            self._lost(len(batch), f"{type(exc).__name__}: {exc}")
        else:
            self._count(sent.runs, sent.spans, 0)

    def _count(self, runs: int, spans: int, failed: int) -> None:
        with self._lock:
            self.runs += runs
            self.spans += spans
            self.failed += failed

    def _lost(self, runs: int, why: str) -> None:
        """Say that ``runs`` run(s) were not sent, at most once per ``warn_every_s``."""
        now = time.monotonic()
        with self._lock:
            self._unsaid += runs
            if self._warned_at is not None and now - self._warned_at < self._warn_every_s:
                return
            unsaid, self._unsaid, self._warned_at = self._unsaid, 0, now
        _log.warning("otlp: %s run(s) not sent to %s: %s (said at most once every %g s)",
                     f"{unsaid:,}", self.target, why, self._warn_every_s)
