"""The in-memory run store: the SQL store's semantics, on plain dicts and lists.

Every write checks everything it is about to write before it changes anything, so a refused
write leaves the store exactly as it was, as a rolled-back transaction would.
"""

from __future__ import annotations

import threading
from typing import Any

from harness_lab.states import StoredRunStatus
from harness_lab.store.base import RunCompletion, RunStart, SessionContext
from harness_lab.store.errors import (
    StoreError,
    check_completion,
    check_history_limit,
    check_intent,
    check_start,
    complete_row,
    decoded,
    event_row,
    invocation_row,
    is_previous_turn_row,
    previous_turn_from_row,
    refuse_duplicates,
    require_running,
    running_row,
    turn_from_row,
)
from harness_lab.trace import TraceEvent

__all__ = ["MemoryRunStore"]

_RUNNING = StoredRunStatus.RUNNING.value


class MemoryRunStore:
    """A RunStore held in memory; rows are stored as the SQL store stores them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._runs: dict[str, dict[str, Any]] = {}  # insertion order is the ordinal
        self._invocations: dict[str, dict[str, Any]] = {}
        self._trace: dict[tuple[str, int], dict[str, Any]] = {}

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """Store the RUNNING row and the RUN_STARTED event together."""
        check_start(start, started)
        event = event_row(started)
        with self._lock:
            if start.run_id in self._runs:
                raise StoreError(f"run {start.run_id} already has a diagnosis_run row",
                                 start.run_id)
            self._check_new_events(start.run_id, [event])
            row = running_row(start)
            self._runs[start.run_id] = row
            self._trace[(start.run_id, started.seq)] = event

    def record_intent(self, run_id: str, intent: str) -> None:
        """Record the routed intent on the RUNNING row."""
        value = check_intent(run_id, intent)
        with self._lock:
            self._require_running(run_id)["intent"] = value

    def complete(self, completion: RunCompletion) -> dict[str, Any]:
        """Write the completion, invocations and trace all at once; return the row."""
        check_completion(completion)
        run_id = completion.run_id
        invocations = [invocation_row(inv) for inv in completion.invocations]
        events = [event_row(ev) for ev in completion.trace]
        with self._lock:
            row = self._require_running(run_id)
            ids = [inv["invocation_id"] for inv in invocations]
            refuse_duplicates(run_id, "invocation", ids, self._invocations.__contains__)
            self._check_new_events(run_id, events)
            complete_row(row, completion)
            self._invocations.update(zip(ids, invocations, strict=True))
            self._trace.update(((run_id, ev["seq"]), ev) for ev in events)
            return dict(row)

    def _require_running(self, run_id: str) -> dict[str, Any]:
        row = self._runs.get(run_id)
        require_running(run_id, None if row is None else row["status"])
        return self._runs[run_id]

    def _check_new_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        keys = [(ev["run_id"], ev["seq"]) for ev in events]
        refuse_duplicates(run_id, "trace event", keys, self._trace.__contains__)

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored diagnosis_run row as a dict of exactly RUN_COLUMNS, or None."""
        with self._lock:
            row = self._runs.get(run_id)
            return None if row is None else dict(row)

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """The session's last ``history_limit`` finished turns and its PreviousTurn."""
        check_history_limit(history_limit)
        session = [row for row in self._ordered() if row["session_id"] == session_id]
        finished = [row for row in session if row["status"] != _RUNNING]
        history = finished[len(finished) - history_limit:] if history_limit else []
        published = [row for row in session if is_previous_turn_row(row)]
        return SessionContext(
            history=tuple(turn_from_row(row) for row in history),
            previous_turn=previous_turn_from_row(published[-1]) if published else None,
        )

    def _ordered(self) -> list[dict[str, Any]]:
        with self._lock:
            indexed = list(enumerate(dict(row) for row in self._runs.values()))
        indexed.sort(key=lambda pair: (pair[1]["created_at"], pair[0]))
        return [row for _, row in indexed]

    def runs(self) -> list[dict[str, Any]]:
        """Every diagnosis_run row (RUN_COLUMNS), oldest first."""
        return self._ordered()

    def invocations(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Invocation rows shaped like ``CanonicalInvocation.to_dict()``, by run then seq."""
        with self._lock:
            rows = list(self._invocations.values())
        return [decoded(row, "scope") for row in self._by_run(rows, run_id)]

    def trace(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Trace rows shaped like ``TraceEvent.to_dict()``, by run then seq."""
        with self._lock:
            rows = list(self._trace.values())
        return [decoded(row, "detail") for row in self._by_run(rows, run_id)]

    def _by_run(self, rows: list[dict[str, Any]], run_id: str | None) -> list[dict[str, Any]]:
        rank = {row["run_id"]: i for i, row in enumerate(self._ordered())}
        chosen = [row for row in rows if run_id is None or row["run_id"] == run_id]
        return sorted(chosen, key=lambda row: (rank[row["run_id"]], row["seq"]))
