"""The null store keeps nothing but answers like a store for a fresh session."""

from __future__ import annotations

from harness_lab.states import TraceEventStatus, TraceEventType, TracePhase
from harness_lab.store.base import RUN_COLUMNS, RunCompletion, RunStart
from harness_lab.store.null import NullRunStore
from harness_lab.trace import TraceEvent

STARTED = TraceEvent("r1", 0, 0.0, TraceEventType.RUN_STARTED, TracePhase.RUN,
                     TraceEventStatus.OK, {})


def completion() -> RunCompletion:
    return RunCompletion(
        run_id="r1", status="SUCCESS", release_outcome="FALLBACK",
        fallback_type="MISSING_REQUIRED_CONTEXT", answer_json="{}", conclusion=None,
        published_result=None, termination_state="SUCCESS", termination_reason="completed",
        duration_ms=1500.0, input_tokens=3, output_tokens=4, total_tokens=7, agent_steps=1,
        tool_calls=0, finished_at=1.5, invocations=(), trace=())


def test_a_fresh_session_has_no_history_and_no_previous_turn() -> None:
    ctx = NullRunStore().read_session("s1", 6)
    assert (ctx.history, ctx.previous_turn) == ((), None)


def test_a_run_in_flight_reads_as_running_and_is_forgotten_once_completed() -> None:
    store = NullRunStore()
    store.insert_running(RunStart("r1", "s1", "why?", 0.0), STARTED)
    store.record_intent("r1", "DIAGNOSIS")
    running = store.get_run("r1")
    assert running is not None and running["status"] == "RUNNING"
    row = store.complete(completion())
    assert list(row) == list(RUN_COLUMNS)
    assert (row["status"], row["intent"], row["fallback_type"]) == (
        "SUCCESS", "DIAGNOSIS", "MISSING_REQUIRED_CONTEXT")
    assert store.get_run("r1") is None
