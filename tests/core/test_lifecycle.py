import threading

from harness_lab.core import RunCancellation, RunLifecycle
from harness_lab.states import CancellationReason, RunState


def test_a_new_run_is_running_and_active():
    lc = RunLifecycle("r1")
    assert lc.state is RunState.RUNNING and lc.is_active


def test_the_first_terminal_wins_and_a_late_success_is_refused():
    lc = RunLifecycle("r1")
    assert lc.finish(RunState.CANCELLED, "client", 1.0) is True
    assert lc.finish(RunState.SUCCESS, "late", 2.0) is False
    assert lc.state is RunState.CANCELLED
    assert lc.termination.at == 1.0


def test_only_one_of_many_threads_terminates_the_run():
    lc = RunLifecycle("r1")
    wins = []
    barrier = threading.Barrier(8)

    def go(i):
        barrier.wait()
        wins.append(lc.finish(RunState.FAILED if i % 2 else RunState.SUCCESS, str(i), 0.0))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins.count(True) == 1


def test_the_first_cancellation_reason_wins_and_maps_to_its_run_state():
    lc = RunLifecycle("r1")
    c = RunCancellation(lc, lambda: 3.0)
    assert c.cancel(CancellationReason.DEADLINE_EXCEEDED)
    assert not c.cancel(CancellationReason.CLIENT_DISCONNECTED)
    assert c.reason is CancellationReason.DEADLINE_EXCEEDED
    assert lc.state is RunState.TIMED_OUT


def test_each_cancellation_reason_maps_to_the_documented_run_state():
    expected = {
        "CLIENT_DISCONNECTED": "CANCELLED",
        "USER_REQUESTED": "CANCELLED",
        "DEADLINE_EXCEEDED": "TIMED_OUT",
        "BUDGET_EXHAUSTED": "BUDGET_EXHAUSTED",
        "INTERNAL_FAILURE": "FAILED",
        "SERVER_SHUTDOWN": "CANCELLED",  # toolkit-added: the live server stopping (SPEC 9)
    }
    assert {r.value: r.run_state.value for r in CancellationReason} == expected


def test_a_cancel_after_the_run_ended_is_recorded_but_ended_nothing():
    lc = RunLifecycle("r1")
    c = RunCancellation(lc, lambda: 3.0)
    lc.finish(RunState.SUCCESS, "completed", 2.0)
    assert not c.cancel(CancellationReason.CLIENT_DISCONNECTED)
    assert c.reason is CancellationReason.CLIENT_DISCONNECTED
    assert c.ended_by is None


def test_the_cancel_that_ended_the_run_is_named_as_ending_it():
    c = RunCancellation(RunLifecycle("r1"), lambda: 3.0)
    c.cancel(CancellationReason.USER_REQUESTED)
    assert c.ended_by is CancellationReason.USER_REQUESTED


def _rejections(tracer):
    return [(e.t, e.status.value, dict(e.detail)) for e in tracer.events
            if e.type.value == "TERMINATION_REJECTED"]


def test_an_attempt_that_loses_to_an_earlier_termination_is_traced_with_who_won():
    from harness_lab.trace import Tracer

    tracer = Tracer("r1", lambda: 7.0)
    lc = RunLifecycle("r1", tracer=tracer)
    c = RunCancellation(lc, lambda: 7.0)
    lc.finish(RunState.TIMED_OUT, "before tool:logs", 5.0, "DEADLINE_EXCEEDED")
    assert not c.cancel(CancellationReason.CLIENT_DISCONNECTED, "client disconnected")
    assert _rejections(tracer) == [(7.0, "REJECTED", {
        "state": "CANCELLED", "reason": "CLIENT_DISCONNECTED", "at": 7.0,
        "lost_to": "TIMED_OUT", "lost_to_reason": "DEADLINE_EXCEEDED", "lost_to_at": 5.0})]


def test_a_losing_attempt_without_a_cause_is_traced_with_its_reason_text():
    from harness_lab.trace import Tracer

    tracer = Tracer("r1", lambda: 2.0)
    lc = RunLifecycle("r1", tracer=tracer)
    lc.finish(RunState.CANCELLED, "user", 1.0, "USER_REQUESTED")
    lc.finish(RunState.SUCCESS, "completed", 2.0)
    assert [d["reason"] for _, _, d in _rejections(tracer)] == ["completed"]
    assert [d["lost_to_reason"] for _, _, d in _rejections(tracer)] == ["USER_REQUESTED"]


def test_the_winning_termination_traces_no_rejection():
    from harness_lab.trace import Tracer

    tracer = Tracer("r1", lambda: 1.0)
    lc = RunLifecycle("r1", tracer=tracer)
    lc.finish(RunState.SUCCESS, "completed", 1.0)
    assert _rejections(tracer) == []


def test_an_attempt_after_run_finished_is_not_traced_since_the_trace_is_closed():
    from harness_lab.states import TraceEventType
    from harness_lab.trace import Tracer

    tracer = Tracer("r1", lambda: 3.0)
    lc = RunLifecycle("r1", tracer=tracer)
    lc.finish(RunState.SUCCESS, "completed", 2.0)
    tracer.emit(TraceEventType.RUN_FINISHED)
    RunCancellation(lc, lambda: 3.0).cancel(CancellationReason.CLIENT_DISCONNECTED)
    assert _rejections(tracer) == []
    assert tracer.events[-1].type is TraceEventType.RUN_FINISHED


def test_a_cancel_repeating_the_one_that_ended_the_run_is_not_traced_as_a_loss():
    from harness_lab.trace import Tracer

    tracer = Tracer("r1", lambda: 2.0)
    lc = RunLifecycle("r1", tracer=tracer)
    c = RunCancellation(lc, lambda: 2.0)
    assert c.cancel(CancellationReason.USER_REQUESTED, "user requested")
    assert not c.cancel(CancellationReason.USER_REQUESTED, "user requested")
    assert _rejections(tracer) == []
    assert not c.cancel(CancellationReason.CLIENT_DISCONNECTED, "client disconnected")
    assert [d["reason"] for _, _, d in _rejections(tracer)] == ["CLIENT_DISCONNECTED"]


def test_finishing_with_running_is_refused_as_an_illegal_transition():
    import pytest

    from harness_lab.states import IllegalTransition

    lc = RunLifecycle("r1")
    with pytest.raises(IllegalTransition, match="RUNNING"):
        lc.finish(RunState.RUNNING, "not a terminal state", 1.0)
    assert lc.is_active and lc.history == []
