"""The invariant checker: a clean run passes every check, and each tampered record breaks one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness_lab.invariants import check, invariant_names
from harness_lab.record import RunRecord
from harness_lab.states import (
    InvocationStatus,
    ReleaseOutcome,
    RunState,
    SseEventKind,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.trace import TraceEvent
from tests.conftest import build
from tests.test_harness import SUCCESS_STEPS

TT = TraceEventType


@pytest.fixture(scope="module")
def good() -> RunRecord:
    return build(SUCCESS_STEPS).run("why is checkout slow?")


def broken(record: RunRecord) -> set[str]:
    return {v.invariant for v in check(record)}


def messages(record: RunRecord, invariant: str) -> list[str]:
    return [v.message for v in check(record) if v.invariant == invariant]


def without(record: RunRecord, *types: TraceEventType) -> RunRecord:
    return replace(record, trace=tuple(e for e in record.trace if e.type not in types))


def with_detail(record: RunRecord, type_: TraceEventType, **detail: Any) -> RunRecord:
    return replace(record, trace=tuple(
        replace(e, detail={**e.detail, **detail}) if e.type is type_ else e
        for e in record.trace))


def appended(record: RunRecord, type_: TraceEventType, status: TraceEventStatus,
             **detail: Any) -> RunRecord:
    last = record.trace[-1]
    event = TraceEvent(record.run_id, last.seq + 1, last.t, type_, last.phase, status, detail)
    return replace(record, trace=(*record.trace, event))


def test_a_successful_diagnosis_breaks_no_invariant(good: RunRecord) -> None:
    assert good.release_outcome is ReleaseOutcome.SUCCESS
    assert check(good) == []


def test_the_invariants_are_listed_in_document_order() -> None:
    assert invariant_names() == [
        "single_termination", "sse_protocol", "cited_ready_only", "ready_has_evidence_status",
        "no_evidence_not_promoted", "no_evidence_tool_after_saturation",
        "release_decides_content", "guard_chain_needs_conclusion", "fallback_is_not_failure",
        "stored_axes_distinct", "late_content_refused", "tool_calls_reconciled"]


def test_two_terminal_transitions_break_single_termination(good: RunRecord) -> None:
    twice = replace(good, terminations=(*good.terminations, ("CANCELLED", "user", 9.0)))
    assert broken(twice) == {"single_termination"}


def test_a_missing_run_finished_event_breaks_single_termination(good: RunRecord) -> None:
    assert messages(without(good, TT.RUN_FINISHED), "single_termination") == [
        "0 RUN_FINISHED events"]


def test_a_second_done_breaks_the_sse_protocol(good: RunRecord) -> None:
    done = good.sse_events[-1]
    assert done.kind is SseEventKind.DONE
    twice = replace(good, sse_events=(*good.sse_events, replace(done, seq=done.seq + 1)))
    assert "2 done events" in messages(twice, "sse_protocol")


def test_events_out_of_order_break_the_sse_protocol(good: RunRecord) -> None:
    shuffled = replace(good, sse_events=tuple(reversed(good.sse_events)))
    found = messages(shuffled, "sse_protocol")
    assert "the first event is done, not metadata" in found
    assert "events out of the order metadata -> status* -> content|failure -> done" in found


def test_content_for_another_run_breaks_the_sse_protocol(good: RunRecord) -> None:
    events = tuple(replace(e, data={**e.data, "runId": "someone-else"})
                   if e.kind is SseEventKind.CONTENT else e for e in good.sse_events)
    assert messages(replace(good, sse_events=events), "sse_protocol") == [
        "a result's identity does not match the metadata"]


def test_a_done_disagreeing_with_the_release_breaks_the_sse_protocol(good: RunRecord) -> None:
    events = tuple(replace(e, data={**e.data, "outcome": "FALLBACK"})
                   if e.kind is SseEventKind.DONE else e for e in good.sse_events)
    assert messages(replace(good, sse_events=events), "sse_protocol") == [
        "done says FALLBACK, the release outcome is SUCCESS"]


def test_citing_an_invocation_in_error_breaks_cited_ready_only(good: RunRecord) -> None:
    cited = good.invocations[0]
    failed = replace(good, invocations=(replace(cited, status=InvocationStatus.ERROR),
                                        *good.invocations[1:]))
    assert f"published content cites {cited.invocation_id}, which is not a READY invocation" \
        in messages(failed, "cited_ready_only")


def test_a_record_left_projecting_breaks_ready_has_evidence_status(good: RunRecord) -> None:
    first = good.invocations[0]
    left = replace(good, invocations=(replace(first, status=InvocationStatus.PROJECTING),
                                      *good.invocations[1:]))
    assert f"{first.invocation_id} was left PROJECTING" in messages(
        left, "ready_has_evidence_status")


def test_an_evidence_tool_started_after_collection_stop_breaks_invariant_six(
        good: RunRecord) -> None:
    stopped = appended(good, TT.COLLECTION_STOP, TraceEventStatus.OK)
    late = appended(stopped, TT.TOOL_INVOCATION, TraceEventStatus.STARTED, tool="logs",
                    evidence_tool=True)
    assert messages(late, "no_evidence_tool_after_saturation") == [
        "evidence tool logs ran after COLLECTION_STOP"]


def test_a_non_evidence_tool_after_collection_stop_is_allowed(good: RunRecord) -> None:
    stopped = appended(good, TT.COLLECTION_STOP, TraceEventStatus.OK)
    late = appended(stopped, TT.TOOL_INVOCATION, TraceEventStatus.STARTED, tool="runbook",
                    evidence_tool=False)
    assert broken(late) == set()


def test_a_tool_started_before_collection_stop_is_allowed(good: RunRecord) -> None:
    assert any(e.type is TT.TOOL_INVOCATION for e in good.trace)
    assert broken(appended(good, TT.COLLECTION_STOP, TraceEventStatus.OK)) == set()


def test_diagnosis_content_without_a_release_decision_breaks_invariant_seven(
        good: RunRecord) -> None:
    assert messages(without(good, TT.RELEASE_DECISION), "release_decides_content") == [
        "diagnosis content was published without a RELEASE_DECISION"]


def test_a_report_without_a_supported_verdict_breaks_invariant_eight(good: RunRecord) -> None:
    refuted = with_detail(good, TT.SEMANTIC_GUARD_DECISION, verdict="UNSUPPORTED")
    assert messages(refuted, "guard_chain_needs_conclusion") == [
        "a diagnosis report was published without a SUPPORTED semantic verdict"]


def test_a_semantic_guard_without_a_conclusion_check_breaks_invariant_eight(
        good: RunRecord) -> None:
    assert any(e.type is TT.SEMANTIC_GUARD_ATTEMPT for e in good.trace)
    unchecked = with_detail(good, TT.EVIDENCE_GUARD_INITIAL, mode="progress")
    assert "repair or semantic guard ran without a conclusion check" in messages(
        unchecked, "guard_chain_needs_conclusion")


def test_a_fallback_with_a_failed_run_breaks_invariant_nine(good: RunRecord) -> None:
    failed = replace(good, release_outcome=ReleaseOutcome.FALLBACK, run_state=RunState.FAILED)
    found = messages(failed, "fallback_is_not_failure")
    assert "FALLBACK with RunState FAILED" in found
    assert "FALLBACK without a FallbackType and its safe content" in found


def test_a_stored_status_off_the_mapping_breaks_invariant_ten(good: RunRecord) -> None:
    assert good.stored_row is not None
    row = {**good.stored_row, "status": "FAILED"}
    assert messages(replace(good, stored_row=row), "stored_axes_distinct") == [
        "stored status FAILED, §12.2 maps SUCCESS to SUCCESS"]


def test_content_for_a_cancelled_run_breaks_late_content_refused(good: RunRecord) -> None:
    cancelled = replace(good, run_state=RunState.CANCELLED)
    assert "content was published for a cancelled run" in messages(
        cancelled, "late_content_refused")


def test_a_traced_losing_attempt_that_names_the_runs_termination_breaks_nothing(
        good: RunRecord) -> None:
    lost = appended(good, TT.TERMINATION_REJECTED, TraceEventStatus.REJECTED,
                    state="CANCELLED", reason="CLIENT_DISCONNECTED", at=1.0,
                    lost_to="SUCCESS", lost_to_reason="completed", lost_to_at=1.0)
    assert check(lost) == []


def test_a_losing_attempt_that_lost_to_another_state_than_the_runs_breaks_single_termination(
        good: RunRecord) -> None:
    lost = appended(good, TT.TERMINATION_REJECTED, TraceEventStatus.REJECTED,
                    state="CANCELLED", reason="CLIENT_DISCONNECTED", at=1.0,
                    lost_to="TIMED_OUT", lost_to_reason="DEADLINE_EXCEEDED", lost_to_at=1.0)
    assert messages(lost, "single_termination") == [
        f"a CANCELLED attempt at t={good.trace[-1].t} lost to TIMED_OUT, the run is SUCCESS"]


def test_run_finished_counting_a_tool_call_never_started_breaks_tool_calls_reconciled(
        good: RunRecord) -> None:
    started = sum(1 for e in good.trace if e.type is TT.TOOL_INVOCATION
                  and e.status is TraceEventStatus.STARTED)
    assert started == 2
    assert broken(with_detail(good, TT.RUN_FINISHED, tool_calls=3)) == {"tool_calls_reconciled"}
    assert messages(with_detail(good, TT.RUN_FINISHED, tool_calls=3),
                    "tool_calls_reconciled") == [
        "RUN_FINISHED counts 3 tool calls, 2 were started"]


def test_a_stored_row_counting_other_tool_calls_than_were_started_breaks_tool_calls_reconciled(
        good: RunRecord) -> None:
    assert good.stored_row is not None and good.stored_row["tool_calls"] == 2
    miscounted = replace(good, stored_row={**good.stored_row, "tool_calls": 3})
    assert broken(miscounted) == {"tool_calls_reconciled"}
    assert messages(miscounted, "tool_calls_reconciled") == [
        "the stored row counts 3 tool calls, 2 were started"]
    unfinished = replace(good, stored_row={**good.stored_row, "tool_calls": None})
    assert "tool_calls_reconciled" not in broken(unfinished)


def test_a_trace_without_run_finished_leaves_the_tool_call_count_unjudged(
        good: RunRecord) -> None:
    assert "tool_calls_reconciled" not in broken(without(good, TT.RUN_FINISHED))
