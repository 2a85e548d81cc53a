"""The tracer numbers a run's events: one sequence number each, also across threads."""

from __future__ import annotations

import threading
import time

from harness_lab.states import TraceEventStatus, TraceEventType
from harness_lab.trace import Tracer


def test_two_threads_emitting_at_once_never_share_a_sequence_number() -> None:
    def clock() -> float:
        time.sleep(0)  # let the other thread run between numbering and appending
        return 1.0

    tracer = Tracer("r1", clock)
    start = threading.Barrier(2)

    def emit(kind: TraceEventType) -> None:
        start.wait()
        for _ in range(2_000):
            tracer.emit(kind, TraceEventStatus.REJECTED)

    threads = [threading.Thread(target=emit, args=(kind,)) for kind in (
        TraceEventType.TERMINATION_REJECTED, TraceEventType.PROGRESS_PROTOCOL_VIOLATION)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [e.seq for e in tracer.events] == list(range(4_000))


def test_events_are_numbered_in_order_and_stamped_by_the_clock() -> None:
    tracer = Tracer("r1", lambda: 2.5)
    first = tracer.emit(TraceEventType.RUN_STARTED)
    second = tracer.emit(TraceEventType.ROUTING_ATTEMPT, TraceEventStatus.STARTED, {"n": 1})
    assert (first.seq, first.t, second.seq, dict(second.detail)) == (0, 2.5, 1, {"n": 1})
    assert tracer.events == [first, second]
