"""Known defects that can be seeded into the harness, for testing the testers.

A harness that breaks a lifecycle rule must be caught by the invariant checker, the fault
explorer and the property search. These switches put such bugs in on purpose, at least one
per rule family of the lifecycle document (:data:`FAMILIES`). They are **test-only**: set
them through ``HarnessConfig(defects=...)`` or a scenario's ``config.defects`` list, never in
production configurations. With no defect seeded (the default) none of these code paths
exists. ``docs/defects.md`` says which detector catches which defect.
"""

from __future__ import annotations

from enum import StrEnum

from harness_lab.states import RunState, StoredRunStatus

__all__ = ["FAMILIES", "Defect", "stored_status_of_run_state"]


class Defect(StrEnum):
    """One seeded defect."""

    # RunLifecycle lets a later terminal state override the first (no compare-and-set),
    # and the boundary after a call stops discarding late results.
    LATE_SUCCESS_OVERRIDES_CANCEL = "late_success_overrides_cancel"
    # A user's cancel is acknowledged but never reaches RunCancellation: the run goes on.
    USER_CANCEL_NOT_TERMINAL = "user_cancel_not_terminal"
    # checkActive compares the clock with > instead of >=: a boundary at the deadline's
    # very instant still passes.
    DEADLINE_EXCLUSIVE = "deadline_exclusive"
    # A tool call the budget refuses is still counted as a call made.
    REFUSED_TOOL_CALL_COUNTED = "refused_tool_call_counted"
    # The tool boundary forgets the SATURATED preflight check.
    EVIDENCE_TOOL_AFTER_SATURATION = "evidence_tool_after_saturation"
    # A tool's technical failure resets the no-gain streak, as if it had gained.
    ERROR_RESETS_NO_GAIN = "error_resets_no_gain"
    # A reply that leaves out its required progress report is not counted as a violation.
    MISSING_REPORT_NOT_VIOLATION = "missing_report_not_violation"
    # The repaired draft goes on to the SemanticGuard without the EvidenceGuard recheck.
    REPAIR_RELEASED_UNCHECKED = "repair_released_unchecked"
    # A SemanticGuard that is technically unavailable counts as SUPPORTED.
    SEMANTIC_UNAVAILABLE_AS_SUPPORTED = "semantic_unavailable_as_supported"
    # The SSE session accepts, and the application sends, a second content event.
    SECOND_CONTENT_EVENT = "second_content_event"
    # The completion stores the status of the RunState, not the doc §12.2 mapping of the
    # ReleaseOutcome (a budget fallback is stored FAILED).
    STORED_STATUS_FROM_RUN_STATE = "stored_status_from_run_state"
    # The application persists published_result for fallbacks too.
    FALLBACK_AS_PREVIOUS_TURN = "fallback_as_previous_turn"


FAMILIES: dict[Defect, str] = {
    Defect.LATE_SUCCESS_OVERRIDES_CANCEL: "lifecycle CAS",
    Defect.USER_CANCEL_NOT_TERMINAL: "cancellation",
    Defect.DEADLINE_EXCLUSIVE: "deadline",
    Defect.REFUSED_TOOL_CALL_COUNTED: "budget",
    Defect.EVIDENCE_TOOL_AFTER_SATURATION: "tool boundary",
    Defect.ERROR_RESETS_NO_GAIN: "collection / no-gain",
    Defect.MISSING_REPORT_NOT_VIOLATION: "progress protocol",
    Defect.REPAIR_RELEASED_UNCHECKED: "release and repair",
    Defect.SEMANTIC_UNAVAILABLE_AS_SUPPORTED: "SemanticGuard",
    Defect.SECOND_CONTENT_EVENT: "SSE",
    Defect.STORED_STATUS_FROM_RUN_STATE: "persistence",
    Defect.FALLBACK_AS_PREVIOUS_TURN: "previous turn",
}
"""The rule family of the lifecycle document each defect breaks."""


def stored_status_of_run_state(state: RunState) -> StoredRunStatus:
    """The wrong stored status of :attr:`Defect.STORED_STATUS_FROM_RUN_STATE`: the RunState's
    own name where the store has one, FAILED for every other terminal state."""
    if state is RunState.SUCCESS:
        return StoredRunStatus.SUCCESS
    if state is RunState.CANCELLED:
        return StoredRunStatus.CANCELLED
    return StoredRunStatus.FAILED
