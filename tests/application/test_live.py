"""LiveRun: a request and its run's live objects, reachable before the run starts."""

from __future__ import annotations

from harness_lab.application.live import LiveRun
from harness_lab.sse import ChatSseSession
from harness_lab.states import CancellationReason, RunState, SseState
from tests.conftest import build
from tests.test_harness import SUCCESS_STEPS


def live_run() -> LiveRun:
    return LiveRun("run-1", "session-1", "why?", ChatSseSession(lambda: 0.0))


def test_a_cancel_before_the_start_is_left_for_the_run_and_the_first_one_left_wins() -> None:
    live = live_run()
    assert live.cancel(CancellationReason.USER_REQUESTED) is True
    live.disconnect()
    live.server_shutdown()
    assert live.pending_cancel is CancellationReason.USER_REQUESTED
    assert live.sse.state is SseState.DISCONNECTED


def test_a_disconnect_before_the_start_is_left_for_the_run_too() -> None:
    live = live_run()
    live.disconnect()
    assert live.pending_cancel is CancellationReason.CLIENT_DISCONNECTED


def test_a_server_shutdown_cancels_a_run_in_flight_for_that_reason() -> None:
    h = build(SUCCESS_STEPS)
    handle = h.submit("why is checkout slow?")
    h.at(handle, 1.0, handle.live.server_shutdown)
    h.run_all()
    record = handle.record
    assert (record.run_state, record.termination_reason) == (RunState.CANCELLED,
                                                             "SERVER_SHUTDOWN")
    assert record.terminations[0][1] == "server shutting down"
