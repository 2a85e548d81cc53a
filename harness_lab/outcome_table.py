"""The outcome table of SPEC §4 as data: what each case's run must end as.

:data:`OUTCOME_TABLE` is written by hand from the specification, not derived from the code
it checks; so is the ReleaseOutcome -> ``diagnosis_run.status`` mapping of doc §12.2. It is
plain data, free of pandas, so the scenario runner and the sweep workers can read it without
the reporting stack (``harness_lab.report.mapping`` builds the frames from it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness_lab.states import FallbackType, ReleaseOutcome, RunState, StoredRunStatus

__all__ = [
    "OUTCOME_BY_CASE",
    "OUTCOME_TABLE",
    "STORED_STATUS_FOR_OUTCOME",
    "ExpectedOutcome",
    "expected_outcome",
]

RS, RO, FT, DB = RunState, ReleaseOutcome, FallbackType, StoredRunStatus


@dataclass(frozen=True, slots=True)
class ExpectedOutcome:
    """One row of the SPEC §4 outcome table, with the stored status doc §12.2 gives it."""

    case: str
    description: str
    run_state: RunState
    release_outcome: ReleaseOutcome
    fallback_type: FallbackType | None
    db_status: StoredRunStatus


OUTCOME_TABLE: tuple[ExpectedOutcome, ...] = (
    ExpectedOutcome("conclusion_guards_pass", "conclusion, guards pass",
                    RS.SUCCESS, RO.SUCCESS, None, DB.SUCCESS),
    ExpectedOutcome("missing_context", "missing context, zero tools, legal end",
                    RS.SUCCESS, RO.FALLBACK, FT.MISSING_REQUIRED_CONTEXT, DB.SUCCESS),
    ExpectedOutcome("insufficient_evidence", "evidence insufficient after limited checks",
                    RS.SUCCESS, RO.FALLBACK, FT.INSUFFICIENT_EVIDENCE, DB.SUCCESS),
    ExpectedOutcome("saturated_progress", "saturated, safe progress",
                    RS.SUCCESS, RO.FALLBACK, FT.INSUFFICIENT_EVIDENCE, DB.SUCCESS),
    ExpectedOutcome("protocol_stop_progress", "protocol stop, safe progress",
                    RS.SUCCESS, RO.FALLBACK, FT.INSUFFICIENT_EVIDENCE, DB.SUCCESS),
    ExpectedOutcome("evidence_guard_failed", "EvidenceGuard finally fails",
                    RS.SUCCESS, RO.FALLBACK, FT.EVIDENCE_VALIDATION_FAILED, DB.SUCCESS),
    ExpectedOutcome("semantic_unsupported", "SemanticGuard says unsupported",
                    RS.SUCCESS, RO.FALLBACK, FT.SEMANTIC_UNSUPPORTED, DB.SUCCESS),
    ExpectedOutcome("semantic_unavailable", "SemanticGuard technically unavailable",
                    RS.SUCCESS, RO.FALLBACK, FT.SEMANTIC_UNAVAILABLE, DB.SUCCESS),
    ExpectedOutcome("budget_progress", "budget exhausted, safe progress",
                    RS.BUDGET_EXHAUSTED, RO.FALLBACK, FT.INSUFFICIENT_EVIDENCE, DB.SUCCESS),
    ExpectedOutcome("timeout_no_content", "timeout, no safe content",
                    RS.TIMED_OUT, RO.FAILED, None, DB.FAILED),
    ExpectedOutcome("budget_no_progress", "budget exhausted, no safe progress",
                    RS.BUDGET_EXHAUSTED, RO.FAILED, None, DB.FAILED),
    ExpectedOutcome("internal_failure", "unrecoverable internal failure",
                    RS.FAILED, RO.FAILED, None, DB.FAILED),
    ExpectedOutcome("client_disconnect", "client disconnect",
                    RS.CANCELLED, RO.CANCELLED, None, DB.CANCELLED),
)
"""The thirteen rows of SPEC §4, in the specification's order."""

OUTCOME_BY_CASE: Mapping[str, ExpectedOutcome] = {row.case: row for row in OUTCOME_TABLE}
""":data:`OUTCOME_TABLE` keyed by ``case``."""

STORED_STATUS_FOR_OUTCOME: Mapping[str, str] = {
    "SUCCESS": "SUCCESS",
    "FALLBACK": "SUCCESS",
    "FAILED": "FAILED",
    "CANCELLED": "CANCELLED",
}
"""Doc §12.2: the ``diagnosis_run.status`` each ReleaseOutcome is stored with."""

def expected_outcome(case: str) -> ExpectedOutcome:
    """The outcome-table row of ``case``; KeyError naming the known cases otherwise."""
    try:
        return OUTCOME_BY_CASE[case]
    except KeyError:
        known = ", ".join(OUTCOME_BY_CASE)
        raise KeyError(f"unknown outcome case {case!r}; known cases: {known}") from None
