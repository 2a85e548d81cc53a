"""The invariant checker: a clean run passes every check, and each tampered record breaks one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from harness_lab.invariants import check, invariant_names
from harness_lab.record import RunRecord
from harness_lab.states import (
    EvidenceStatus,
    FallbackType,
    IntentType,
    InvocationStatus,
    ReleaseOutcome,
    RunState,
    SseEventKind,
    SseState,
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


# --- another value breaks a rule whichever way it sorts, a harness's own word included -----------

def finished_saying(run_state: str) -> Callable[[RunRecord], RunRecord]:
    return lambda good: with_detail(good, TT.RUN_FINISHED, run_state=run_state)


def lost_to(state: str) -> Callable[[RunRecord], RunRecord]:
    return lambda good: appended(good, TT.TERMINATION_REJECTED, TraceEventStatus.REJECTED,
                                 state="CANCELLED", reason="CLIENT_DISCONNECTED", at=1.0,
                                 lost_to=state, lost_to_reason="x", lost_to_at=1.0)


def sent(kind: SseEventKind, **data: Any) -> Callable[[RunRecord], RunRecord]:
    return lambda good: replace(good, sse_events=tuple(
        replace(e, data={**e.data, **data}) if e.kind is kind else e for e in good.sse_events))


def row_with(**columns: Any) -> Callable[[RunRecord], RunRecord]:
    return lambda good: stored(good, **columns)


def fallback_published(fallback_type: str) -> Callable[[RunRecord], RunRecord]:
    return lambda good: replace(
        good, release_outcome=ReleaseOutcome.FALLBACK,
        fallback_type=FallbackType.INSUFFICIENT_EVIDENCE,
        content={"contentType": "safe_fallback", "fallbackType": fallback_type},
        stored_row={**(good.stored_row or {}), "release_outcome": "FALLBACK"})


OTHER_VALUES = [  # (id, change to the good run, invariant, the message)
    ("RUN_FINISHED state before", finished_saying("FAILED"), "single_termination",
     "RUN_FINISHED says FAILED, the run is SUCCESS"),
    ("RUN_FINISHED state after", finished_saying("TIMED_OUT"), "single_termination",
     "RUN_FINISHED says TIMED_OUT, the run is SUCCESS"),
    ("lost to a state before", lost_to("CANCELLED"), "single_termination",
     "lost to CANCELLED, the run is SUCCESS"),
    ("lost to a state after", lost_to("TIMED_OUT"), "single_termination",
     "lost to TIMED_OUT, the run is SUCCESS"),
    ("result of a run id before", sent(SseEventKind.CONTENT, runId="a-run"), "sse_protocol",
     "a result's identity does not match the metadata"),
    ("result of a run id after", sent(SseEventKind.CONTENT, runId="someone-else"),
     "sse_protocol", "a result's identity does not match the metadata"),
    ("done outcome before", sent(SseEventKind.DONE, outcome="FALLBACK"), "sse_protocol",
     "done says FALLBACK, the release outcome is SUCCESS"),
    ("done outcome after", sent(SseEventKind.DONE, outcome="TIMED_OUT"), "sse_protocol",
     "done says TIMED_OUT, the release outcome is SUCCESS"),
    ("done outcome of the harness's own before CANCELLED",
     sent(SseEventKind.DONE, outcome="ABORTED"), "sse_protocol",
     "done says ABORTED, the release outcome is SUCCESS"),
    ("stored status before", row_with(status="FAILED"), "stored_axes_distinct",
     "stored status FAILED, §12.2 maps SUCCESS to SUCCESS"),
    ("stored status after", row_with(status="TIMED_OUT"), "stored_axes_distinct",
     "stored status TIMED_OUT, §12.2 maps SUCCESS to SUCCESS"),
    ("stored release outcome before", row_with(release_outcome="FALLBACK"),
     "stored_axes_distinct", "stored release_outcome differs from the run's"),
    ("stored release outcome after", row_with(release_outcome="TIMED_OUT"),
     "stored_axes_distinct", "stored release_outcome differs from the run's"),
    ("stored termination state before", row_with(termination_state="FAILED"),
     "stored_axes_distinct", "stored termination_state differs from the RunState"),
    ("stored termination state after", row_with(termination_state="TIMED_OUT"),
     "stored_axes_distinct", "stored termination_state differs from the RunState"),
    ("published fallback type before", fallback_published("EVIDENCE_VALIDATION_FAILED"),
     "fallback_is_not_failure", "the published fallback type differs from the release decision"),
    ("published fallback type after", fallback_published("SEMANTIC_UNSUPPORTED"),
     "fallback_is_not_failure", "the published fallback type differs from the release decision"),
    ("fewer tool calls finished", lambda good: with_detail(good, TT.RUN_FINISHED, tool_calls=1),
     "tool_calls_reconciled", "RUN_FINISHED counts 1 tool calls, 2 were started"),
    ("fewer tool calls stored", row_with(tool_calls=1), "tool_calls_reconciled",
     "the stored row counts 1 tool calls, 2 were started"),
]


@pytest.mark.parametrize(("change", "invariant", "message"),
                         [pytest.param(*case[1:], id=case[0]) for case in OTHER_VALUES])
def test_a_value_other_than_the_runs_breaks_the_rule_whichever_way_it_sorts(
        good: RunRecord, change: Callable[[RunRecord], RunRecord], invariant: str,
        message: str) -> None:
    found = messages(change(good), invariant)
    assert [m for m in found if message in m] != [], found
    assert not [m for m in found if "CANCELLED was sent" in m]


def test_a_report_citing_a_no_evidence_invocation_breaks_invariant_five(good: RunRecord) -> None:
    first = good.invocations[0]
    blank = replace(good, invocations=(replace(first, evidence_status=EvidenceStatus.NO_EVIDENCE),
                                       *good.invocations[1:]))
    assert messages(blank, "no_evidence_not_promoted") == [
        f"the conclusion rests on NO_EVIDENCE invocation {first.invocation_id}"]
    for other in ("answer", "safe_fallback"):  # sorting before the report's type, and after
        content = {**(blank.content or {}), "contentType": other}
        assert messages(replace(blank, content=content), "no_evidence_not_promoted") == []


def test_only_a_conclusion_check_and_a_supported_verdict_count_for_invariant_eight(
        good: RunRecord) -> None:
    # a harness's own words, sorting before "conclusion" and "SUPPORTED", count for neither
    unchecked = with_detail(good, TT.EVIDENCE_GUARD_INITIAL, mode="claims")
    assert "repair or semantic guard ran without a conclusion check" in messages(
        unchecked, "guard_chain_needs_conclusion")
    partly = with_detail(good, TT.SEMANTIC_GUARD_DECISION, verdict="PARTIAL")
    assert messages(partly, "guard_chain_needs_conclusion") == [
        "a diagnosis report was published without a SUPPORTED semantic verdict"]
    answer = replace(partly, content={**(good.content or {}), "contentType": "answer"})
    assert messages(answer, "guard_chain_needs_conclusion") == []


def test_a_trace_and_sse_events_going_back_twice_name_the_first_time_once(
        good: RunRecord) -> None:
    twice = retimed(good, {6: 2.5, 7: 1.0, 8: 0.5})
    assert messages(twice, "times_consistent") == [
        "the trace goes back in time 2 times, first TOOL_INVOCATION (seq 7) at t=1 after "
        "AGENT_MODEL_STEP (seq 6) at t=2.5"]
    first, second, *rest = good.sse_events
    assert len(rest) >= 2
    events = (first, second, replace(rest[0], t=-1.0), replace(rest[1], t=-2.0), *rest[2:])
    found = messages(replace(good, sse_events=events), "times_consistent")
    assert [m for m in found if m.startswith("the SSE events go back in time")] == [
        f"the SSE events go back in time: {rest[0].kind.value} (seq {rest[0].seq}) at t=-1 "
        f"after {second.kind.value} (seq {second.seq}) at t={second.t:g}"]


def test_times_agree_to_within_one_millisecond_and_no_further(good: RunRecord) -> None:
    assert good.started_at == 0.0 and good.stored_row is not None
    assert good.stored_row["created_at"] == 0.0
    for within in (0.001, 0.0009995):
        assert "times_consistent" not in broken(replace(good, started_at=within)), within
    assert messages(replace(good, started_at=0.0010005), "times_consistent") == [
        "the run started at t=0.0010005, its stored row was created at 0"]
    assert "times_consistent" not in broken(replace(good, finished_at=3.001))
    assert "times_consistent" not in broken(stored(good, duration_ms=3001.0))
    first = good.invocations[0]
    early = replace(first, finished_at=first.started_at - 0.0005)
    assert "times_consistent" not in broken(replace(good, invocations=(early,
                                                                       *good.invocations[1:])))


def test_a_row_created_at_the_wall_clocks_first_second_is_dated_by_the_wall_clock(
        good: RunRecord) -> None:
    from harness_lab.store.base import WALL_CLOCK_AFTER

    first = stored(good, created_at=WALL_CLOCK_AFTER, finished_at=WALL_CLOCK_AFTER + 0.25,
                   duration_ms=3000.0)
    assert "times_consistent" not in broken(first)
    rebuilt = replace(first, started_at=WALL_CLOCK_AFTER, finished_at=WALL_CLOCK_AFTER + 0.25,
                      deadline_at=float("inf"))  # its ending on the run's clock: not compared
    assert "times_consistent" not in broken(rebuilt)
    # its trace, on the run's own clock, may start before that clock's 0: not compared either
    assert "times_consistent" not in broken(retimed(first, {0: -1.0}))


def test_a_stored_duration_of_zero_or_just_below_is_held_to_the_stored_times(
        good: RunRecord) -> None:
    assert messages(stored(good, duration_ms=0.0), "times_consistent") == [
        "the stored duration_ms 0 is not finished_at - created_at, 3000 ms"]
    assert messages(stored(good, duration_ms=-0.5), "times_consistent") == [
        "the stored duration_ms -0.5 is negative"]


def test_a_run_of_no_length_without_a_row_still_ends_within_its_time(good: RunRecord) -> None:
    instant = replace(good, stored_row=None, started_at=3.0, finished_at=3.0,
                      terminations=(("SUCCESS", "completed", 7.5),))
    assert messages(instant, "times_consistent") == [
        "the run ended SUCCESS at t=7.5, outside its time [3, 3]"]
    assert "times_consistent" not in broken(replace(instant, terminations=(
        ("SUCCESS", "completed", 3.0),)))


def test_a_deadline_before_a_later_start_breaks_times_consistent_past_the_tolerance(
        good: RunRecord) -> None:
    later = replace(good, stored_row=None, started_at=2.0, finished_at=3.0)
    assert messages(replace(later, deadline_at=1.0), "times_consistent") == [
        "the run's deadline t=1 is before it started at t=2"]
    assert "times_consistent" not in broken(replace(later, deadline_at=1.9995))


def test_a_published_result_stored_for_a_knowledge_answer_breaks_invariant_ten(
        good: RunRecord) -> None:
    assert good.stored_row is not None and good.stored_row["published_result"] is not None
    knowledge = replace(good, intent=IntentType.KNOWLEDGE_QUERY)
    assert messages(knowledge, "stored_axes_distinct") == [
        "published_result stored for a run that is not DIAGNOSIS + SUCCESS"]


def before_run_finished(record: RunRecord, type_: TraceEventType,
                        status: TraceEventStatus) -> RunRecord:
    """``record`` with one more event of ``type_`` just before its RUN_FINISHED."""
    *head, last = record.trace
    event = TraceEvent(record.run_id, last.seq, last.t, type_, last.phase, status, {})
    return replace(record, trace=(*head, event, replace(last, seq=last.seq + 1)))


def test_only_started_tool_invocations_count_as_tool_calls(good: RunRecord) -> None:
    for type_, status in ((TT.TOOL_INVOCATION, TraceEventStatus.FAILED),
                          (TT.TOOL_INVOCATION, TraceEventStatus.OK),
                          (TT.TOOL_PROGRESS, TraceEventStatus.STARTED)):
        more = before_run_finished(good, type_, status)
        assert "tool_calls_reconciled" not in broken(more), (type_, status)


def test_a_disconnected_run_that_sent_content_but_no_done_keeps_late_content_refused(
        good: RunRecord) -> None:
    undone = tuple(e for e in good.sse_events if e.kind is not SseEventKind.DONE)
    left = replace(good, sse_state=SseState.DISCONNECTED, sse_events=undone)
    assert messages(left, "late_content_refused") == []
    assert messages(replace(left, sse_events=good.sse_events), "late_content_refused") == [
        "done was sent on a connection that ended DISCONNECTED"]
    opened = replace(good, sse_state=SseState.NEW)  # sorting before DISCONNECTED
    assert messages(opened, "late_content_refused") == []


def test_two_terminal_transitions_are_named_in_their_order(good: RunRecord) -> None:
    twice = replace(good, terminations=(*good.terminations, ("CANCELLED", "user", 3.0)))
    assert messages(twice, "single_termination") == [
        "2 terminal transitions (SUCCESS -> CANCELLED): first terminal must win"]


def sse_kinds(record: RunRecord, *kinds: SseEventKind) -> RunRecord:
    """``record`` sending events of these kinds, in this order (their payloads its own)."""
    first = {e.kind: e for e in record.sse_events}
    failure = replace(first[SseEventKind.CONTENT], kind=SseEventKind.FAILURE)
    made = {**first, SseEventKind.FAILURE: failure}
    return replace(record, sse_events=tuple(replace(made[k], seq=n, t=float(n))
                                            for n, k in enumerate(kinds)))


SK = SseEventKind
OUT_OF_ORDER = [(SK.METADATA, SK.CONTENT, SK.STATUS), (SK.METADATA, SK.FAILURE, SK.STATUS),
                (SK.METADATA, SK.DONE, SK.CONTENT), (SK.METADATA, SK.DONE, SK.FAILURE),
                (SK.METADATA, SK.STATUS, SK.METADATA), (SK.METADATA, SK.METADATA),
                (SK.STATUS, SK.METADATA)]


@pytest.mark.parametrize("kinds", OUT_OF_ORDER, ids=lambda ks: "-".join(k.value for k in ks))
def test_sse_events_out_of_the_public_order_break_the_sse_protocol(
        good: RunRecord, kinds: tuple[SseEventKind, ...]) -> None:
    assert "events out of the order metadata -> status* -> content|failure -> done" in messages(
        sse_kinds(good, *kinds), "sse_protocol")


def test_sse_events_in_the_public_order_keep_the_sse_protocol(good: RunRecord) -> None:
    for kinds in ((SK.METADATA, SK.STATUS, SK.STATUS, SK.CONTENT, SK.DONE),
                  (SK.METADATA, SK.FAILURE)):
        assert messages(sse_kinds(good, *kinds), "sse_protocol") == [], kinds
    assert messages(sse_kinds(good, SK.STATUS, SK.CONTENT, SK.DONE), "sse_protocol") == [
        "the first event is status, not metadata"]


def test_a_cancelled_run_that_sent_done_breaks_the_sse_protocol(good: RunRecord) -> None:
    cancelled = replace(good, release_outcome=ReleaseOutcome.CANCELLED)
    assert "a cancelled run sent done" in messages(cancelled, "sse_protocol")


def after_collection_stop(record: RunRecord, type_: TraceEventType, status: TraceEventStatus,
                          **detail: Any) -> RunRecord:
    stopped = appended(record, TT.COLLECTION_STOP, TraceEventStatus.OK)
    return appended(stopped, type_, status, **detail)


def test_only_an_evidence_tool_started_after_collection_stop_breaks_invariant_six(
        good: RunRecord) -> None:
    unsaid = after_collection_stop(good, TT.TOOL_INVOCATION, TraceEventStatus.STARTED,
                                   tool="logs")  # a tool is an evidence tool unless it says
    assert messages(unsaid, "no_evidence_tool_after_saturation") == [
        "evidence tool logs ran after COLLECTION_STOP"]
    for type_, status in ((TT.TOOL_INVOCATION, TraceEventStatus.FAILED),
                          (TT.AGENT_MODEL_STEP, TraceEventStatus.STARTED),
                          (TT.TOOL_PROGRESS, TraceEventStatus.STARTED)):
        other = after_collection_stop(good, type_, status, tool="logs")
        assert messages(other, "no_evidence_tool_after_saturation") == [], (type_, status)


def test_a_release_decision_that_did_not_pass_decides_no_content(good: RunRecord) -> None:
    for status in (TraceEventStatus.FAILED, TraceEventStatus.REJECTED):
        undecided = replace(good, trace=tuple(
            replace(e, status=status) if e.type is TT.RELEASE_DECISION else e
            for e in good.trace))
        assert messages(undecided, "release_decides_content") == [
            "diagnosis content was published without a RELEASE_DECISION"], status


def test_a_fallback_publishing_a_conclusion_or_nothing_breaks_invariant_nine(
        good: RunRecord) -> None:
    fallback = replace(good, release_outcome=ReleaseOutcome.FALLBACK,
                       fallback_type=FallbackType.INSUFFICIENT_EVIDENCE,
                       content={"contentType": "safe_fallback",
                                "fallbackType": "INSUFFICIENT_EVIDENCE", "conclusion": "x"})
    assert messages(fallback, "fallback_is_not_failure") == ["a fallback published a conclusion"]
    assert messages(replace(fallback, content=None), "fallback_is_not_failure") == [
        "FALLBACK without a FallbackType and its safe content"]


def test_a_finding_citing_an_invocation_in_error_breaks_cited_ready_only(
        good: RunRecord) -> None:
    cited = good.invocations[0]
    failed = replace(good, invocations=(replace(cited, status=InvocationStatus.ERROR),
                                        *good.invocations[1:]),
                     content={"contentType": "diagnosis_report", "evidence": [],
                              "findings": [{"citations": [cited.invocation_id]}]})
    assert messages(failed, "cited_ready_only") == [
        f"published content cites {cited.invocation_id}, which is not a READY invocation"]


def test_of_several_contradictions_the_first_is_named(good: RunRecord) -> None:
    first, second = good.invocations[:2]
    both = (replace(first, finished_at=first.started_at - 0.5),
            replace(second, finished_at=second.started_at - 1.0))
    assert messages(replace(good, invocations=(*both, *good.invocations[2:])),
                    "times_consistent") == [
        f"tool invocation {first.invocation_id} finished at t={first.started_at - 0.5:g} "
        f"before it started at t={first.started_at:g} (2 in all)"]
    twice = replace(good, stored_row=None, terminations=(("SUCCESS", "completed", 7.5),
                                                         ("CANCELLED", "user", 9.0)))
    assert "the run ended SUCCESS at t=7.5, outside its time [0, 3]" in messages(
        twice, "times_consistent")
    early = replace(good, run_state=RunState.TIMED_OUT, deadline_at=4.5,
                    terminations=(("TIMED_OUT", "deadline", 2.0), ("TIMED_OUT", "deadline", 3.0)))
    assert "the run timed out at t=2, before its deadline at t=4.5" in messages(
        early, "times_consistent")


def test_a_ready_invocation_without_its_evidence_status_breaks_invariant_four(
        good: RunRecord) -> None:
    first = good.invocations[0]
    assert first.status is InvocationStatus.READY
    unjudged = replace(good, invocations=(replace(first, evidence_status=None),
                                          *good.invocations[1:]))
    assert messages(unjudged, "ready_has_evidence_status") == [
        f"{first.invocation_id} is READY with evidence status None"]


def test_two_trace_events_outside_the_stored_run_are_counted_as_two(good: RunRecord) -> None:
    late = retimed(good, {13: 9.0, 14: 9.0})
    assert messages(late, "times_consistent") == [
        f"2 trace events outside the stored run's time [0, 3], first {good.trace[13].type.value} "
        "(seq 13) at t=9"]


def test_a_mode_or_verdict_on_another_trace_event_counts_for_no_guard(good: RunRecord) -> None:
    # the words of a harness that details other events so, either side of the guards' types
    for type_ in (TT.AGENT_MODEL_STEP, TT.TOOL_INVOCATION):
        tagged = replace(good, trace=tuple(
            replace(e, type=type_, detail={**e.detail, "verdict": "SUPPORTED"})
            if e.type is TT.SEMANTIC_GUARD_DECISION else
            replace(e, type=type_, detail={**e.detail, "mode": "conclusion"})
            if e.type is TT.EVIDENCE_GUARD_INITIAL else e for e in good.trace))
        assert messages(tagged, "guard_chain_needs_conclusion") == [
            "repair or semantic guard ran without a conclusion check",
            "a diagnosis report was published without a SUPPORTED semantic verdict"], type_
