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
