"""The RunStore protocol and the row shapes of doc §12 (diagnosis_run, invocations, trace)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from harness_lab.frozen import value_class
from harness_lab.ports import PreviousTurn, Turn
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

__all__ = ["COMPLETION_COLUMNS", "RUN_COLUMNS", "WALL_CLOCK_AFTER", "RunCompletion", "RunStart",
           "RunStore", "SessionContext"]

# Every column of diagnosis_run, in table order.
RUN_COLUMNS: tuple[str, ...] = (
    "run_id", "session_id", "query", "intent", "status", "release_outcome", "fallback_type",
    "answer_json", "conclusion", "published_result", "termination_state",
    "termination_reason", "duration_ms", "input_tokens", "output_tokens", "total_tokens",
    "agent_steps", "tool_calls", "created_at", "finished_at",
)

# The columns the completion transaction writes (every column a RUNNING row leaves empty,
# plus the status).
COMPLETION_COLUMNS: tuple[str, ...] = tuple(
    name for name in RUN_COLUMNS
    if name not in ("run_id", "session_id", "query", "intent", "created_at"))

WALL_CLOCK_AFTER: Final = 1_000_000_000.0
"""A stored ``created_at`` at or past this (2001-09-09, Unix time) is read as wall-clock
time (the live store dates its rows so, and so does another harness); a simulated run's
``created_at`` is a virtual second of the run's own clock, far below it."""


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a new turn reads before its run starts (doc §2): history and PreviousTurn."""

    history: tuple[Turn, ...]
    previous_turn: PreviousTurn | None


value_class(SessionContext)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class RunStart:
    """The RUNNING row written when a run starts (doc §12.1)."""

    run_id: str
    session_id: str
    query: str
    created_at: float

    def __init__(self, run_id: str, session_id: str, query: str, created_at: float) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "created_at", created_at)


value_class(RunStart)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class RunCompletion:
    """Everything written in the completion transaction (doc §12.2, plus §12.3's gap)."""

    run_id: str
    status: str  # StoredRunStatus value
    release_outcome: str
    fallback_type: str | None
    answer_json: str | None  # the safe answer, JSON text
    conclusion: str | None
    published_result: str | None  # JSON text; only for DIAGNOSIS + SUCCESS
    termination_state: str  # RunState value
    termination_reason: str | None
    duration_ms: float
    input_tokens: int | None  # None: a count beyond what the store holds (the run FAILED)
    output_tokens: int | None
    total_tokens: int | None
    agent_steps: int
    tool_calls: int
    finished_at: float
    invocations: Sequence[CanonicalInvocation]
    trace: Sequence[TraceEvent]  # the events not yet stored (all but RUN_STARTED)

    def __init__(self,
                 run_id: str, status: str, release_outcome: str, fallback_type: str | None,
                 answer_json: str | None, conclusion: str | None, published_result: str | None,
                 termination_state: str, termination_reason: str | None, duration_ms: float,
                 input_tokens: int | None, output_tokens: int | None,
                 total_tokens: int | None, agent_steps: int,
                 tool_calls: int, finished_at: float, invocations: Sequence[CanonicalInvocation],
                 trace: Sequence[TraceEvent]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "release_outcome", release_outcome)
        object.__setattr__(self, "fallback_type", fallback_type)
        object.__setattr__(self, "answer_json", answer_json)
        object.__setattr__(self, "conclusion", conclusion)
        object.__setattr__(self, "published_result", published_result)
        object.__setattr__(self, "termination_state", termination_state)
        object.__setattr__(self, "termination_reason", termination_reason)
        object.__setattr__(self, "duration_ms", duration_ms)
        object.__setattr__(self, "input_tokens", input_tokens)
        object.__setattr__(self, "output_tokens", output_tokens)
        object.__setattr__(self, "total_tokens", total_tokens)
        object.__setattr__(self, "agent_steps", agent_steps)
        object.__setattr__(self, "tool_calls", tool_calls)
        object.__setattr__(self, "finished_at", finished_at)
        object.__setattr__(self, "invocations", invocations)
        object.__setattr__(self, "trace", trace)


value_class(RunCompletion)  # see frozen.py


class RunStore(Protocol):
    """Persistence of runs; the SQL store and the in-memory store both implement it."""

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """The session's last ``history_limit`` finished turns and its PreviousTurn."""
        ...

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """Commit the RUNNING row and the RUN_STARTED event in one transaction."""
        ...

    def record_intent(self, run_id: str, intent: str) -> None:
        """Record the routed intent on the RUNNING row."""
        ...

    def complete(self, completion: RunCompletion) -> Mapping[str, Any]:
        """Write the completion, invocations and trace in one transaction; return the row."""
        ...

    def get_run(self, run_id: str) -> Mapping[str, Any] | None:
        """The stored diagnosis_run row as a dict, or None."""
        ...
