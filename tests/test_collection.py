from harness_lab.diagnosis.collection import CollectionController
from harness_lab.states import CollectionState, DiagnosisStopReason, InformationGain

G, N = InformationGain.GAINED, InformationGain.NO_GAIN


def test_three_consecutive_no_gains_saturate_collection():
    c = CollectionController(3, 3)
    assert [c.record_gain(g) for g in (N, N, N)] == [False, False, True]
    assert c.state is CollectionState.SATURATED
    assert c.stop_reason is DiagnosisStopReason.INFORMATION_SATURATED


def test_a_gain_resets_the_no_gain_streak():
    c = CollectionController(2, 3)
    for g in (N, G, N):
        c.record_gain(g)
    assert c.state is CollectionState.COLLECTING


def test_stop_required_is_delivered_exactly_once():
    c = CollectionController(1, 3)
    c.record_gain(N)
    assert [c.take_stop_required(), c.take_stop_required()] == [True, False]


def test_budget_reached_leaves_collection_state_unchanged():
    c = CollectionController(3, 3)
    c.budget_reached()
    assert c.state is CollectionState.COLLECTING
    assert c.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED


def test_a_budget_running_out_after_saturation_becomes_the_stop_reason():
    c = CollectionController(1, 3)
    c.record_gain(N)
    c.budget_reached()
    assert c.state is CollectionState.SATURATED
    assert c.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED


def _context():
    import simpy

    from harness_lab.config import HarnessConfig
    from harness_lab.core.context import RunContext

    return RunContext("run-1", "session-1", simpy.Environment(), HarnessConfig())


def test_exhausting_the_budget_ends_the_run_stops_collection_and_traces_the_budget():
    from harness_lab.diagnosis.collection import exhaust_budget
    from harness_lab.errors import BudgetExceeded
    from harness_lab.states import RunState, TraceEventType

    ctx, c = _context(), CollectionController(3, 3)
    exhaust_budget(ctx, c, BudgetExceeded("bytes", 120, 100))
    assert ctx.state is RunState.BUDGET_EXHAUSTED
    assert (c.state, c.stop_reason) == (CollectionState.COLLECTING,
                                        DiagnosisStopReason.BUDGET_LIMIT_REACHED)
    [event] = [e for e in ctx.tracer.events if e.type is TraceEventType.BUDGET_EXHAUSTED]
    assert dict(event.detail) == {"kind": "bytes", "value": 120, "limit": 100}


def test_exhausting_the_budget_of_a_run_already_ended_keeps_its_first_terminal_state():
    from harness_lab.diagnosis.collection import exhaust_budget
    from harness_lab.errors import BudgetExceeded
    from harness_lab.states import CancellationReason, RunState

    ctx, c = _context(), CollectionController(3, 3)
    ctx.cancel(CancellationReason.CLIENT_DISCONNECTED, "client left")
    exhaust_budget(ctx, c, BudgetExceeded("tokens", 11, 10))
    assert ctx.state is RunState.CANCELLED
    assert c.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
