"""Every state axis of the lifecycle document, in one place.

The axes are orthogonal (doc §1): each is its own enum with one owner object that alone
changes it. Where an axis is a state machine its legal moves are written once, here, as a
table; :func:`advance` is the only way an owner moves one, and an illegal move raises
:class:`IllegalTransition` naming the object at once.

This module is compiled with the run core: there mypyc makes each member a constant, so the
compiled modules read ``RunState.SUCCESS`` as a C static. (Interpreted, a member read
through its class goes through the enum metaclass's ``__getattr__`` hook on CPython 3.11, and
costs several times a module global.) Write the member itself, not an alias of its enum.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, TypeVar

from harness_lab.errors import IllegalTransition
from harness_lab.speedups import read_value_in_c

__all__ = [
    "SSE_TRANSITIONS",
    "COLLECTION_TRANSITIONS",
    "INVOCATION_TRANSITIONS",
    "RUN_TRANSITIONS",
    "STORED_STATUS_TRANSITIONS",
    "CancellationReason",
    "ChatApplicationStatus",
    "CollectionState",
    "DiagnosisStopReason",
    "EvidenceStatus",
    "FallbackType",
    "IllegalTransition",
    "InformationGain",
    "IntentType",
    "InvocationStatus",
    "PreflightReason",
    "ReleaseOutcome",
    "RunState",
    "SemanticVerdict",
    "SseEventKind",
    "SseState",
    "StoredRunStatus",
    "ToolErrorCode",
    "TraceEventStatus",
    "TraceEventType",
    "TracePhase",
    "advance",
]


class _Axis(StrEnum):
    """Base of the state enums: a member's ``value`` is read in C (``harness_lab.speedups``)."""


read_value_in_c(_Axis)


class RunState(_Axis):
    """In-memory execution state of one run (owner: ``RunLifecycle``)."""

    RUNNING = "RUNNING"  # no RunTermination yet
    SUCCESS = "SUCCESS"  # a normal, persistable result (content or a non-budget fallback)
    FAILED = "FAILED"  # unrecoverable execution failure
    CANCELLED = "CANCELLED"  # a cooperative cancel became the first terminal
    TIMED_OUT = "TIMED_OUT"  # check_active found the deadline passed
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"  # a hard budget was exceeded


class CancellationReason(_Axis):
    """Why a run was cancelled (owner: ``RunCancellation``, first reason wins)."""

    CLIENT_DISCONNECTED = "CLIENT_DISCONNECTED"
    USER_REQUESTED = "USER_REQUESTED"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    INTERNAL_FAILURE = "INTERNAL_FAILURE"
    # toolkit-added (the document has no server that stops): the live server shutting down
    # cancels the runs still in flight after its grace period
    SERVER_SHUTDOWN = "SERVER_SHUTDOWN"

    @property
    def run_state(self) -> RunState:
        """The terminal RunState this reason maps to (doc §4)."""
        return _REASON_TO_STATE[self]


_REASON_TO_STATE = {
    CancellationReason.CLIENT_DISCONNECTED: RunState.CANCELLED,
    CancellationReason.USER_REQUESTED: RunState.CANCELLED,
    CancellationReason.DEADLINE_EXCEEDED: RunState.TIMED_OUT,
    CancellationReason.BUDGET_EXHAUSTED: RunState.BUDGET_EXHAUSTED,
    CancellationReason.INTERNAL_FAILURE: RunState.FAILED,
    CancellationReason.SERVER_SHUTDOWN: RunState.CANCELLED,
}


class ChatApplicationStatus(_Axis):
    """User-visible processing phase, sent only as SSE ``status`` events (doc §5)."""

    ROUTING = "ROUTING"
    SYSTEM_RESPONDING = "SYSTEM_RESPONDING"
    KNOWLEDGE_SEARCHING = "KNOWLEDGE_SEARCHING"
    KNOWLEDGE_ANSWERING = "KNOWLEDGE_ANSWERING"
    DIAGNOSIS_RUNNING = "DIAGNOSIS_RUNNING"
    SAFETY_VALIDATING = "SAFETY_VALIDATING"


class IntentType(_Axis):
    """The intent the router chose."""

    SYSTEM_CHAT = "SYSTEM_CHAT"
    KNOWLEDGE_QUERY = "KNOWLEDGE_QUERY"
    DIAGNOSIS = "DIAGNOSIS"


class InvocationStatus(_Axis):
    """Status of one canonical tool invocation record (owner: the tool boundary)."""

    PROJECTING = "PROJECTING"  # created, no citable result yet
    READY = "READY"  # executed and projected; citable by this run
    ERROR = "ERROR"  # failed; never citable


