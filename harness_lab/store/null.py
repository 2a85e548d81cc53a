"""NullRunStore: a store that keeps nothing, for sweeps that do not persist runs.

It still answers every call of the RunStore protocol the way a real store would for a
fresh session (no history, no PreviousTurn) and returns the completed row, so a run's
stored status is observable without any I/O.
"""

from __future__ import annotations

from typing import Any

from harness_lab.store.base import RUN_COLUMNS, RunCompletion, RunStart, SessionContext
from harness_lab.store.errors import StoreError, unstorable
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
        """Hold the RUNNING row until completion; refuse, as every store does, text that no
        store could write (so a run ends the same whether its sweep persists or not)."""
        if not (start.query.isascii() and start.session_id.isascii()
                and start.run_id.isascii()):
            problem = unstorable({"run_id": start.run_id, "session_id": start.session_id,
                                  "query": start.query})
            if problem is not None:
                raise StoreError(f"run {start.run_id!a}: {problem}", start.run_id)
        self._open[start.run_id] = {"run_id": start.run_id, "session_id": start.session_id,
                                    "query": start.query, "intent": None,
                                    "created_at": float(start.created_at)}

    def record_intent(self, run_id: str, intent: str) -> None:
        """Note the intent of the run in flight."""
        self._open[run_id]["intent"] = intent

    def complete(self, completion: RunCompletion) -> dict[str, Any]:
        """Return the completed row and forget the run."""
        row = self._open.pop(completion.run_id)
        c = completion
        # RUN_COLUMNS in table order, written out: a native read of each field (a test holds
        # the keys to RUN_COLUMNS and each value to the start row or the completion)
        return {"run_id": row["run_id"], "session_id": row["session_id"], "query": row["query"],
                "intent": row["intent"], "status": c.status,
                "release_outcome": c.release_outcome, "fallback_type": c.fallback_type,
                "answer_json": c.answer_json, "conclusion": c.conclusion,
                "published_result": c.published_result,
                "termination_state": c.termination_state,
                "termination_reason": c.termination_reason, "duration_ms": c.duration_ms,
                "input_tokens": c.input_tokens, "output_tokens": c.output_tokens,
                "total_tokens": c.total_tokens, "agent_steps": c.agent_steps,
                "tool_calls": c.tool_calls, "created_at": row["created_at"],
                "finished_at": c.finished_at}

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """A run still in flight (RUNNING), else None: nothing is kept."""
        row = self._open.get(run_id)
        if row is None:
            return None
        return {name: row.get(name) for name in RUN_COLUMNS} | {"status": "RUNNING"}
