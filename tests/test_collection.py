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
