"""NullRunStore: a store that keeps nothing, for sweeps that do not persist runs.

It still answers every call of the RunStore protocol the way a real store would for a
fresh session (no history, no PreviousTurn) and returns the completed row, so a run's
stored status is observable without any I/O.
"""

from __future__ import annotations

from typing import Any

from harness_lab.store.base import (
    COMPLETION_COLUMNS,
    RUN_COLUMNS,
    RunCompletion,
    RunStart,
    SessionContext,
)
from harness_lab.trace import TraceEvent

__all__ = ["NullRunStore"]

_EMPTY = SessionContext((), None)


class NullRunStore:
    """Remembers only the run in flight (its start and intent) until it completes."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[str, dict[str, Any]] = {}

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """Always a fresh session."""
        return _EMPTY

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """Hold the RUNNING row until completion."""
        self._open[start.run_id] = {"run_id": start.run_id, "session_id": start.session_id,
                                    "query": start.query, "intent": None,
                                    "created_at": float(start.created_at)}

    def record_intent(self, run_id: str, intent: str) -> None:
        """Note the intent of the run in flight."""
        self._open[run_id]["intent"] = intent

    def complete(self, completion: RunCompletion) -> dict[str, Any]:
        """Return the completed row and forget the run."""
        row = self._open.pop(completion.run_id)
        for name in COMPLETION_COLUMNS:
            row[name] = getattr(completion, name)
        return {name: row[name] for name in RUN_COLUMNS}

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """A run still in flight (RUNNING), else None: nothing is kept."""
        row = self._open.get(run_id)
        if row is None:
            return None
        return {name: row.get(name) for name in RUN_COLUMNS} | {"status": "RUNNING"}
