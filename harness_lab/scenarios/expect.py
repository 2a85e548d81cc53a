"""Compare a run record against a scenario's expectations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness_lab.record import RunRecord
from harness_lab.scenarios.spec import Expect

__all__ = ["Mismatch", "compare", "is_subsequence"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold."""

    field: str
    expected: Any
    observed: Any

    def __str__(self) -> str:
        return f"{self.field}: expected {self.expected}, got {self.observed}"


def _v(x: Any) -> Any:
    return getattr(x, "value", x)


def is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    """True when ``needle`` appears in ``haystack`` in order (not necessarily adjacent)."""
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


_AXES = ("run_state", "release_outcome", "fallback_type", "intent", "stop_reason",
         "collection_state", "semantic_verdict", "sse_state")


def compare(expect: Expect, record: RunRecord, *, previous_turn: str | None = None
            ) -> list[Mismatch]:
    """Every mismatch between ``expect`` and ``record`` (empty when all hold)."""
    out: list[Mismatch] = []

    def check(field: str, expected: Any, observed: Any) -> None:
        if expected is not None and expected != observed:
            out.append(Mismatch(field, expected, observed))

    for axis in _AXES:
        want = getattr(expect, axis)
        if want is not None:
            got = _v(getattr(record, axis))
            check(axis, "none" if want == "none" else _v(want), "none" if got is None else got)
    if expect.db_status is not None:
        check("db_status", expect.db_status.value, _v(record.stored_status))
    check("termination_reason", expect.termination_reason, record.termination_reason)
    if expect.sse is not None:
        check("sse", [k.value for k in expect.sse], record.sse_kinds())
    if expect.trace is not None:
        check("trace", [t.value for t in expect.trace], record.trace_types())
    if expect.trace_contains is not None:
        want = [t.value for t in expect.trace_contains]
        if not is_subsequence(want, record.trace_types()):
            out.append(Mismatch("trace_contains", want, record.trace_types()))
    if expect.trace_excludes is not None:
        present = [t.value for t in expect.trace_excludes if t.value in record.trace_types()]
        if present:
            out.append(Mismatch("trace_excludes", "none of " + str(present), present))
    check("tool_calls", expect.tool_calls, record.tool_calls)
    if expect.tool_calls_by_name is not None:
        counts: dict[str, int] = {}
        for inv in record.invocations:
            counts[inv.tool] = counts.get(inv.tool, 0) + 1
        observed = {name: counts.get(name, 0) for name in expect.tool_calls_by_name}
        check("tool_calls_by_name", expect.tool_calls_by_name, observed)
    check("model_calls", expect.model_calls, record.usage.model_calls)
    if expect.rejections is not None:
        check("rejections", [r.value for r in expect.rejections],
              [r.reason.value for r in record.rejections])
    check("discarded", expect.discarded, len(record.discarded))
    if expect.previous_turn is not None:
        check("previous_turn", expect.previous_turn, previous_turn or "none")
    if expect.failure_code is not None:
        failures = [e for e in record.sse_events if e.kind.value == "failure"]
        check("failure_code", expect.failure_code,
              failures[0].data.get("code") if failures else "none")
    if expect.done_outcome is not None:
        dones = [e for e in record.sse_events if e.kind.value == "done"]
        check("done_outcome", _v(expect.done_outcome),
              dones[0].data.get("outcome") if dones else "none")
    check("stop_required_delivered", expect.stop_required_delivered,
          record.stop_required_delivered)
    if expect.gains is not None:
        check("gains", [g.value for g in expect.gains], [g.value for g in record.gains])
    if expect.published_result is not None:
        row = record.stored_row or {}
        check("published_result", expect.published_result,
              row.get("published_result") is not None)
    return out
