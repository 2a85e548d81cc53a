"""Seeded defects: each one is caught by the invariant checker."""

from __future__ import annotations

from harness_lab.config import HarnessConfig
from harness_lab.defects import Defect
from harness_lab.fakes import call_tool, draft, progress, report
from harness_lab.invariants import check
from harness_lab.ports import GuardReply
from tests.conftest import INV1, build
from tests.test_harness import SUCCESS_STEPS


def broken(record: object) -> set[str]:
    return {v.invariant for v in check(record)}  # type: ignore[arg-type]


def test_a_late_success_overriding_a_cancel_breaks_the_single_termination_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.LATE_SUCCESS_OVERRIDES_CANCEL}))
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard, config=config).run("slow?", cancel_at=4.0)
    assert r.terminations[0][0] == "CANCELLED" and r.terminations[1][0] == "SUCCESS"
    assert "single_termination" in broken(r)


def test_without_the_defect_the_same_cancel_keeps_one_termination() -> None:
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard).run("slow?", cancel_at=4.0)
    assert [t[0] for t in r.terminations] == ["CANCELLED"]
    assert broken(r) == set()


def test_an_evidence_tool_after_saturation_breaks_invariant_six() -> None:
    config = HarnessConfig(no_gain_threshold=1,
                           defects=frozenset({Defect.EVIDENCE_TOOL_AFTER_SATURATION}))
    r = build([
        call_tool("logs", {"s": 1}),
        call_tool("metrics", {"s": 1}, progress=progress("NO_GAIN", facts=[("t", [INV1])])),
        report(progress()),
    ], config=config).run("slow?")
    assert "no_evidence_tool_after_saturation" in broken(r)


def test_a_second_content_event_breaks_the_sse_protocol_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.SECOND_CONTENT_EVENT}))
    r = build(SUCCESS_STEPS, config=config).run("slow?")
    assert r.sse_kinds().count("content") == 2
    assert "sse_protocol" in broken(r)


def test_a_fallback_persisted_as_a_published_result_breaks_the_store_invariant() -> None:
    config = HarnessConfig(defects=frozenset({Defect.FALLBACK_AS_PREVIOUS_TURN}))
    r = build([draft(missing_info=["which service"])], config=config).run("slow?")
    assert r.stored_row is not None and r.stored_row["published_result"] is not None
    assert "stored_axes_distinct" in broken(r)