class EvidenceStatus(_Axis):
    """Objective result of a tool invocation, an axis of its own (doc §7.2)."""

    EVIDENCE_FOUND = "EVIDENCE_FOUND"
    NO_EVIDENCE = "NO_EVIDENCE"
    ERROR = "ERROR"


class PreflightReason(_Axis):
    """Why the tool boundary rejected a request before any canonical record (doc §7.1)."""

    RUN = "RUN"  # the run is no longer active
    ID = "ID"  # missing or duplicate invocation id
    AUTH = "AUTH"  # the tool is not authorised for this run
    READ_ONLY = "READ_ONLY"  # the tool is not read-only
    REQUEST = "REQUEST"  # unknown tool or a scope the tool refuses
    BUDGET = "BUDGET"  # the tool-call budget is spent
    STORE = "STORE"  # the canonical store refused to begin a record
    SATURATED = "SATURATED"  # collection is saturated: no new evidence tool may run


class ToolErrorCode(_Axis):
    """Why a canonical record ended in ERROR (doc §7.1 PROJECTING -> ERROR)."""

    EXECUTION = "EXECUTION"
    PROJECTION = "PROJECTION"
    SIZE = "SIZE"
    BUDGET = "BUDGET"
    STORE = "STORE"
    ABORTED = "ABORTED"  # the run ended while the call was in flight; the late result is dropped


class CollectionState(_Axis):
    """Whether evidence may still be collected (owner: ``CollectionController``)."""

    COLLECTING = "COLLECTING"
    SATURATED = "SATURATED"  # terminal for collection, not for the run


class DiagnosisStopReason(_Axis):
    """Internal reason the tool loop stopped (doc §8.3)."""

    INFORMATION_SATURATED = "INFORMATION_SATURATED"
    PROGRESS_PROTOCOL_VIOLATED = "PROGRESS_PROTOCOL_VIOLATED"
    BUDGET_LIMIT_REACHED = "BUDGET_LIMIT_REACHED"


class InformationGain(_Axis):
    """Whether one tool result added information (doc §8.2)."""

    GAINED = "GAINED"
    NO_GAIN = "NO_GAIN"


