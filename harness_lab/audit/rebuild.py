"""A RunRecord rebuilt from stored rows (``diagnosis_run``, ``trace_event``,
``tool_invocation`` and, when a source has them, SSE events), so the invariant rules of
:mod:`harness_lab.invariant_rules` check runs the toolkit did not produce.

What rows cannot say is left empty (the ChatApplicationStatus sequence, budget headroom,
information gains); the rules that need SSE events are not checked without them.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from operator import itemgetter
from typing import Any, TypeVar

from harness_lab.bounded_json import MAX_JSON_BYTES, MAX_JSON_DEPTH, JsonInputError, parse_json
from harness_lab.bounds import INT_MAX, INT_MIN
from harness_lab.core.budget import Usage
from harness_lab.record import RunRecord
from harness_lab.sse import SseEvent
from harness_lab.states import (
    EvidenceStatus,
    FallbackType,
    InformationGain,
    IntentType,
    InvocationStatus,
    ReleaseOutcome,
    RunState,
    SseEventKind,
    SseState,
    StoredRunStatus,
    ToolErrorCode,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

__all__ = ["SSE_RULES", "ColumnError", "Incomplete", "parse_line", "rebuild"]

SSE_RULES = ("sse_protocol", "late_content_refused")
"""The invariants that read SSE events: not checked on a source without them."""


class Incomplete(Exception):  # noqa: N818 (a state of a run, not a failure of the code)
    """The run has not finished: its row is RUNNING and there is no RUN_FINISHED event."""


class ColumnError(ValueError):
    """A stored value that does not fit its column: its ``table``, the row's ``index`` among
    the rows of that table given for the run (0 for ``diagnosis_run``), the ``column`` and
    what is wrong; its text is ``table.column: problem``."""

    def __init__(self, table: str, index: int, column: str, problem: str) -> None:
        super().__init__(f"{table}.{column}: {problem}")
        self.table = table
        self.index = index
        self.column = column


def _within_bounds(value: Any, depth: int = 1) -> bool:
    """True when a value plain ``json.loads`` returned is one the bounded reader returns the
    same: nested at most :data:`MAX_JSON_DEPTH` deep, integers of 64 bits, finite numbers."""
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list:
        items = value
    elif kind is int:
        return bool(INT_MIN <= value <= INT_MAX)
    elif kind is float:
        return math.isfinite(value)
    else:
        return True  # a string, a boolean or null
    if depth > MAX_JSON_DEPTH:
        return False
    for item in items:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int and INT_MIN <= item <= INT_MAX:
            continue
        if kind is int or not _within_bounds(item, depth + 1):
            return False
    return True


# the C scanner json.loads runs, without its wrapping: (value, end) of the text from an index
_scan: Callable[[str, int], tuple[Any, int]]
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_VALUE_STARTS = frozenset('{["-0123456789tfn')  # a value's first character (no whitespace)


def parse_line(text: str, *, source: str, line: int | None = None) -> Any:
    """:func:`~harness_lab.bounded_json.parse_json`'s value of ``text`` (a line of a source),
    parsed by the C parser first: the bounded reader, which decides every refusal and its
    message, reads it again only when that fails or the value is beyond its bounds."""
    if len(text) <= MAX_JSON_BYTES:
        try:
            fast = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            if _within_bounds(fast):
                return fast
    return parse_json(text, source=source, line=line)


def _json(value: Any) -> Any:
    """A JSON text column's value (the bounded reader's; plain text is kept as it is).

    The text is parsed by the C parser first and handed to the bounded reader, which decides
    every refusal and its message, only when that fails or the value is beyond its bounds.
    """
    if isinstance(value, str):
        if len(value) <= MAX_JSON_BYTES and value[:1] in _VALUE_STARTS:
            try:
                fast, end = _scan(value, 0)
            except (StopIteration, ValueError, RecursionError):
                pass
            else:
                if end == len(value) and _within_bounds(fast):
                    return fast
        try:
            return parse_json(value, source="a JSON column")
        except JsonInputError as exc:
            if exc.message.startswith("not JSON"):
                return value
            raise ValueError(str(exc)) from None
    return value


def _shown(value: Any) -> str:
    """A stored value as a message quotes it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> float:
    """A stored time or amount (a number or its text) as a finite float; ValueError for
    anything else, NaN or infinity."""
    if isinstance(value, bool):
        raise ValueError(f"{_shown(value)} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{_shown(value)} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{_shown(value)} is not a finite number")
    return number


