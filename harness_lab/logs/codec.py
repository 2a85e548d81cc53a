"""RunRecords and scenario results as JSON-ready data and back, field by field, losslessly.

Enum members are written as their values, tuples as lists, mappings as objects; reading a
value back rebuilds the same types, so ``record_from_data(record_to_data(r)) == r`` for every
record a run makes. Values the record types leave open (an SSE event's payload, a trace
event's detail, a tool's scope, the stored row) are JSON data already when the toolkit makes
them; anything else is written as its ``str``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

from harness_lab.core.budget import Usage
from harness_lab.invariants import Violation
from harness_lab.record import RunRecord
from harness_lab.scenarios.expect import Mismatch
from harness_lab.scenarios.runner import ScenarioResult
from harness_lab.sse import SseEvent
from harness_lab.states import (
    ChatApplicationStatus,
    CollectionState,
    DiagnosisStopReason,
    EvidenceStatus,
    FallbackType,
    InformationGain,
    IntentType,
    InvocationStatus,
    PreflightReason,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseEventKind,
    SseState,
    StoredRunStatus,
    ToolErrorCode,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.tools.records import CanonicalInvocation, ToolRejection
from harness_lab.trace import TraceEvent

__all__ = ["RECORD_FIELDS", "data", "record_from_data", "record_to_data", "result_from_data",
           "result_to_data", "sse_event_from_data", "trace_event_from_data", "variant_of"]

E = TypeVar("E", bound=Enum)

RECORD_FIELDS = (
    "run_id", "session_id", "query", "intent", "run_state", "termination_reason",
    "release_outcome", "fallback_type", "stored_status", "sse_state", "collection_state",
    "stop_reason", "semantic_verdict", "statuses", "usage", "headroom", "started_at",
    "finished_at", "agent_steps", "content", "failure", "sse_events", "sse_refused", "trace",
    "invocations", "rejections", "gains", "stop_required_delivered", "evidence_repaired",
    "deadline_at", "discarded", "stored_row", "terminations", "error", "draft_error", "extra",
)
"""Every field of a :class:`RunRecord`, in the order a log writes them."""

_USAGE = ("model_calls", "tool_calls", "tokens", "bytes", "input_tokens", "output_tokens")


def data(value: Any) -> Any:
    """``value`` as JSON data: enum members as values, tuples as lists, other objects as str."""
    if isinstance(value, Enum):
        return value.value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [data(v) for v in value]
    return str(value)


def _opt(member: Enum | None) -> Any:
    return None if member is None else member.value


def _enum(kind: type[E], value: Any) -> E:
    return kind(value)


def _opt_enum(kind: type[E], value: Any) -> E | None:
    return None if value is None else kind(value)


def _mapping(value: Any) -> dict[str, Any] | None:
    return None if value is None else data(value)


def _event(e: SseEvent) -> dict[str, Any]:
    return {"seq": e.seq, "t": e.t, "kind": e.kind.value, "data": data(e.data)}


def _trace(e: TraceEvent) -> dict[str, Any]:
    return {"run_id": e.run_id, "seq": e.seq, "t": e.t, "type": e.type.value,
            "phase": e.phase.value, "status": e.status.value, "detail": data(e.detail)}


def _invocation(i: CanonicalInvocation) -> dict[str, Any]:
    return {"invocation_id": i.invocation_id, "run_id": i.run_id, "seq": i.seq, "tool": i.tool,
            "scope": data(i.scope), "normalized_scope": i.normalized_scope,
            "status": i.status.value, "started_at": i.started_at,
            "evidence_status": _opt(i.evidence_status), "error_code": _opt(i.error_code),
            "error": i.error, "items": i.items, "size_bytes": i.size_bytes,
            "information_gain": _opt(i.information_gain), "finished_at": i.finished_at,
            "call_id": i.call_id}


def _rejection(r: ToolRejection) -> dict[str, Any]:
    return {"run_id": r.run_id, "tool": r.tool, "scope": data(r.scope),
            "reason": r.reason.value, "message": r.message, "t": r.t, "call_id": r.call_id}


def record_to_data(r: RunRecord) -> dict[str, Any]:
    """Every field of ``r`` (:data:`RECORD_FIELDS`) as JSON data."""
    return {
        "run_id": r.run_id, "session_id": r.session_id, "query": r.query,
        "intent": _opt(r.intent), "run_state": r.run_state.value,
        "termination_reason": r.termination_reason, "release_outcome": r.release_outcome.value,
        "fallback_type": _opt(r.fallback_type), "stored_status": _opt(r.stored_status),
        "sse_state": r.sse_state.value, "collection_state": _opt(r.collection_state),
        "stop_reason": _opt(r.stop_reason), "semantic_verdict": _opt(r.semantic_verdict),
        "statuses": [s.value for s in r.statuses],
        "usage": {k: getattr(r.usage, k) for k in _USAGE},
        "headroom": data(r.headroom), "started_at": r.started_at,
        "finished_at": r.finished_at, "agent_steps": r.agent_steps,
        "content": _mapping(r.content), "failure": _mapping(r.failure),
        "sse_events": [_event(e) for e in r.sse_events],
        "sse_refused": [k.value for k in r.sse_refused],
        "trace": [_trace(e) for e in r.trace],
        "invocations": [_invocation(i) for i in r.invocations],
        "rejections": [_rejection(x) for x in r.rejections],
        "gains": [g.value for g in r.gains],
        "stop_required_delivered": r.stop_required_delivered,
        "evidence_repaired": r.evidence_repaired, "deadline_at": r.deadline_at,
        "discarded": [list(d) for d in r.discarded], "stored_row": _mapping(r.stored_row),
        "terminations": [list(t) for t in r.terminations], "error": r.error,
        "draft_error": r.draft_error, "extra": data(r.extra),
    }


def _tuples(rows: Sequence[Sequence[Any]]) -> tuple[tuple[str, str, float], ...]:
    return tuple((str(a), str(b), c) for a, b, c in rows)


def sse_event_from_data(d: Mapping[str, Any]) -> SseEvent:
    """An :class:`SseEvent` from its data."""
    return SseEvent(d["seq"], d["t"], SseEventKind(d["kind"]), d["data"])


def trace_event_from_data(d: Mapping[str, Any]) -> TraceEvent:
    """A :class:`TraceEvent` from its data."""
    return TraceEvent(d["run_id"], d["seq"], d["t"], TraceEventType(d["type"]),
                      TracePhase(d["phase"]), TraceEventStatus(d["status"]), d["detail"])


def _invocation_from(d: Mapping[str, Any]) -> CanonicalInvocation:
    return CanonicalInvocation(
        d["invocation_id"], d["run_id"], d["seq"], d["tool"], d["scope"], d["normalized_scope"],
        InvocationStatus(d["status"]), d["started_at"],
        _opt_enum(EvidenceStatus, d["evidence_status"]), _opt_enum(ToolErrorCode, d["error_code"]),
        d["error"], d["items"], d["size_bytes"],
        _opt_enum(InformationGain, d["information_gain"]), d["finished_at"], d["call_id"])


def _rejection_from(d: Mapping[str, Any]) -> ToolRejection:
    return ToolRejection(d["run_id"], d["tool"], d["scope"], PreflightReason(d["reason"]),
                         d["message"], d["t"], d["call_id"])


def _each(items: Sequence[Any], make: Callable[[Any], Any]) -> tuple[Any, ...]:
    return tuple(make(x) for x in items)


def record_from_data(d: Mapping[str, Any]) -> RunRecord:
    """The :class:`RunRecord` that :func:`record_to_data` wrote.

    Raise KeyError for a missing field and ValueError for a value outside its enum.
    """
    return RunRecord(
        d["run_id"], d["session_id"], d["query"], _opt_enum(IntentType, d["intent"]),
        RunState(d["run_state"]), d["termination_reason"],
        ReleaseOutcome(d["release_outcome"]), _opt_enum(FallbackType, d["fallback_type"]),
        _opt_enum(StoredRunStatus, d["stored_status"]), SseState(d["sse_state"]),
        _opt_enum(CollectionState, d["collection_state"]),
        _opt_enum(DiagnosisStopReason, d["stop_reason"]),
        _opt_enum(SemanticVerdict, d["semantic_verdict"]),
        _each(d["statuses"], ChatApplicationStatus), Usage(**d["usage"]), d["headroom"],
        d["started_at"], d["finished_at"], d["agent_steps"], d["content"], d["failure"],
        _each(d["sse_events"], sse_event_from_data), _each(d["sse_refused"], SseEventKind),
        _each(d["trace"], trace_event_from_data), _each(d["invocations"], _invocation_from),
        _each(d["rejections"], _rejection_from), _each(d["gains"], InformationGain),
        d["stop_required_delivered"], d["evidence_repaired"], d["deadline_at"],
        _tuples(d["discarded"]), d["stored_row"], _tuples(d["terminations"]), d["error"],
        d["draft_error"], d["extra"])


def variant_of(name: str) -> str | None:
    """The matrix variant label of a scenario name (``name[label]``), or None."""
    if name.endswith("]") and "[" in name:
        return name[name.index("[") + 1:-1]
    return None


def result_to_data(result: ScenarioResult) -> dict[str, Any]:
    """A scenario result as JSON data: its record and earlier turns whole, its expectation
    mismatches, invariant violations and error, and what a crashed run left behind."""
    return {
        "scenario": result.scenario, "variant": variant_of(result.scenario),
        "file": result.path, "description": result.description, "tags": list(result.tags),
        "case": result.case, "verdict": result.verdict,
        "record": None if result.record is None else record_to_data(result.record),
        "turns": [record_to_data(t) for t in result.turns],
        "mismatches": [{"field": m.field, "expected": data(m.expected),
                        "observed": data(m.observed)} for m in result.mismatches],
        "violations": [{"invariant": v.invariant, "run_id": v.run_id, "message": v.message}
                       for v in result.violations],
        "unexpected": list(result.unexpected), "missing": list(result.missing),
        "error": result.error, "crashed": result.crashed,
        "stored_row": _mapping(result.stored_row), "extra": data(result.extra),
        "partial_sse": [_event(e) for e in result.partial_sse],
        "partial_trace": [_trace(e) for e in result.partial_trace],
    }


def result_from_data(d: Mapping[str, Any]) -> ScenarioResult:
    """The :class:`ScenarioResult` that :func:`result_to_data` wrote (mismatch values come
    back as the JSON data they were written as: an enum member as its value)."""
    record = d["record"]
    return ScenarioResult(
        d["scenario"], d["file"], d["description"], tuple(d["tags"]), d["case"],
        None if record is None else record_from_data(record),
        _each(d["turns"], record_from_data),
        tuple(Mismatch(m["field"], m["expected"], m["observed"]) for m in d["mismatches"]),
        tuple(Violation(v["invariant"], v["run_id"], v["message"]) for v in d["violations"]),
        tuple(d["unexpected"]), tuple(d["missing"]), d["error"], d["crashed"],
        d["stored_row"], dict(d["extra"]), _each(d["partial_sse"], sse_event_from_data),
        _each(d["partial_trace"], trace_event_from_data))
