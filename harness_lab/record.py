"""RunRecord: one finished run as immutable data, with every state axis.

Reports, plots, pytest assertions and the invariant checker read records, never the live
objects of a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness_lab.codec import to_data
from harness_lab.core.budget import Usage
from harness_lab.frozen import value_class
from harness_lab.messages import GuardRequest, RepairRequest
from harness_lab.sse import SseEvent
from harness_lab.states import (
    ChatApplicationStatus,
    CollectionState,
    DiagnosisStopReason,
    FallbackType,
    InformationGain,
    IntentType,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseEventKind,
    SseState,
    StoredRunStatus,
    TraceEventType,
)
from harness_lab.tools.records import CanonicalInvocation, ToolRejection
from harness_lab.trace import TraceEvent

__all__ = ["RunRecord"]


def _v(e: Any) -> Any:
    return None if e is None else e.value


@dataclass(frozen=True, slots=True, init=False)
class RunRecord:
    """Everything one run did and ended as; frozen, cheap to keep, one call to a dict."""

    run_id: str
    session_id: str
    query: str
    intent: IntentType | None
    run_state: RunState
    termination_reason: str | None
    release_outcome: ReleaseOutcome
    fallback_type: FallbackType | None
    stored_status: StoredRunStatus | None
    sse_state: SseState
    collection_state: CollectionState | None
    stop_reason: DiagnosisStopReason | None
    semantic_verdict: SemanticVerdict | None
    statuses: tuple[ChatApplicationStatus, ...]
    usage: Usage
    headroom: Mapping[str, int | None]
    started_at: float
    finished_at: float
    agent_steps: int
    content: Mapping[str, Any] | None
    failure: Mapping[str, Any] | None
    sse_events: tuple[SseEvent, ...]
    sse_refused: tuple[SseEventKind, ...]
    trace: tuple[TraceEvent, ...]
    invocations: tuple[CanonicalInvocation, ...]
    rejections: tuple[ToolRejection, ...]
    gains: tuple[InformationGain, ...]
    stop_required_delivered: bool
    evidence_repaired: bool
    deadline_at: float
    discarded: tuple[tuple[str, str, float], ...]
    stored_row: Mapping[str, Any] | None
    terminations: tuple[tuple[str, str, float], ...] = ()  # (state, reason, at) of each
    error: str | None = None
    draft_error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    termination_causes: tuple[str, ...] = ()  # each termination's CancellationReason, or
    # "completed" (parallel to ``terminations``)
    sse_history: tuple[tuple[str, float], ...] = ()  # (SseState, at) of each state entered
    sse_trace_marks: tuple[int, ...] = ()  # per SSE event: the trace events sent before it
    guard_requests: tuple[GuardRequest, ...] = ()  # what each SemanticGuard call received
    repair_requests: tuple[RepairRequest, ...] = ()  # what each EvidenceRepair call received

    def __init__(self,
                 run_id: str, session_id: str, query: str, intent: IntentType | None,
                 run_state: RunState, termination_reason: str | None,
                 release_outcome: ReleaseOutcome, fallback_type: FallbackType | None,
                 stored_status: StoredRunStatus | None, sse_state: SseState,
                 collection_state: CollectionState | None, stop_reason: DiagnosisStopReason | None,
                 semantic_verdict: SemanticVerdict | None,
                 statuses: tuple[ChatApplicationStatus, ...], usage: Usage,
                 headroom: Mapping[str, int | None], started_at: float, finished_at: float,
                 agent_steps: int, content: Mapping[str, Any] | None,
                 failure: Mapping[str, Any] | None, sse_events: tuple[SseEvent, ...],
                 sse_refused: tuple[SseEventKind, ...], trace: tuple[TraceEvent, ...],
                 invocations: tuple[CanonicalInvocation, ...],
                 rejections: tuple[ToolRejection, ...], gains: tuple[InformationGain, ...],
                 stop_required_delivered: bool, evidence_repaired: bool, deadline_at: float,
                 discarded: tuple[tuple[str, str, float], ...],
                 stored_row: Mapping[str, Any] | None,
                 terminations: tuple[tuple[str, str, float], ...] = (), error: str | None = None,
                 draft_error: str | None = None, extra: Mapping[str, Any] | None = None,
                 termination_causes: tuple[str, ...] = (),
                 sse_history: tuple[tuple[str, float], ...] = (),
                 sse_trace_marks: tuple[int, ...] = (),
                 guard_requests: tuple[GuardRequest, ...] = (),
                 repair_requests: tuple[RepairRequest, ...] = ()) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "intent", intent)
        object.__setattr__(self, "run_state", run_state)
        object.__setattr__(self, "termination_reason", termination_reason)
        object.__setattr__(self, "release_outcome", release_outcome)
        object.__setattr__(self, "fallback_type", fallback_type)
        object.__setattr__(self, "stored_status", stored_status)
        object.__setattr__(self, "sse_state", sse_state)
        object.__setattr__(self, "collection_state", collection_state)
        object.__setattr__(self, "stop_reason", stop_reason)
        object.__setattr__(self, "semantic_verdict", semantic_verdict)
        object.__setattr__(self, "statuses", statuses)
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "headroom", headroom)
        object.__setattr__(self, "started_at", started_at)
        object.__setattr__(self, "finished_at", finished_at)
        object.__setattr__(self, "agent_steps", agent_steps)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "failure", failure)
        object.__setattr__(self, "sse_events", sse_events)
        object.__setattr__(self, "sse_refused", sse_refused)
        object.__setattr__(self, "trace", trace)
        object.__setattr__(self, "invocations", invocations)
        object.__setattr__(self, "rejections", rejections)
        object.__setattr__(self, "gains", gains)
        object.__setattr__(self, "stop_required_delivered", stop_required_delivered)
        object.__setattr__(self, "evidence_repaired", evidence_repaired)
        object.__setattr__(self, "deadline_at", deadline_at)
        object.__setattr__(self, "discarded", discarded)
        object.__setattr__(self, "stored_row", stored_row)
        object.__setattr__(self, "terminations", terminations)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "draft_error", draft_error)
        object.__setattr__(self, "extra", {} if extra is None else extra)
        object.__setattr__(self, "termination_causes", termination_causes)
        object.__setattr__(self, "sse_history", sse_history)
        object.__setattr__(self, "sse_trace_marks", sse_trace_marks)
        object.__setattr__(self, "guard_requests", guard_requests)
        object.__setattr__(self, "repair_requests", repair_requests)

    @property
    def duration_s(self) -> float:
        """Virtual seconds from start to finish."""
        return self.finished_at - self.started_at

    @property
    def tool_calls(self) -> int:
        """Tool invocations admitted past preflight (canonical records)."""
        return len(self.invocations)

    def sse_kinds(self) -> list[str]:
        """The public SSE event kinds in order."""
        return [e.kind.value for e in self.sse_events]

    def trace_types(self) -> list[str]:
        """The trace event types in order."""
        return [e.type.value for e in self.trace]

    def events_of(self, type_: TraceEventType) -> list[TraceEvent]:
        """The trace events of one type."""
        return [e for e in self.trace if e.type is type_]

    def summary(self) -> dict[str, Any]:
        """The state axes, counts, usage, budget headroom and times as one flat row: the
        columns of ``runs_frame`` (but its ``scenario``), where the stored status is named
        ``db_status`` as the document's tables name ``diagnosis_run.status``."""
        usage = self.usage
        headroom = self.headroom
        return {
            "run_id": self.run_id, "session_id": self.session_id, "intent": _v(self.intent),
            "run_state": self.run_state.value, "termination_reason": self.termination_reason,
            "release_outcome": self.release_outcome.value,
            "fallback_type": _v(self.fallback_type), "db_status": _v(self.stored_status),
            "sse_state": self.sse_state.value, "collection_state": _v(self.collection_state),
            "stop_reason": _v(self.stop_reason), "semantic_verdict": _v(self.semantic_verdict),
            "agent_steps": self.agent_steps, "tool_calls": self.tool_calls,
            "rejections": len(self.rejections), "model_calls": usage.model_calls,
            "tokens": usage.tokens, "bytes": usage.bytes, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "headroom_model_calls": headroom.get("model_calls"),
            "headroom_tool_calls": headroom.get("tool_calls"),
            "headroom_tokens": headroom.get("tokens"), "headroom_bytes": headroom.get("bytes"),
            "started_at": self.started_at, "finished_at": self.finished_at,
            "duration_s": self.duration_s, "error": self.error,
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole record as JSON-ready data: the one encoding of :mod:`harness_lab.codec`
        (what logs, ``serve`` and ``sweep --records-out`` write)."""
        return to_data(self)


value_class(RunRecord)  # see frozen.py