def _opt_number(value: Any) -> float | None:
    """A time or amount column that may be empty (null or empty text): None then."""
    return None if value is None or value == "" else _number(value)


_WIDE = 1 << 127


def _count(value: Any, *, wide: bool = False) -> int:
    """A stored count or sequence number as a 64-bit integer, or 128-bit with ``wide`` (a
    run's usage, which sums 64-bit counts), never negative; ValueError otherwise."""
    if type(value) is int and 0 <= value <= INT_MAX:
        return value
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a whole number")
    text = value.strip() if isinstance(value, str) else None
    if isinstance(value, int):  # not a boolean: refused above
        count = value
    elif text is not None and text.lstrip("-").isdigit() and len(text) <= (40 if wide else 20):
        count = int(text)
    else:
        number = _number(value)
        if number != int(number):
            raise ValueError(f"{value!r} is not a whole number")
        count = int(number)
    low, high = (-_WIDE, _WIDE - 1) if wide else (INT_MIN, INT_MAX)
    if not low <= count <= high:
        raise ValueError(f"{str(value)[:40]!r} is not a {128 if wide else 64}-bit integer")
    if count < 0:
        raise ValueError(f"{count} is negative: a count is 0 or more")
    return count


def _opt_count(value: Any, *, wide: bool = False) -> int:
    """A count column that may be empty (null or empty text): 0 then."""
    return 0 if value is None or value == "" else _count(value, wide=wide)


def _text(value: Any) -> str:
    """A text column (an id stored as a number reads as its digits); ValueError for a
    boolean, an array or an object."""
    if type(value) is str:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{_shown(value)} is not text")


def _opt_text(value: Any) -> str | None:
    """A text column that may be null."""
    return None if value is None else _text(value)


def _object(value: Any) -> Mapping[str, Any]:
    """An object column (an object or its JSON text; null or empty: an empty object)."""
    data = _json(value) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{_shown(value)} is not an object or its JSON text")
    return data


E = TypeVar("E", bound=Enum)


def _member(kind: type[E], value: Any) -> E:
    """``kind(value)``, by a dict look-up for a stored value (the enum's own call, and its
    ValueError, for anything else)."""
    try:
        return kind._value2member_map_[value]  # type: ignore[return-value]
    except (KeyError, TypeError):
        pass
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{_shown(value)} is not a valid {kind.__name__}") from None


def _opt(kind: Any, value: Any) -> Any:
    return None if value is None or value == "" else _member(kind, value)