class SemanticVerdict(_Axis):
    """SemanticGuard's verdict; technical unavailability is a separate outcome."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"
    UNAVAILABLE = "UNAVAILABLE"  # the guard could not judge (technical failure)


class ReleaseOutcome(_Axis):
    """The final publication result (owner: release pipeline / application)."""

    SUCCESS = "SUCCESS"
    FALLBACK = "FALLBACK"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class FallbackType(_Axis):
    """Why a safe fallback was released instead of a report."""

    MISSING_REQUIRED_CONTEXT = "MISSING_REQUIRED_CONTEXT"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    EVIDENCE_VALIDATION_FAILED = "EVIDENCE_VALIDATION_FAILED"
    SEMANTIC_UNSUPPORTED = "SEMANTIC_UNSUPPORTED"
    SEMANTIC_UNAVAILABLE = "SEMANTIC_UNAVAILABLE"


class SseState(_Axis):
    """Connection state of one chat SSE session (owner: ``ChatSseSession``)."""

    NEW = "NEW"
    OPEN = "OPEN"
    TERMINAL = "TERMINAL"
    DISCONNECTED = "DISCONNECTED"


class SseEventKind(_Axis):
    """Kinds of public SSE events, in their legal order."""

    METADATA = "metadata"
    STATUS = "status"
    CONTENT = "content"
    FAILURE = "failure"
    DONE = "done"


class StoredRunStatus(_Axis):
    """The generic ``diagnosis_run.status`` column (doc §12.2)."""

    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @classmethod
    def for_outcome(cls, outcome: ReleaseOutcome) -> StoredRunStatus:
        """Map a ReleaseOutcome to the stored status (doc §12.2)."""
        return _OUTCOME_TO_STORED[outcome]


_OUTCOME_TO_STORED: Final[dict[ReleaseOutcome, StoredRunStatus]] = {
    ReleaseOutcome.SUCCESS: StoredRunStatus.SUCCESS,
    ReleaseOutcome.FALLBACK: StoredRunStatus.SUCCESS,
    ReleaseOutcome.FAILED: StoredRunStatus.FAILED,
    ReleaseOutcome.CANCELLED: StoredRunStatus.CANCELLED,
}


class TracePhase(_Axis):
    """Which stage of the run a trace event belongs to."""

    RUN = "RUN"
    ROUTING = "ROUTING"
    RESPONSE = "RESPONSE"  # system-chat and knowledge answers
    AGENT = "AGENT"
    TOOL = "TOOL"
    COLLECTION = "COLLECTION"
    GUARD = "GUARD"
    RELEASE = "RELEASE"


class TraceEventStatus(_Axis):
    """How the traced step ended."""

    STARTED = "STARTED"
    OK = "OK"
    FAILED = "FAILED"
    REJECTED = "REJECTED"
    DISCARDED = "DISCARDED"  # a late result dropped because the run was no longer active


class TraceEventType(_Axis):
    """Trace event types of doc §13, and those its rules imply."""

    RUN_STARTED = "RUN_STARTED"
    ROUTING_ATTEMPT = "ROUTING_ATTEMPT"
    ROUTING_DECISION = "ROUTING_DECISION"
    SYSTEM_RESPONSE = "SYSTEM_RESPONSE"
    KNOWLEDGE_RETRIEVAL = "KNOWLEDGE_RETRIEVAL"
    KNOWLEDGE_ANSWER = "KNOWLEDGE_ANSWER"
    AGENT_MODEL_STEP = "AGENT_MODEL_STEP"
    PROGRESS_PROTOCOL_VIOLATION = "PROGRESS_PROTOCOL_VIOLATION"  # a progress report refused
    TOOL_REQUEST_REJECTED = "TOOL_REQUEST_REJECTED"
    TOOL_INVOCATION = "TOOL_INVOCATION"
    TOOL_PROGRESS = "TOOL_PROGRESS"
    COLLECTION_STOP = "COLLECTION_STOP"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    EVIDENCE_GUARD_INITIAL = "EVIDENCE_GUARD_INITIAL"
    EVIDENCE_REPAIR = "EVIDENCE_REPAIR"
    EVIDENCE_GUARD_RECHECK = "EVIDENCE_GUARD_RECHECK"
    SEMANTIC_GUARD_ATTEMPT = "SEMANTIC_GUARD_ATTEMPT"
    SEMANTIC_GUARD_DECISION = "SEMANTIC_GUARD_DECISION"
    RELEASE_DECISION = "RELEASE_DECISION"
    TERMINATION_REJECTED = "TERMINATION_REJECTED"  # an attempt to end the run lost (doc §3.1)
    RUN_CANCELLED = "RUN_CANCELLED"
    RUN_FINISHED = "RUN_FINISHED"


RUN_TRANSITIONS: Final[dict[RunState, frozenset[RunState]]] = {
    RunState.RUNNING: frozenset(s for s in RunState if s is not RunState.RUNNING),
    **{s: frozenset() for s in RunState if s is not RunState.RUNNING},
}
INVOCATION_TRANSITIONS: Final[dict[InvocationStatus, frozenset[InvocationStatus]]] = {
    InvocationStatus.PROJECTING: frozenset({InvocationStatus.READY, InvocationStatus.ERROR}),
    InvocationStatus.READY: frozenset(),
    InvocationStatus.ERROR: frozenset(),
}
COLLECTION_TRANSITIONS: Final[dict[CollectionState, frozenset[CollectionState]]] = {
    CollectionState.COLLECTING: frozenset({CollectionState.COLLECTING, CollectionState.SATURATED}),
    CollectionState.SATURATED: frozenset({CollectionState.SATURATED}),
}
SSE_TRANSITIONS: Final[dict[SseState, frozenset[SseState]]] = {
    SseState.NEW: frozenset({SseState.OPEN, SseState.DISCONNECTED}),
    SseState.OPEN: frozenset({SseState.OPEN, SseState.TERMINAL, SseState.DISCONNECTED}),
    SseState.TERMINAL: frozenset(),
    SseState.DISCONNECTED: frozenset(),
}
STORED_STATUS_TRANSITIONS: Final[dict[StoredRunStatus, frozenset[StoredRunStatus]]] = {
    StoredRunStatus.RUNNING: frozenset(
        {StoredRunStatus.SUCCESS, StoredRunStatus.FAILED, StoredRunStatus.CANCELLED}
    ),
    StoredRunStatus.SUCCESS: frozenset(),
    StoredRunStatus.FAILED: frozenset(),
    StoredRunStatus.CANCELLED: frozenset(),
}

E = TypeVar("E", bound=StrEnum)


def advance(owner: str, table: dict[E, frozenset[E]], current: E, target: E) -> E:
    """Return ``target`` if ``current -> target`` is in ``table``; raise otherwise."""
    if target not in table[current]:
        raise IllegalTransition(owner, current, target)
    return target
