"""CollectionController: owner of CollectionState, the no-gain and violation streaks,
the stop reason and the STOP_REQUIRED delivery flag (doc §8)."""

from __future__ import annotations

from harness_lab.core.context import RunContext
from harness_lab.errors import BudgetExceeded
from harness_lab.states import (
    COLLECTION_TRANSITIONS,
    CancellationReason,
    CollectionState,
    DiagnosisStopReason,
    InformationGain,
    TraceEventStatus,
    TraceEventType,
    advance,
)

__all__ = ["CollectionController", "exhaust_budget"]


def exhaust_budget(ctx: RunContext, collection: CollectionController,
                   exc: BudgetExceeded) -> None:
    """A hard budget ran out (doc §3.3): the one way a run is exhausted, wherever it happens.

    The run ends BUDGET_EXHAUSTED first (unless it already ended otherwise: the first terminal
    wins), the collection's stop reason becomes BUDGET_LIMIT_REACHED, and a BUDGET_EXHAUSTED
    trace event names the budget, its value and its limit. What is then released is the
    release's rule (``ReleasePipeline._budget_release``).
    """
    ctx.cancellation.cancel(CancellationReason.BUDGET_EXHAUSTED, str(exc))
    collection.budget_reached()
    ctx.tracer.emit(TraceEventType.BUDGET_EXHAUSTED, TraceEventStatus.OK,
                    {"kind": exc.kind, "value": exc.value, "limit": exc.limit})


class CollectionController:
    """Decides when evidence collection is saturated.

    ``no_gain_threshold`` consecutive NO_GAIN results, or ``violation_threshold`` consecutive
    progress-protocol violations, move COLLECTING -> SATURATED (terminal). GAINED resets the
    no-gain streak; a valid progress report resets the violation streak. Budget exhaustion sets
    BUDGET_LIMIT_REACHED without touching CollectionState.
    """

    __slots__ = ("state", "no_gain_streak", "violation_streak", "stop_reason",
                 "stop_required_delivered", "no_gain_threshold", "violation_threshold",
                 "gains", "_scopes")

    def __init__(self, no_gain_threshold: int, violation_threshold: int) -> None:
        self.state = CollectionState.COLLECTING
        self.no_gain_streak = 0
        self.violation_streak = 0
        self.stop_reason: DiagnosisStopReason | None = None
        self.stop_required_delivered = False
        self.no_gain_threshold = no_gain_threshold
        self.violation_threshold = violation_threshold
        self.gains: list[InformationGain] = []
        self._scopes: set[tuple[str, str]] = set()

    @property
    def saturated(self) -> bool:
        """True once collection is SATURATED."""
        return self.state is CollectionState.SATURATED

    def seen(self, tool: str, normalized_scope: str) -> None:
        """Record the ``tool_name + normalized_scope`` of a request that gave a READY result."""
        self._scopes.add((tool, normalized_scope))

    def is_duplicate(self, tool: str, normalized_scope: str) -> bool:
        """True when this exact ``tool_name + normalized_scope`` already gave a READY result.

        A retry of a call that failed technically is not a duplicate: it produced nothing.
        """
        return (tool, normalized_scope) in self._scopes

    def record_gain(self, gain: InformationGain) -> bool:
        """Apply one InformationGain; True if it saturated collection just now."""
        self.gains.append(gain)
        if gain is InformationGain.GAINED:
            self.no_gain_streak = 0
            return False
        self.no_gain_streak += 1
        if self.no_gain_streak >= self.no_gain_threshold:
            return self._saturate(DiagnosisStopReason.INFORMATION_SATURATED)
        return False

    def record_violation(self) -> bool:
        """Count one progress-protocol violation; True if it saturated collection just now."""
        self.violation_streak += 1
        if self.violation_streak >= self.violation_threshold:
            return self._saturate(DiagnosisStopReason.PROGRESS_PROTOCOL_VIOLATED)
        return False

    def record_valid_report(self) -> None:
        """A valid progress report ends the violation streak."""
        self.violation_streak = 0

    def budget_reached(self) -> None:
        """Mark BUDGET_LIMIT_REACHED; CollectionState is deliberately unchanged (doc §8.1).

        The budget's reason replaces an earlier saturation's: the loop stopped because the
        budget ran out, whatever the collection's state then was.
        """
        self.stop_reason = DiagnosisStopReason.BUDGET_LIMIT_REACHED

    def take_stop_required(self) -> bool:
        """True exactly once after saturation: the STOP_REQUIRED instruction is delivered."""
        if self.saturated and not self.stop_required_delivered:
            self.stop_required_delivered = True
            return True
        return False

    def _saturate(self, reason: DiagnosisStopReason) -> bool:
        if self.saturated:
            return False
        self.state = advance("CollectionController", COLLECTION_TRANSITIONS, self.state,
                             CollectionState.SATURATED)
        if self.stop_reason is None:
            self.stop_reason = reason
        return True
