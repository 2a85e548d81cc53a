"""StoreError, and the checks and row conversions both run stores share.

Both stores run the same checks before they write anything and read rows back the same
way, so a caller cannot tell them apart by how they fail or by what they return.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from harness_lab.bounds import INT_MAX, INT_MIN
from harness_lab.errors import StoreError
from harness_lab.json_text import dumps
from harness_lab.ports import PreviousTurn, Turn
from harness_lab.states import (
    STORED_STATUS_TRANSITIONS,
    IntentType,
    ReleaseOutcome,
    StoredRunStatus,
    TraceEventType,
)
from harness_lab.store.base import COMPLETION_COLUMNS, RUN_COLUMNS, RunCompletion, RunStart
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

__all__ = [
    "EVENT_COLUMNS",
    "StoreError",
    "as_float",
    "check_completion",
    "check_intent",
    "check_history_limit",
    "check_start",
    "complete_row",
    "decoded",
    "event_row",
    "event_values",
    "invocation_row",
    "is_previous_turn_row",
    "previous_turn_from_row",
    "refuse_duplicates",
    "require_running",
    "running_row",
    "storable_int",
    "to_json",
    "turn_from_row",
    "unstorable",
]

def storable_int(value: int) -> int | None:
    """``value`` when a store's integer column holds it, else None (the column left empty)."""
    return value if INT_MIN <= value <= INT_MAX else None


def unstorable(values: Mapping[str, Any]) -> str | None:
    """Why one of ``values`` (column name to value) cannot be stored, or None when all can.

    The one rule of what a store holds: integers within a signed 64-bit column and text that
    is valid Unicode (encodable as UTF-8: a lone surrogate is not). Every store applies it,
    the ones that write nothing included, so a run ends the same whichever store it has.
    """
    for name, value in values.items():
        if type(value) is int:
            if storable_int(value) is None:
                return (f"{name} is {len(str(abs(value)))} digits long, beyond the 64-bit "
                        "integer a store holds")
        elif type(value) is str and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return (f"{name} holds {value[exc.start:exc.end]!a} at character {exc.start}, "
                        "which is not valid Unicode text (a lone surrogate)")
    return None


def to_json(value: Any, run_id: str, what: str | Callable[[], str]) -> str:
    """``value`` as JSON text, or a StoreError naming the run and what was being encoded.

    ``what`` may be a function giving the description, so it is only built on failure.
    """
    try:
        return dumps(value)
    except (TypeError, ValueError) as exc:
        named = what if isinstance(what, str) else what()
        raise StoreError(f"run {run_id}: {named} is not JSON-serialisable: {exc}",
                         run_id) from exc


def check_start(start: RunStart, started: TraceEvent) -> None:
    """Refuse a RUN_STARTED event that is not this run's or not RUN_STARTED, and a start
    whose ids or query the store cannot hold."""
    problem = unstorable({"run_id": start.run_id, "session_id": start.session_id,
                          "query": start.query})
    if problem is not None:
        raise StoreError(f"run {start.run_id!a}: {problem}", start.run_id)
    if started.run_id != start.run_id:
        raise StoreError(
            f"run {start.run_id}: the start event belongs to run {started.run_id}", start.run_id
        )
    if started.type is not TraceEventType.RUN_STARTED:
        raise StoreError(
            f"run {start.run_id}: the start event is {started.type.value}, not RUN_STARTED",
            start.run_id,
        )


def check_intent(run_id: str, intent: str) -> str:
    """The IntentType value of ``intent``, or a StoreError when it names no intent."""
    try:
        return IntentType(intent).value
    except ValueError as exc:
        raise StoreError(f"run {run_id}: unknown intent {intent!r}", run_id) from exc


def check_history_limit(history_limit: int) -> None:
    """Refuse a negative history bound (zero means no history)."""
    if history_limit < 0:
        raise ValueError(f"history_limit must be >= 0, got {history_limit}")


def check_completion(completion: RunCompletion) -> None:
    """Refuse a completion whose values the store could not read back faithfully."""
    run_id = completion.run_id
    problem = unstorable({name: getattr(completion, name) for name in COMPLETION_COLUMNS})
    if problem is not None:
        raise StoreError(f"run {run_id}: {problem}", run_id)
    try:
        status = StoredRunStatus(completion.status)
        ReleaseOutcome(completion.release_outcome)
    except ValueError as exc:
        raise StoreError(f"run {run_id}: {exc}", run_id) from exc
    if status not in STORED_STATUS_TRANSITIONS[StoredRunStatus.RUNNING]:
        raise StoreError(f"run {run_id}: a completion cannot have status {status.value}", run_id)
    if completion.published_result is not None:
        try:
            published = json.loads(completion.published_result)
        except ValueError as exc:
            raise StoreError(f"run {run_id}: published_result is not JSON: {exc}", run_id) from exc
        if not isinstance(published, dict):
            raise StoreError(f"run {run_id}: published_result is not a JSON object", run_id)
    for inv in completion.invocations:
        if inv.run_id != run_id:
            raise StoreError(
                f"run {run_id}: invocation {inv.invocation_id} belongs to run {inv.run_id}",
                run_id,
            )
    for ev in completion.trace:
        if ev.run_id != run_id:
            raise StoreError(
                f"run {run_id}: trace event {ev.seq} belongs to run {ev.run_id}", run_id
            )


