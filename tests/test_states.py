import pytest

from harness_lab.states import (
    RUN_TRANSITIONS,
    IllegalTransition,
    ReleaseOutcome,
    RunState,
    StoredRunStatus,
    advance,
)


def test_an_illegal_transition_raises_naming_the_object():
    with pytest.raises(IllegalTransition, match="RunLifecycle\\(r9\\)"):
        advance("RunLifecycle(r9)", RUN_TRANSITIONS, RunState.SUCCESS, RunState.FAILED)


def test_release_outcomes_map_to_the_stored_status_of_the_document():
    got = {o.value: StoredRunStatus.for_outcome(o).value for o in ReleaseOutcome}
    assert got == {"SUCCESS": "SUCCESS", "FALLBACK": "SUCCESS", "FAILED": "FAILED",
                   "CANCELLED": "CANCELLED"}
