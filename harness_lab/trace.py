"""Trace events (doc §13): type, phase, status and a virtual timestamp."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness_lab.frozen import value_class
from harness_lab.states import TraceEventStatus, TraceEventType, TracePhase

__all__ = ["EVENT_PHASE", "TraceEvent", "Tracer"]

EVENT_PHASE: Final[dict[TraceEventType, TracePhase]] = {
    TraceEventType.RUN_STARTED: TracePhase.RUN,
    TraceEventType.ROUTING_ATTEMPT: TracePhase.ROUTING,
    TraceEventType.ROUTING_DECISION: TracePhase.ROUTING,
    TraceEventType.SYSTEM_RESPONSE: TracePhase.RESPONSE,
    TraceEventType.KNOWLEDGE_RETRIEVAL: TracePhase.RESPONSE,
    TraceEventType.KNOWLEDGE_ANSWER: TracePhase.RESPONSE,
    TraceEventType.AGENT_MODEL_STEP: TracePhase.AGENT,
    TraceEventType.PROGRESS_PROTOCOL_VIOLATION: TracePhase.AGENT,
    TraceEventType.TOOL_REQUEST_REJECTED: TracePhase.TOOL,
    TraceEventType.TOOL_INVOCATION: TracePhase.TOOL,
    TraceEventType.TOOL_PROGRESS: TracePhase.TOOL,
    TraceEventType.COLLECTION_STOP: TracePhase.COLLECTION,
    TraceEventType.BUDGET_EXHAUSTED: TracePhase.COLLECTION,
    TraceEventType.EVIDENCE_GUARD_INITIAL: TracePhase.GUARD,
    TraceEventType.EVIDENCE_REPAIR: TracePhase.GUARD,
    TraceEventType.EVIDENCE_GUARD_RECHECK: TracePhase.GUARD,
    TraceEventType.SEMANTIC_GUARD_ATTEMPT: TracePhase.GUARD,
    TraceEventType.SEMANTIC_GUARD_DECISION: TracePhase.GUARD,
    TraceEventType.RELEASE_DECISION: TracePhase.RELEASE,
    TraceEventType.TERMINATION_REJECTED: TracePhase.RUN,
    TraceEventType.RUN_CANCELLED: TracePhase.RUN,
    TraceEventType.RUN_FINISHED: TracePhase.RUN,
}


@dataclass(frozen=True, slots=True, init=False)
class TraceEvent:
    """One trace event; ``detail`` holds small, JSON-ready facts (outcome, tool, reason...)."""

    run_id: str
    seq: int
    t: float
    type: TraceEventType
    phase: TracePhase
    status: TraceEventStatus
    detail: Mapping[str, Any]

    def __init__(self,
                 run_id: str, seq: int, t: float, type: TraceEventType, phase: TracePhase,
                 status: TraceEventStatus, detail: Mapping[str, Any]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "seq", seq)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "detail", detail)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of this event."""
        return {"run_id": self.run_id, "seq": self.seq, "t": self.t, "type": self.type._value_,
                "phase": self.phase._value_, "status": self.status._value_,
                "detail": dict(self.detail)}


value_class(TraceEvent)  # see frozen.py


_EMPTY: Final[Mapping[str, Any]] = {}


class Tracer:
    """Appends a run's trace events in order, stamped with the virtual clock."""

    __slots__ = ("run_id", "events", "_clock", "_lock")

    def __init__(self, run_id: str, clock: Callable[[], float]) -> None:
        self.run_id = run_id
        self.events: list[TraceEvent] = []
        self._clock = clock
        # a live run's trace also takes a losing cancel from a server thread: the number and
        # the append are one step, so no two events share a sequence number
        self._lock = threading.Lock()

    def emit(self, type_: TraceEventType, status: TraceEventStatus = TraceEventStatus.OK,
             detail: Mapping[str, Any] | None = None) -> TraceEvent:
        """Record one event now and return it."""
        with self._lock:
            ev = TraceEvent(self.run_id, len(self.events), self._clock(), type_,
                            EVENT_PHASE[type_], status, detail if detail is not None else _EMPTY)
            self.events.append(ev)
        return ev
