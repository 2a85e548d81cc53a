"""Compare a run against a scenario's expectations.

The state axes and counts are compared exactly; every pattern field is matched against its
part of the run's observation (:mod:`harness_lab.runner.observe`) by the one matching
language of :mod:`harness_lab.scenarios.match`.
"""

from __future__ import annotations

from typing import Any

from harness_lab.record import RunRecord
from harness_lab.scenarios.match import Mismatch, Shown, match
from harness_lab.scenarios.spec import Expect

__all__ = ["KEYS", "Mismatch", "compare", "is_subsequence"]


def _v(x: Any) -> Any:
    return getattr(x, "value", x)


def is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    """True when ``needle`` appears in ``haystack`` in order (not necessarily adjacent)."""
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


_AXES = ("run_state", "release_outcome", "fallback_type", "intent", "stop_reason",
         "collection_state", "semantic_verdict", "sse_state")

KEYS = {"sse": "kind", "trace": "type", "rejections": "reason", "invocations": "tool"}
"""The key field of each list of records: a string item of its pattern stands for it."""

_PATTERNS = ("statuses", "sse", "trace", "invocations", "rejections", "gains", "progress",
             "row", "usage", "routing", "agent_requests", "terminations")
"""The pattern fields of :class:`Expect`, each matched against the observation's part."""


def compare(expect: Expect, record: RunRecord, observation: dict[str, Any]
            ) -> list[Mismatch]:
    """Every mismatch between ``expect`` and the run (empty when all hold)."""
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
    for part in _PATTERNS:
        pattern = getattr(expect, part)
        if pattern is not None:
            out += _match(part, pattern, observation)
    if expect.trace_contains is not None:
        out += _match("trace", {"$in_order": expect.trace_contains}, observation)
    if expect.trace_excludes is not None:
        out += _match("trace", {"$absent": expect.trace_excludes}, observation)
    check("tool_calls", expect.tool_calls, record.tool_calls)
    if expect.tool_calls_by_name is not None:
        counts: dict[str, int] = {}
        for inv in record.invocations:
            counts[inv.tool] = counts.get(inv.tool, 0) + 1
        observed = {name: counts.get(name, 0) for name in expect.tool_calls_by_name}
        check("tool_calls_by_name", expect.tool_calls_by_name, observed)
    check("model_calls", expect.model_calls, record.usage.model_calls)
    check("discarded", expect.discarded, len(record.discarded))
    if expect.previous_turn is not None:
        check("previous_turn", expect.previous_turn, _previous_turn(observation))
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
    if expect.stop_required_deliveries is not None:
        got = observation.get("stop_required_deliveries")
        check("stop_required_deliveries", expect.stop_required_deliveries,
              Shown("not observed (recorded components keep no requests)")
              if got is None else got)
    if expect.published_result is not None:
        row = record.stored_row or {}
        check("published_result", expect.published_result,
              row.get("published_result") is not None)
    return out


def _match(part: str, pattern: Any, observation: dict[str, Any]) -> list[Mismatch]:
    observed = observation.get(part)
    if observed is None and part in ("routing", "agent_requests"):
        return [Mismatch(part, pattern, Shown("not observed (recorded components keep no "
                                              "requests)"))]
    return match(pattern, observed, part, KEYS.get(part))


def _previous_turn(observation: dict[str, Any]) -> str:
    """The run id of the PreviousTurn the first diagnosis-model call received, or none."""
    steps = observation.get("agent_requests") or []
    if not steps or steps[0]["previous_turn"] is None:
        return "none"
    return str(steps[0]["previous_turn"]["run_id"])
