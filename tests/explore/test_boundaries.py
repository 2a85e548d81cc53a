"""Boundary enumeration: every call boundary, SSE event and time gap of the base run."""

from __future__ import annotations

from harness_lab.explore.boundaries import record_base
from harness_lab.scenarios.loader import load_file, load_text
from tests.explore.helpers import REPORT


def test_the_report_scenario_passes_fourteen_boundaries_in_lifecycle_order() -> None:
    base = record_base(load_file(REPORT)[0])
    assert [b.label for b in base.boundaries] == [
        "before router#1", "after router#1",
        "before model#1", "after model#1", "before tool:logs#1", "after tool:logs#1",
        "before model#2", "after model#2", "before tool:metrics#1", "after tool:metrics#1",
        "before model#3", "after model#3", "before guard#1", "after guard#1",
    ]


def test_each_boundary_records_the_verified_facts_the_snapshot_held_then() -> None:
    base = record_base(load_file(REPORT)[0])
    facts = {b.label: b.facts for b in base.boundaries}
    assert facts["before tool:logs#1"] == 0
    assert facts["before tool:metrics#1"] == 1
    assert all(b.live for b in base.boundaries)


def test_the_sse_sends_are_numbered_from_one_with_their_kinds() -> None:
    base = record_base(load_file(REPORT)[0])
    assert [s.label for s in base.sends] == [
        "sse#1:metadata", "sse#2:status", "sse#3:status", "sse#4:status", "sse#5:content",
        "sse#6:done"]
    assert [s.live for s in base.sends] == [True, True, True, True, False, False]


def test_the_gaps_are_midpoints_between_distinct_trace_timestamps() -> None:
    base = record_base(load_file(REPORT)[0])
    assert [g.at_s for g in base.gaps] == [0.1, 0.7, 2.2, 3.7, 4.7, 5.7, 6.45]


def test_gaps_are_relative_to_the_run_start_after_earlier_turns() -> None:
    text = REPORT.read_text(encoding="utf-8") + (
        "turns:\n  - {query: hello, router: SYSTEM_CHAT}\n")
    text = text.replace("latency: {router: 0.2,", "latency: {responder: 3.0, router: 0.2,")
    base = record_base(load_text(text)[0])
    assert base.started_at == 3.2
    assert base.gaps[0].at_s == 0.1


def test_the_recorder_composes_with_the_base_scenarios_own_fault_plan() -> None:
    text = REPORT.read_text(encoding="utf-8").replace(
        "expect:\n", "faults:\n  - {kind: semantic_guard, verdict: UNSUPPORTED}\nexpect:\n")
    text = text.replace("case: conclusion_guards_pass", "case: semantic_unsupported")
    text = text.replace("  semantic_verdict: SUPPORTED\n", "")
    text = text.replace("  published_result: true\n", "")
    base = record_base(load_text(text)[0])
    assert base.record.fallback_type is not None
    assert base.record.fallback_type.value == "SEMANTIC_UNSUPPORTED"
    assert len(base.boundaries) == 14
    assert base.outcome_row() is not None
    assert base.outcome_row().case == "semantic_unsupported"  # type: ignore[union-attr]
