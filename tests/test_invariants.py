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
from tests.conftest import build, scripted_components
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
        "stored_axes_distinct", "late_content_refused", "tool_calls_reconciled",
        "tokens_reconciled", "times_consistent"]


def test_two_terminal_transitions_break_single_termination(good: RunRecord) -> None:
    twice = replace(good, terminations=(*good.terminations, ("CANCELLED", "user", 3.0)))
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


def test_a_stored_row_counting_other_tokens_than_run_finished_breaks_tokens_reconciled(
        good: RunRecord) -> None:
    assert good.stored_row is not None
    tokens = good.stored_row["total_tokens"]
    assert good.events_of(TT.RUN_FINISHED)[0].detail["tokens"] == tokens
    miscounted = replace(good, stored_row={**good.stored_row, "total_tokens": tokens + 5})
    assert broken(miscounted) == {"tokens_reconciled"}
    assert messages(miscounted, "tokens_reconciled") == [
        f"the stored row counts {tokens + 5} tokens, RUN_FINISHED reconciled {tokens}"]
    assert broken(with_detail(good, TT.RUN_FINISHED, tokens=tokens + 1)) == {
        "tokens_reconciled"}


def test_tokens_a_store_or_a_trace_does_not_keep_are_left_unjudged(good: RunRecord) -> None:
    assert good.stored_row is not None
    unkept = replace(good, stored_row={**good.stored_row, "total_tokens": None})
    assert "tokens_reconciled" not in broken(unkept)
    assert "tokens_reconciled" not in broken(with_detail(good, TT.RUN_FINISHED, tokens=None))
    assert "tokens_reconciled" not in broken(without(good, TT.RUN_FINISHED))


# --- times_consistent: the stored row's times, the trace's and the run's agree -------------------

def stored(record: RunRecord, **columns: Any) -> RunRecord:
    """``record`` with these columns of its stored row changed."""
    assert record.stored_row is not None
    return replace(record, stored_row={**record.stored_row, **columns})


def retimed(record: RunRecord, times: dict[int, float]) -> RunRecord:
    """``record`` with the trace events of these sequence numbers at these times."""
    return replace(record, trace=tuple(replace(e, t=times.get(e.seq, e.t))
                                       for e in record.trace))


def test_a_stored_row_finished_before_it_was_created_breaks_times_consistent(
        good: RunRecord) -> None:
    assert good.stored_row is not None  # the run is stored from 0 to 3 s
    assert (good.stored_row["created_at"], good.stored_row["finished_at"],
            good.stored_row["duration_ms"]) == (0.0, 3.0, 3000.0)
    assert (good.started_at, good.finished_at) == (0.0, 3.0)
    backwards = stored(good, finished_at=-1.5)
    assert broken(backwards) == {"times_consistent"}
    assert messages(backwards, "times_consistent") == [
        "the stored finished_at -1.5 is before its created_at 0"]


def test_a_negative_stored_duration_breaks_times_consistent(good: RunRecord) -> None:
    assert messages(stored(good, duration_ms=-250.0), "times_consistent") == [
        "the stored duration_ms -250 is negative"]


def test_a_stored_duration_other_than_finished_at_less_created_at_breaks_times_consistent(
        good: RunRecord) -> None:
    assert messages(stored(good, duration_ms=63000.0), "times_consistent") == [
        "the stored duration_ms 63000 is not finished_at - created_at, 3000 ms"]


def test_times_stored_to_the_whole_millisecond_still_agree(good: RunRecord) -> None:
    rounded = stored(good, created_at=0.0004, finished_at=2.9996, duration_ms=2999.0)
    assert "times_consistent" not in broken(rounded)
    assert messages(stored(good, duration_ms=3001.5), "times_consistent") == [
        "the stored duration_ms 3001.5 is not finished_at - created_at, 3000 ms"]


def test_a_trace_event_earlier_than_the_one_before_it_breaks_times_consistent(
        good: RunRecord) -> None:
    assert [(e.seq, e.t) for e in good.trace[5:8]] == [(5, 2.0), (6, 2.0), (7, 2.0)]
    went_back = retimed(good, {6: 2.5, 7: 1.0})
    assert broken(went_back) == {"times_consistent"}
    assert messages(went_back, "times_consistent") == [
        "the trace goes back in time 1 time, first TOOL_INVOCATION (seq 7) at t=1 after "
        "AGENT_MODEL_STEP (seq 6) at t=2.5"]


def test_trace_events_outside_the_stored_runs_time_break_times_consistent(
        good: RunRecord) -> None:
    last = good.trace[-1]
    assert (last.seq, last.type) == (14, TT.RUN_FINISHED)
    late = retimed(good, {14: 9.0})
    assert messages(late, "times_consistent") == [
        "1 trace event outside the stored run's time [0, 3], first RUN_FINISHED (seq 14) at t=9"]
    early = stored(good, created_at=0.5, duration_ms=2500.0)
    assert messages(replace(early, started_at=0.5), "times_consistent") == [
        "5 trace events outside the stored run's time [0.5, 3], first RUN_STARTED (seq 0) "
        "at t=0"]


def test_a_run_finishing_at_another_time_than_its_stored_row_breaks_times_consistent(
        good: RunRecord) -> None:
    assert messages(replace(good, finished_at=33.0), "times_consistent") == [
        "the run finished at t=33, its stored row at 3"]
    assert messages(replace(good, started_at=-2.0), "times_consistent") == [
        "the run started at t=-2, its stored row was created at 0"]


