"""Compare a run against a scenario's expectations.

The state axes and counts are compared exactly; every pattern field is matched against its
part of the run's observation (:mod:`harness_lab.runner.observe`) by the one matching
language of :mod:`harness_lab.scenarios.match`; each relation is evaluated over the whole
observation (:mod:`harness_lab.scenarios.relations`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness_lab.record import RunRecord
from harness_lab.scenarios.match import Mismatch, Shown, match, plain, render
from harness_lab.scenarios.paths import KEYS
from harness_lab.scenarios.relations import parse_relation
from harness_lab.scenarios.spec import Expect

__all__ = ["KEYS", "Mismatch", "compare"]

_AXES = ("run_state", "release_outcome", "fallback_type", "intent", "stop_reason",
         "collection_state", "semantic_verdict", "sse_state")

_PATTERNS = ("statuses", "sse", "sse_states", "sse_refused", "trace", "timeline", "invocations",
             "rejections", "gains", "progress", "row", "usage", "headroom", "routing",
             "agent_requests", "guard_requests", "repair_requests", "terminations")
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
            got = plain(getattr(record, axis))
            check(axis, "none" if want == "none" else plain(want), "none" if got is None else got)
    if expect.db_status is not None:
        stored = record.stored_status
        check("db_status", plain(expect.db_status), "none" if stored is None else stored.value)
    if expect.termination_reason is not None:
        check("termination_reason", plain(expect.termination_reason), record.termination_reason)
    for part in _PATTERNS:
        pattern = getattr(expect, part)
        if pattern is not None:
            out += _match(part, pattern, observation)
    for i, text in enumerate(expect.relations or ()):
        out += _relation(i, text, observation)
    if expect.trace_contains is not None:
        out += _match("trace", {"$in_order": expect.trace_contains}, observation)
    if expect.trace_excludes is not None:
        out += _match("trace", {"$absent": expect.trace_excludes}, observation)
    check("tool_calls", expect.tool_calls, record.tool_calls)
    if expect.tool_calls_by_name is not None:
        counts = Counter(inv.tool for inv in record.invocations)
        check("tool_calls_by_name", expect.tool_calls_by_name,
              {name: counts[name] for name in expect.tool_calls_by_name})
    check("model_calls", expect.model_calls, record.usage.model_calls)
    check("discarded", expect.discarded, len(record.discarded))
    if expect.previous_turn is not None:
        check("previous_turn", expect.previous_turn, _previous_turn(observation))
    if expect.failure_code is not None:
        check("failure_code", expect.failure_code, _first_event(record, "failure", "code"))
    if expect.error is not None:
        check("error", expect.error, "none" if record.error is None else record.error)
    if expect.done_outcome is not None:
        check("done_outcome", plain(expect.done_outcome),
              _first_event(record, "done", "outcome"))
    check("stop_required_delivered", expect.stop_required_delivered,
          record.stop_required_delivered)
    check("evidence_repaired", expect.evidence_repaired, record.evidence_repaired)
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


def _relation(index: int, text: str, observation: dict[str, Any]) -> list[Mismatch]:
    """A mismatch when relation ``index`` does not hold: the values it compared, or why a
    path of it names nothing."""
    relation = parse_relation(text)
    unheld = relation.holds(observation)
    if unheld is None:
        return []
    got = " and ".join(render(v) for v in unheld.values)
    note = f"{got}: {unheld.note}" if got and unheld.note else got or unheld.note
    return [Mismatch(f"relations[{index}]", Shown(str(relation)), Shown(note))]


def _first_event(record: RunRecord, kind: str, key: str) -> Any:
    """The ``key`` of the data of the run's first SSE event of ``kind``, or none."""
    return next((e.data.get(key) for e in record.sse_events if e.kind.value == kind), "none")


def _previous_turn(observation: dict[str, Any]) -> str:
    """The run id of the PreviousTurn the first diagnosis-model call received, or none."""
    steps = observation.get("agent_requests") or []
    if not steps or steps[0]["previous_turn"] is None:
        return "none"
    return str(steps[0]["previous_turn"]["run_id"])