def as_float(value: float | None) -> float | None:
    """``value`` as a float, as a Float column reads it back; None stays None."""
    return None if value is None else float(value)


def running_row(start: RunStart) -> dict[str, Any]:
    """The diagnosis_run row of a run just started: RUNNING, every completion column empty."""
    row: dict[str, Any] = dict.fromkeys(RUN_COLUMNS)
    row.update(run_id=start.run_id, session_id=start.session_id, query=start.query,
               status=StoredRunStatus.RUNNING.value, created_at=float(start.created_at))
    return row


def complete_row(row: dict[str, Any], completion: RunCompletion) -> None:
    """Fill a RUNNING row with ``completion``, typed as the Float columns read back."""
    row.update({name: getattr(completion, name) for name in COMPLETION_COLUMNS})
    row.update(duration_ms=as_float(completion.duration_ms),
               finished_at=as_float(completion.finished_at))


def invocation_row(inv: CanonicalInvocation) -> dict[str, Any]:
    """The tool_invocation row of ``inv``: ``to_dict()`` with ``scope`` as JSON text."""
    row = inv.to_dict()
    row["started_at"] = float(row["started_at"])
    row["finished_at"] = as_float(row["finished_at"])
    row["scope"] = to_json(row["scope"], inv.run_id,
                           lambda: f"invocation {inv.invocation_id} scope")
    return row


EVENT_COLUMNS = ("run_id", "seq", "t", "type", "phase", "status", "detail")
"""The columns of a trace_event row, in table order (the order of :func:`event_values`)."""


def event_values(ev: TraceEvent) -> tuple[Any, ...]:
    """The trace_event row of ``ev`` as values in :data:`EVENT_COLUMNS` order."""
    detail = ev.detail
    # built field by field (the shape of to_dict(), which a test holds it to): two dozen
    # rows a run, and the enums' plain _value_ skips the slower .value property
    return (ev.run_id, ev.seq, float(ev.t), ev.type._value_, ev.phase._value_,
            ev.status._value_, to_json(detail if type(detail) is dict else dict(detail),
                                       ev.run_id, lambda: f"trace event {ev.seq} detail"))


def event_row(ev: TraceEvent) -> dict[str, Any]:
    """The trace_event row of ``ev``: ``to_dict()`` with ``detail`` as JSON text."""
    return dict(zip(EVENT_COLUMNS, event_values(ev), strict=True))


def decoded(row: Mapping[str, Any], column: str) -> dict[str, Any]:
    """A stored row as a dict with its JSON-text ``column`` decoded."""
    out = dict(row)
    out[column] = json.loads(out[column])
    return out


def turn_from_row(row: Mapping[str, Any]) -> Turn:
    """A finished diagnosis_run row as routing history: the conclusion, else the answer."""
    intent = row["intent"]
    answer = row["conclusion"] if row["conclusion"] is not None else row["answer_json"]
    return Turn(row["run_id"], row["query"], IntentType(intent) if intent else None, answer)


def is_previous_turn_row(row: Mapping[str, Any]) -> bool:
    """Whether a diagnosis_run row is a published DIAGNOSIS success (never a fallback)."""
    return (
        row["intent"] == IntentType.DIAGNOSIS.value
        and row["status"] == StoredRunStatus.SUCCESS.value
        and row["release_outcome"] == ReleaseOutcome.SUCCESS.value
        and row["published_result"] is not None
    )


def previous_turn_from_row(row: Mapping[str, Any]) -> PreviousTurn:
    """The PreviousTurn of a published DIAGNOSIS success row."""
    return PreviousTurn(
        row["run_id"], row["query"], row["conclusion"], json.loads(row["published_result"])
    )


def require_running(run_id: str, status: str | None) -> None:
    """Refuse to change a run whose diagnosis_run row is missing (``status`` None) or no
    longer RUNNING."""
    if status is None:
        raise StoreError(f"run {run_id} has no diagnosis_run row", run_id)
    if status != StoredRunStatus.RUNNING.value:
        raise StoreError(f"run {run_id} is already {status}, not RUNNING", run_id)


def refuse_duplicates(run_id: str, what: str, keys: list[Any],
                      stored: Callable[[Any], bool]) -> None:
    """Raise a StoreError on the first key repeated in ``keys`` or already ``stored``."""
    seen: set[Any] = set()
    for key in keys:
        if key in seen or stored(key):
            raise StoreError(f"run {run_id}: duplicate {what} {key!r}", run_id)
        seen.add(key)
