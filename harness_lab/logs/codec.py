"""Scenario results as JSON-ready data and back, losslessly; records through the one codec.

A run line of a log is a scenario result: its record and earlier turns whole (encoded by
:mod:`harness_lab.codec` from the record's own declaration, so ``record_from_data(
record_to_data(r)) == r`` for every record a run makes), its expectation mismatches,
invariant violations and error, and what a crashed run left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness_lab.codec import data, from_data, to_data
from harness_lab.invariants import Violation
from harness_lab.record import RunRecord
from harness_lab.runner.expect import Mismatch
from harness_lab.runner.run import ScenarioResult
from harness_lab.sse import SseEvent
from harness_lab.trace import TraceEvent

__all__ = ["data", "record_from_data", "record_result", "record_to_data", "result_from_data",
           "result_to_data", "variant_of"]


def record_to_data(record: RunRecord) -> dict[str, Any]:
    """Every field of ``record`` as JSON data (:func:`harness_lab.codec.to_data`)."""
    return to_data(record)


def record_from_data(value: Mapping[str, Any], path: str = "") -> RunRecord:
    """The :class:`RunRecord` that :func:`record_to_data` wrote; raise
    :class:`~harness_lab.codec.DecodeError` naming the first field that does not fit."""
    return from_data(RunRecord, value, path)


def record_result(name: str, path: str | None, record: RunRecord, **fields: Any
                  ) -> ScenarioResult:
    """The scenario result of a bare ``record`` (no scenario file states what it expects):
    judged by the invariants alone, each broken one unexpected; ``fields`` give the rest."""
    from harness_lab.invariants import check

    violations = tuple(check(record))
    return ScenarioResult(name, path, record=record, violations=violations,
                          unexpected=tuple(sorted({v.invariant for v in violations})),
                          stored_row=dict(record.stored_row) if record.stored_row else None,
                          **fields)


def variant_of(name: str) -> str | None:
    """The matrix variant label of a scenario name (``name[label]``), or None."""
    if name.endswith("]") and "[" in name:
        return name[name.index("[") + 1:-1]
    return None


def result_to_data(result: ScenarioResult) -> dict[str, Any]:
    """A scenario result as JSON data: its record and earlier turns whole, its expectation
    mismatches, invariant violations and error, and what a crashed run left behind."""
    return {
        "scenario": result.scenario, "variant": variant_of(result.scenario),
        "file": result.path, "description": result.description, "tags": list(result.tags),
        "case": result.case, "verdict": result.verdict,
        "record": None if result.record is None else to_data(result.record),
        "turns": [to_data(t) for t in result.turns],
        "mismatches": [{"field": m.field, "expected": data(m.expected),
                        "observed": data(m.observed)} for m in result.mismatches],
        "violations": [{"invariant": v.invariant, "run_id": v.run_id, "message": v.message}
                       for v in result.violations],
        "unexpected": list(result.unexpected), "missing": list(result.missing),
        "error": result.error, "crashed": result.crashed,
        "stored_row": None if result.stored_row is None else data(result.stored_row),
        "extra": data(result.extra),
        "partial_sse": [to_data(e) for e in result.partial_sse],
        "partial_trace": [to_data(e) for e in result.partial_trace],
    }


def result_from_data(d: Mapping[str, Any]) -> ScenarioResult:
    """The :class:`ScenarioResult` that :func:`result_to_data` wrote (mismatch values come
    back as the JSON data they were written as: an enum member as its value)."""
    record = d["record"]
    return ScenarioResult(
        d["scenario"], d["file"], d["description"], tuple(d["tags"]), d["case"],
        None if record is None else from_data(RunRecord, record, "record"),
        tuple(from_data(RunRecord, t, f"turns[{i}]") for i, t in enumerate(d["turns"])),
        tuple(Mismatch(m["field"], m["expected"], m["observed"]) for m in d["mismatches"]),
        tuple(Violation(v["invariant"], v["run_id"], v["message"]) for v in d["violations"]),
        tuple(d["unexpected"]), tuple(d["missing"]), d["error"], d["crashed"],
        d["stored_row"], dict(d["extra"]),
        tuple(from_data(SseEvent, e, f"partial_sse[{i}]") for i, e in enumerate(d["partial_sse"])),
        tuple(from_data(TraceEvent, e, f"partial_trace[{i}]")
              for i, e in enumerate(d["partial_trace"])))