def _in_order(rows: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """The rows with their sequence numbers, by sequence number (stable)."""
    return sorted(((_count(r["seq"]), r) for r in rows), key=itemgetter(0))


def _trace(run_id: str, rows: Sequence[Mapping[str, Any]]) -> tuple[TraceEvent, ...]:
    out = []
    for seq, r in _in_order(rows):
        detail = _json(r.get("detail")) or {}
        out.append(TraceEvent(run_id, seq, _number(r["t"]), _member(TraceEventType, r["type"]),
                              _member(TracePhase, r["phase"]),
                              _member(TraceEventStatus, r["status"]),
                              detail if isinstance(detail, dict) else {"detail": detail}))
    return tuple(out)


def _invocations(run_id: str, rows: Sequence[Mapping[str, Any]]
                 ) -> tuple[CanonicalInvocation, ...]:
    out = []
    for seq, r in _in_order(rows):
        scope = _json(r.get("scope")) or {}
        out.append(CanonicalInvocation(
            _text(r["invocation_id"]), run_id, seq, _text(r["tool"]),
            scope if isinstance(scope, dict) else {"scope": scope},
            _opt_text(r.get("normalized_scope")) or "", _member(InvocationStatus, r["status"]),
            _opt_number(r.get("started_at")) or 0.0,
            _opt(EvidenceStatus, r.get("evidence_status")),
            _opt(ToolErrorCode, r.get("error_code")), _opt_text(r.get("error")),
            _opt_count(r.get("items")), _opt_count(r.get("size_bytes")),
            _opt(InformationGain, r.get("information_gain")), _opt_number(r.get("finished_at")),
            _opt_text(r.get("call_id"))))
    return tuple(out)


def _sse(rows: Sequence[Mapping[str, Any]]) -> tuple[SseEvent, ...]:
    return tuple(SseEvent(seq, _number(r["t"]), _member(SseEventKind, r["kind"]),
                          _object(r.get("data")))
                 for seq, r in _in_order(rows))


def _enum(kind: type[Enum]) -> Callable[[Any], Any]:
    return lambda value: _member(kind, value)


def _optional(kind: type[Enum]) -> Callable[[Any], Any]:
    return lambda value: _opt(kind, value)


def _required(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def read(value: Any) -> Any:
        if value is None:
            raise ValueError("missing or null")
        return convert(value)

    return read


_COLUMNS: dict[str, tuple[tuple[str, Callable[[Any], Any]], ...]] = {
    "diagnosis_run": (
        ("run_id", _required(_text)), ("session_id", _opt_text), ("query", _opt_text),
        ("intent", _optional(IntentType)), ("status", _optional(StoredRunStatus)),
        ("termination_state", _optional(RunState)),
        ("release_outcome", _optional(ReleaseOutcome)),
        ("fallback_type", _optional(FallbackType)), ("termination_reason", _opt_text),
        ("agent_steps", _opt_count), ("tool_calls", _opt_count),
        ("total_tokens", functools.partial(_opt_count, wide=True)),
        ("input_tokens", functools.partial(_opt_count, wide=True)),
        ("output_tokens", functools.partial(_opt_count, wide=True)),
        ("created_at", _opt_number), ("finished_at", _opt_number),
        ("duration_ms", _opt_number), ("answer_json", _json)),
    "trace_event": (
        ("seq", _required(_count)), ("t", _required(_number)),
        ("type", _required(_enum(TraceEventType))), ("phase", _required(_enum(TracePhase))),
        ("status", _required(_enum(TraceEventStatus))), ("detail", _json)),
    "tool_invocation": (
        ("seq", _required(_count)), ("invocation_id", _required(_text)),
        ("tool", _required(_text)), ("scope", _json), ("normalized_scope", _opt_text),
        ("status", _required(_enum(InvocationStatus))), ("started_at", _opt_number),
        ("evidence_status", _optional(EvidenceStatus)),
        ("error_code", _optional(ToolErrorCode)), ("error", _opt_text),
        ("items", _opt_count), ("size_bytes", _opt_count),
        ("information_gain", _optional(InformationGain)), ("finished_at", _opt_number),
        ("call_id", _opt_text)),
    "sse_event": (
        ("seq", _required(_count)), ("t", _required(_number)),
        ("kind", _required(_enum(SseEventKind))), ("data", _object)),
}
"""Each table's columns a rebuilt record reads, with how each value is read (what
:func:`_column_error` checks, one column at a time, to name the one that does not fit)."""


def _column_error(tables: Mapping[str, Sequence[Mapping[str, Any]] | None]) -> ColumnError | None:
    """The first stored value of ``tables`` (by table name, each its run's rows) that does
    not fit its column, or None."""
    for table, rows in tables.items():
        for index, r in enumerate(rows or ()):
            for column, read in _COLUMNS[table]:
                try:
                    read(r.get(column))
                except (ValueError, TypeError, ArithmeticError) as exc:
                    return ColumnError(table, index, column, str(exc))
    return None


def rebuild(row: Mapping[str, Any], trace_rows: Sequence[Mapping[str, Any]],
            invocation_rows: Sequence[Mapping[str, Any]],
            sse_rows: Sequence[Mapping[str, Any]] | None = None) -> RunRecord:
    """The RunRecord the rows describe; raise :class:`Incomplete` for a run still RUNNING
    without RUN_FINISHED, :class:`ColumnError` naming the table and column of a stored value
    that does not fit it (a value outside its enum, text where a number belongs), ValueError
    for rows that do not fit together."""
    try:
        return _rebuild(row, trace_rows, invocation_rows, sse_rows)
    except (ValueError, TypeError, KeyError, ArithmeticError):
        found = _column_error({"diagnosis_run": [row], "trace_event": trace_rows,
                               "tool_invocation": invocation_rows, "sse_event": sse_rows})
        if found is None:
            raise
        raise found from None


_TIMES = ("created_at", "finished_at", "duration_ms")
"""The time and duration columns of ``diagnosis_run``: the rebuilt record's stored row holds
each as a number (or None), as the rules that compare them read it."""


def _stored_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as the record keeps it: each of :data:`_TIMES` it has read as a number."""
    stored = dict(row)
    for column in _TIMES:
        if column in stored:
            stored[column] = _opt_number(stored[column])
    return stored


def _stored(row: Mapping[str, Any], column: str) -> Any:
    """A column's value, None when it is null or empty text (the run's trace says then)."""
    value = row.get(column)
    return None if value == "" else value


def _rebuild(row: Mapping[str, Any], trace_rows: Sequence[Mapping[str, Any]],
             invocation_rows: Sequence[Mapping[str, Any]],
             sse_rows: Sequence[Mapping[str, Any]] | None) -> RunRecord:
    run_id = _text(row["run_id"])
    trace = _trace(run_id, trace_rows)
    finished = [e for e in trace if e.type is TraceEventType.RUN_FINISHED]
    if row.get("status") == StoredRunStatus.RUNNING.value and not finished:
        raise Incomplete(run_id)
    state = _stored(row, "termination_state") or (finished[-1].detail.get("run_state")
                                                  if finished else None)
    outcome = _stored(row, "release_outcome") or (finished[-1].detail.get("outcome")
                                                  if finished else None)
    if state is None or outcome is None:
        raise Incomplete(run_id)
    release = _member(ReleaseOutcome, outcome)
    answer = _json(row.get("answer_json"))
    answer = answer if isinstance(answer, dict) else None
    published = release in (ReleaseOutcome.SUCCESS, ReleaseOutcome.FALLBACK)
    sse = _sse(sse_rows) if sse_rows is not None else ()
    # the client left if its disconnect ended the run, or tried to and lost to another end
    disconnected = any(
        e.type in (TraceEventType.RUN_CANCELLED, TraceEventType.TERMINATION_REJECTED)
        and e.detail.get("reason") == "CLIENT_DISCONNECTED" for e in trace)
    terminations = tuple((str(e.detail.get("run_state")), str(e.detail.get("outcome")), e.t)
                         for e in finished)
    # a time the row does not keep is the trace's: the run began with its first event and
    # ended with its last (0.0 is a time like any other, kept where the row keeps it)
    created, ended = _opt_number(row.get("created_at")), _opt_number(row.get("finished_at"))
    return RunRecord(
        run_id=run_id, session_id=_opt_text(row.get("session_id")) or "",
        query=_opt_text(row.get("query")) or "", intent=_opt(IntentType, row.get("intent")),
        run_state=_member(RunState, state),
        termination_reason=_opt_text(row.get("termination_reason")),
        release_outcome=release, fallback_type=_opt(FallbackType, row.get("fallback_type")),
        stored_status=_opt(StoredRunStatus, row.get("status")),
        sse_state=SseState.DISCONNECTED if disconnected else SseState.TERMINAL,
        collection_state=None, stop_reason=None, semantic_verdict=None, statuses=(),
        usage=Usage(_opt_count(row.get("agent_steps")), _opt_count(row.get("tool_calls")),
                    _opt_count(row.get("total_tokens"), wide=True), 0,
                    _opt_count(row.get("input_tokens"), wide=True),
                    _opt_count(row.get("output_tokens"), wide=True)),
        headroom={}, started_at=created if created is not None else (
            trace[0].t if trace else 0.0),
        finished_at=ended if ended is not None else (trace[-1].t if trace else 0.0),
        agent_steps=_opt_count(row.get("agent_steps")), content=answer if published else None,
        failure=None if published else answer, sse_events=sse, sse_refused=(), trace=trace,
        invocations=_invocations(run_id, invocation_rows), rejections=(), gains=(),
        stop_required_delivered=False, evidence_repaired=False, deadline_at=float("inf"),
        discarded=(), stored_row=_stored_row(row), terminations=terminations)