def test_a_run_without_a_stored_row_that_finished_before_it_started_breaks_times_consistent(
        good: RunRecord) -> None:
    unstored = replace(good, stored_row=None)
    assert "times_consistent" not in broken(unstored)
    assert messages(replace(unstored, finished_at=-1.0), "times_consistent") == [
        "the run finished at t=-1, before it started at t=0"]


def test_sse_events_going_back_in_time_break_times_consistent(good: RunRecord) -> None:
    sent = good.sse_events
    assert [e.kind.value for e in sent[:2]] == ["metadata", "status"] and sent[1].t < 2.0
    later = replace(good, sse_events=(replace(sent[0], t=2.0), *sent[1:]))
    assert messages(later, "times_consistent") == [
        f"the SSE events go back in time: status (seq {sent[1].seq}) at t={sent[1].t:g} "
        f"after metadata (seq {sent[0].seq}) at t=2"]


def test_a_tool_invocation_that_finished_before_it_started_breaks_times_consistent(
        good: RunRecord) -> None:
    first, second = good.invocations[:2]
    assert first.finished_at is not None and first.started_at < first.finished_at
    backwards = replace(first, finished_at=first.started_at - 0.5)
    assert messages(replace(good, invocations=(backwards, *good.invocations[1:])),
                    "times_consistent") == [
        f"tool invocation {first.invocation_id} finished at t={first.started_at - 0.5:g} "
        f"before it started at t={first.started_at:g}"]
    both = (backwards, replace(second, finished_at=second.started_at - 1.0))
    assert messages(replace(good, invocations=(*both, *good.invocations[2:])),
                    "times_consistent")[0].endswith("(2 in all)")
    unfinished = replace(first, finished_at=None)
    assert "times_consistent" not in broken(replace(
        good, invocations=(unfinished, *good.invocations[1:])))


def test_a_run_ending_outside_its_time_breaks_times_consistent(good: RunRecord) -> None:
    assert good.terminations == (("SUCCESS", "completed", 3.0),)
    late = replace(good, terminations=(("SUCCESS", "completed", 7.5),))
    assert messages(late, "times_consistent") == [
        "the run ended SUCCESS at t=7.5, outside its time [0, 3]"]
    early = replace(good, started_at=1.0, terminations=(("SUCCESS", "completed", 0.25),))
    assert ("the run ended SUCCESS at t=0.25, outside its time [1, 3]"
            in messages(early, "times_consistent"))
    rounded = replace(good, terminations=(("SUCCESS", "completed", 3.0004),))
    assert "times_consistent" not in broken(rounded)


def test_a_deadline_before_the_run_started_breaks_times_consistent(good: RunRecord) -> None:
    assert messages(replace(good, deadline_at=-5.0), "times_consistent") == [
        "the run's deadline t=-5 is before it started at t=0"]
    unknown = replace(good, deadline_at=float("inf"))
    assert "times_consistent" not in broken(unknown)


def test_a_run_timed_out_before_its_deadline_breaks_times_consistent(good: RunRecord) -> None:
    timed_out = replace(good, run_state=RunState.TIMED_OUT, deadline_at=3.0,
                        terminations=(("TIMED_OUT", "after model:diagnosis", 3.0),))
    assert "times_consistent" not in broken(timed_out)  # found passed at its instant
    assert messages(replace(timed_out, deadline_at=4.5), "times_consistent") == [
        "the run timed out at t=3, before its deadline at t=4.5"]
    unknown = replace(timed_out, deadline_at=float("inf"))  # a rebuilt record's
    assert "times_consistent" not in broken(unknown)


def test_a_row_dated_by_the_wall_clock_is_held_only_to_itself(good: RunRecord) -> None:
    # the live store's row: Unix times around a run whose clock (duration, trace) is scaled
    live = stored(good, created_at=1_760_000_000.25, finished_at=1_760_000_000.40)
    assert "times_consistent" not in broken(live)
    assert messages(stored(live, finished_at=1_759_999_999.0), "times_consistent") == [
        "the stored finished_at 1759999999 is before its created_at 1760000000.25"]
    assert messages(retimed(live, {7: 1.0, 6: 2.5}), "times_consistent") == [
        "the trace goes back in time 1 time, first TOOL_INVOCATION (seq 7) at t=1 after "
        "AGENT_MODEL_STEP (seq 6) at t=2.5"]
    # a rebuilt record starts and finishes when its wall-dated row says, while its ending is
    # on the run's clock: not compared (and it keeps no deadline)
    rebuilt = replace(live, started_at=1_760_000_000.25, finished_at=1_760_000_000.40,
                      deadline_at=float("inf"))
    assert "times_consistent" not in broken(rebuilt)


def test_runs_arriving_at_fractional_instants_agree_to_the_float_and_are_held_to_it() -> None:
    from harness_lab.harness import Harness
    from harness_lab.store.memory import MemoryRunStore

    harness = Harness(scripted_components(SUCCESS_STEPS), store=MemoryRunStore())
    arrivals = [0.1, 0.7, 13.37, 99_999.3]
    for at in arrivals:
        harness.submit("why is checkout slow?", at=at)
    records = harness.run_all()
    assert [r.started_at for r in records] == arrivals
    assert all(r.stored_row is not None and r.stored_row["duration_ms"] > 0 for r in records)
    assert [messages(r, "times_consistent") for r in records] == [[], [], [], []]
    last = records[-1]
    assert last.stored_row is not None
    off = stored(last, duration_ms=last.stored_row["duration_ms"] + 2.0)
    assert broken(off) == {"times_consistent"}
