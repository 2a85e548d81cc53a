"""The harness end to end: every row of the outcome table (doc §10), on virtual time."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from harness_lab.config import HarnessConfig
from harness_lab.core.budget import BudgetLimits
from harness_lab.errors import ProcessCrash, ProviderError
from harness_lab.fakes import (
    CallbackModel,
    Evidence,
    NoEvidence,
    ScriptedSemanticGuard,
    ScriptedTool,
    call_tool,
    draft,
    progress,
    provider_error,
    report,
)
from harness_lab.harness import Harness
from harness_lab.invariants import check
from harness_lab.ports import AgentRequest, CallKind, ModelReply, TokenUsage
from harness_lab.states import (
    CollectionState,
    DiagnosisStopReason,
    FallbackType,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseState,
    StoredRunStatus,
    TraceEventType,
)
from tests.conftest import INV1, INV2, build, standard_tools

SUCCESS_STEPS = [
    call_tool("logs", {"service": "checkout"}),
    call_tool("metrics", {"service": "checkout"},
              progress=progress("GAINED", facts=[("timeouts in checkout logs", [INV1])])),
    draft("the db connection pool is exhausted",
          evidence=[(INV1, "timeouts in logs"), (INV2, "pool at 100%")],
          progress=progress("GAINED")),
]


def outcome(record: object) -> tuple[object, object, object, object]:
    r = record  # type: ignore[assignment]
    return (r.run_state, r.release_outcome, r.fallback_type, r.stored_status)  # type: ignore


def test_a_conclusion_that_passes_both_guards_is_released_as_a_report() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.SUCCESS, None, StoredRunStatus.SUCCESS)
    assert r.content is not None and r.content["conclusion"] == (
        "the db connection pool is exhausted")
    assert r.semantic_verdict is SemanticVerdict.SUPPORTED
    assert check(r) == []


def test_missing_context_with_zero_tools_is_a_missing_context_fallback() -> None:
    r = build([draft(missing_info=["which service is slow?"])]).run("it is slow")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.MISSING_REQUIRED_CONTEXT, StoredRunStatus.SUCCESS)
    assert r.tool_calls == 0
    assert r.content is not None and r.content["missingInfo"] == ["which service is slow?"]
    assert check(r) == []


def test_a_draft_with_verified_findings_but_no_conclusion_is_insufficient_evidence() -> None:
    r = build([
        call_tool("logs", {"service": "checkout"}),
        draft(findings=[("timeouts in checkout logs", [INV1])], progress=progress("GAINED")),
    ]).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert check(r) == []


def saturated_run() -> Any:
    """A run that gains one fact from logs, then gets no evidence from metrics three times."""
    tools = [ScriptedTool("logs", default=Evidence(({"line": "timeout"},))),
             ScriptedTool("metrics", default=NoEvidence())]
    return build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("metrics", {"q": 1}, progress=progress("GAINED", facts=[("timeouts", [INV1])])),
        call_tool("metrics", {"q": 2}, progress=progress()),
        call_tool("metrics", {"q": 3}, progress=progress()),
        report(progress()),
    ], tools=tools).run("why is checkout slow?")


def test_saturation_after_three_no_gain_results_releases_the_safe_progress() -> None:
    r = saturated_run()
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert r.collection_state is CollectionState.SATURATED
    assert r.stop_reason is DiagnosisStopReason.INFORMATION_SATURATED
    assert r.stop_required_delivered is True
    assert "COLLECTION_STOP" in r.trace_types()
    assert check(r) == []


def test_three_progress_protocol_violations_stop_collection_with_the_safe_progress() -> None:
    r = build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("metrics", {"a": 1}, progress=progress("GAINED", facts=[("timeouts", [INV1])])),
        call_tool("traces", {"a": 1}),
        call_tool("traces", {"a": 2}),
        call_tool("traces", {"a": 3}),
        report(progress()),
    ]).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert r.stop_reason is DiagnosisStopReason.PROGRESS_PROTOCOL_VIOLATED
    assert [x.reason.value for x in r.rejections] == ["SATURATED"]
    assert check(r) == []


def test_evidence_that_stays_invalid_after_one_repair_fails_validation() -> None:
    bad = draft("pool exhausted", evidence=[("run-000001-inv-9", "made up")])
    r = build([bad], repair=[bad]).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.EVIDENCE_VALIDATION_FAILED, StoredRunStatus.SUCCESS)
    assert r.trace_types().count("EVIDENCE_GUARD_RECHECK") == 1
    assert "SEMANTIC_GUARD_ATTEMPT" not in r.trace_types()
    assert check(r) == []


def test_a_successful_repair_goes_on_to_the_semantic_guard() -> None:
    r = build([
        call_tool("logs", {"service": "checkout"}),
        draft("pool exhausted", evidence=[("run-000001-inv-9", "wrong id")],
              progress=progress("GAINED")),
    ], repair=[draft("pool exhausted", evidence=[(INV1, "timeouts in logs")])]).run("slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.SUCCESS, None, StoredRunStatus.SUCCESS)
    assert r.evidence_repaired is True
    assert check(r) == []


def test_an_unsupported_semantic_verdict_is_a_semantic_unsupported_fallback() -> None:
    r = build(SUCCESS_STEPS, guard="UNSUPPORTED").run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.SEMANTIC_UNSUPPORTED, StoredRunStatus.SUCCESS)
    assert r.content is not None and "conclusion" not in r.content
    assert check(r) == []


def test_an_unavailable_semantic_guard_is_a_semantic_unavailable_fallback() -> None:
    r = build(SUCCESS_STEPS, guard=ProviderError("guard down", latency_s=1.0)).run("slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.SEMANTIC_UNAVAILABLE, StoredRunStatus.SUCCESS)
    assert r.semantic_verdict is SemanticVerdict.UNAVAILABLE
    assert check(r) == []


def with_spending_guard(verdict: str, tokens: int, **kw: Any) -> Any:
    """SUCCESS_STEPS under a 1,000-token budget, with a guard whose reply spends ``tokens``."""
    h = build(kw.pop("steps", SUCCESS_STEPS),
              config=HarnessConfig(budget=BudgetLimits(tokens=1000)), **kw)
    guard = ScriptedSemanticGuard(verdict, usage=TokenUsage(tokens, 0))
    h.parts = h.parts.with_(components=replace(h.parts.components, guard=guard))
    return h


def test_a_guard_that_spends_past_the_token_budget_exhausts_it_and_falls_back() -> None:
    r = with_spending_guard("SUPPORTED", 5000).run("why is checkout slow?")
    assert outcome(r) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert r.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert r.content is not None and "conclusion" not in r.content
    assert [e.type for e in r.trace][-4:] == [
        TraceEventType.SEMANTIC_GUARD_DECISION, TraceEventType.BUDGET_EXHAUSTED,
        TraceEventType.RELEASE_DECISION, TraceEventType.RUN_FINISHED]
    assert check(r) == []


def test_a_guard_spending_past_the_budget_without_verified_facts_fails_the_run() -> None:
    steps = [call_tool("logs", {"service": "checkout"}),
             draft("the pool is exhausted", evidence=[(INV1, "timeouts in logs")],
                   progress=progress("GAINED"))]
    r = with_spending_guard("SUPPORTED", 5000, steps=steps).run("why is checkout slow?")
    assert outcome(r) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FAILED, None,
                          StoredRunStatus.FAILED)
    assert check(r) == []


def test_a_guard_within_the_token_budget_releases_the_report() -> None:
    r = with_spending_guard("SUPPORTED", 900).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.SUCCESS, None,
                          StoredRunStatus.SUCCESS)


def test_stop_required_is_not_delivered_when_the_budget_refuses_the_model_call() -> None:
    steps = [call_tool("logs", {"service": "a"}),
             call_tool("metrics", {"m": "cpu"},
                       progress=progress("GAINED", facts=[("timeouts in the logs", [INV1])])),
             call_tool("metrics", {"m": "mem"}, progress=progress()),
             call_tool("metrics", {"m": "disk"}, progress=progress()),
             report(progress())]
    tools = standard_tools(metrics=ScriptedTool("metrics", default=NoEvidence()))
    config = HarnessConfig(budget=BudgetLimits(model_calls=4))
    harness = build(steps, tools=tools, config=config)
    r = harness.run("why is checkout slow?")
    assert outcome(r) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert r.collection_state is CollectionState.SATURATED
    assert r.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert r.stop_required_delivered is False
    assert check(r) == []


def test_a_client_leaving_as_the_content_is_sent_leaves_a_completed_success() -> None:
    def leave_at_content(session: Any, k: int, kind: Any) -> None:
        if kind.value == "content":
            session.disconnect()

    r = build(SUCCESS_STEPS, before_send=leave_at_content).run("why is checkout slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.SUCCESS, None,
                          StoredRunStatus.SUCCESS)
    assert r.stored_row is not None
    assert (r.termination_reason, r.stored_row["termination_reason"]) == ("completed",
                                                                          "completed")


def test_a_guard_whose_connection_times_out_is_unavailable_as_a_provider_error_is() -> None:
    r = build(SUCCESS_STEPS, guard=TimeoutError("guard read timed out")).run("slow?")
    assert outcome(r) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK,
                          FallbackType.SEMANTIC_UNAVAILABLE, StoredRunStatus.SUCCESS)
    assert r.error is None and check(r) == []


def test_a_bug_inside_a_tool_fails_the_run_and_leaves_no_record_projecting() -> None:
    def broken(request: object) -> object:
        raise KeyError("items")

    r = build(SUCCESS_STEPS, tools=[ScriptedTool("logs", default=broken)]).run("slow?")
    assert outcome(r) == (RunState.FAILED, ReleaseOutcome.FAILED, None, StoredRunStatus.FAILED)
    assert r.error == "KeyError: 'items'"
    assert [(i.status.value, i.error_code and i.error_code.value) for i in r.invocations] == [
        ("ERROR", "EXECUTION")]
    assert check(r) == []


def test_budget_exhaustion_with_safe_progress_keeps_budget_exhausted_and_falls_back() -> None:
    config = HarnessConfig(budget=BudgetLimits(tool_calls=1))
    r = build(SUCCESS_STEPS, config=config).run("why is checkout slow?")
    assert outcome(r) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FALLBACK,
                          FallbackType.INSUFFICIENT_EVIDENCE, StoredRunStatus.SUCCESS)
    assert r.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert r.collection_state is CollectionState.COLLECTING
    assert r.stored_row is not None and r.stored_row["termination_state"] == "BUDGET_EXHAUSTED"
    assert check(r) == []


def test_a_timeout_with_no_safe_content_is_timed_out_and_failed() -> None:
    tools = [ScriptedTool("logs", default=Evidence(({"line": "x"},), latency_s=10.0))]
    r = build(SUCCESS_STEPS, tools=tools, config=HarnessConfig(deadline_s=5.0)).run("slow?")
    assert outcome(r) == (RunState.TIMED_OUT, ReleaseOutcome.FAILED, None,
                          StoredRunStatus.FAILED)
    assert r.finished_at == 10.0
    assert r.discarded == (("tool", "logs", 10.0),)
    assert r.sse_kinds()[-2:] == ["failure", "done"]
    assert check(r) == []


def test_budget_exhaustion_without_safe_progress_fails() -> None:
    config = HarnessConfig(budget=BudgetLimits(model_calls=1))
    r = build(SUCCESS_STEPS, config=config).run("why is checkout slow?")
    assert outcome(r) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FAILED, None,
                          StoredRunStatus.FAILED)
    assert check(r) == []


def test_a_failing_diagnosis_model_is_an_unrecoverable_failure() -> None:
    r = build([provider_error("model down")]).run("why is checkout slow?")
    assert outcome(r) == (RunState.FAILED, ReleaseOutcome.FAILED, None, StoredRunStatus.FAILED)
    assert r.failure is not None and r.failure["code"] == "ModelFailure"
    assert check(r) == []


def test_a_client_disconnect_during_a_tool_call_cancels_without_a_public_done() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?", disconnect_at=1.0)
    assert outcome(r) == (RunState.CANCELLED, ReleaseOutcome.CANCELLED, None,
                          StoredRunStatus.CANCELLED)
    assert r.sse_state is SseState.DISCONNECTED
    assert "done" not in r.sse_kinds()
    assert r.discarded == (("tool", "logs", 2.0),)
    assert check(r) == []


def test_a_diagnosis_success_follows_the_success_timeline_of_the_document() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?")
    assert r.trace_types() == [
        "RUN_STARTED", "ROUTING_ATTEMPT", "ROUTING_DECISION",
        "AGENT_MODEL_STEP", "TOOL_INVOCATION", "TOOL_PROGRESS",
        "AGENT_MODEL_STEP", "TOOL_INVOCATION", "TOOL_PROGRESS",
        "AGENT_MODEL_STEP",
        "EVIDENCE_GUARD_INITIAL", "SEMANTIC_GUARD_ATTEMPT", "SEMANTIC_GUARD_DECISION",
        "RELEASE_DECISION", "RUN_FINISHED",
    ]
    assert r.trace[-2].detail["outcome"] == "SUCCESS"
    assert r.trace[-1].detail["outcome"] == "SUCCESS"


def test_an_insufficient_evidence_fallback_follows_the_fallback_timeline() -> None:
    r = saturated_run()
    types = r.trace_types()
    assert types[:3] == ["RUN_STARTED", "ROUTING_ATTEMPT", "ROUTING_DECISION"]
    assert types[-4:] == ["AGENT_MODEL_STEP", "EVIDENCE_GUARD_INITIAL", "RELEASE_DECISION",
                          "RUN_FINISHED"]
    assert "COLLECTION_STOP" in types
    assert r.trace[-1].detail["outcome"] == "FALLBACK"
    assert r.events_of(TraceEventType.EVIDENCE_GUARD_INITIAL)[0].detail["mode"] == "snapshot"


def test_a_published_success_becomes_the_next_turns_previous_turn() -> None:
    h = build(SUCCESS_STEPS)  # each run plays the script from the top
    first = h.run("why is checkout slow?", session_id="s-1")
    h.run("and now?", session_id="s-1")
    model = h.parts.components.model
    assert first.release_outcome is ReleaseOutcome.SUCCESS
    assert model.requests[0].run_id == "run-000002"  # type: ignore[attr-defined]
    previous = model.requests[0].previous_turn  # type: ignore[attr-defined]
    assert previous is not None and previous.run_id == "run-000001"
    assert previous.conclusion == "the db connection pool is exhausted"


def test_a_fallback_never_becomes_the_next_turns_previous_turn() -> None:
    h = build([draft(missing_info=["which service?"]), draft(missing_info=["still?"])])
    h.run("it is slow", session_id="s-1")
    h.run("checkout", session_id="s-1")
    model = h.parts.components.model
    assert model.requests[-1].previous_turn is None  # type: ignore[attr-defined]
    assert len(h.parts.components.router.requests[-1].history) == 1  # type: ignore[attr-defined]


def test_a_crash_between_running_and_completion_leaves_one_running_row() -> None:
    h = build([ProcessCrash("host died")])
    try:
        h.run("why is checkout slow?")
    except ProcessCrash:
        pass
    else:
        raise AssertionError("the crash must propagate")
    row = h.store.get_run("run-000001")
    assert row is not None and row["status"] == "RUNNING"
    assert row["release_outcome"] is None
    assert [e["type"] for e in h.store.trace("run-000001")] == ["RUN_STARTED"]


def test_a_provider_call_that_outlives_the_deadline_runs_to_its_end_and_is_discarded() -> None:
    slow = [call_tool("logs", {"service": "checkout"}, latency_s=90.0)] + SUCCESS_STEPS[1:]
    r = build(slow, config=HarnessConfig(deadline_s=60.0)).run("why is checkout slow?")
    assert r.run_state is RunState.TIMED_OUT
    assert r.finished_at == 90.0
    assert r.discarded == (("model", "diagnosis", 90.0),)


def test_runs_sharing_one_environment_queue_for_a_limited_provider() -> None:
    def steps_for(run_id: str) -> list[ModelReply]:
        inv = f"{run_id}-inv-"
        return [call_tool("logs", {"service": "checkout"}),
                call_tool("metrics", {"service": "checkout"}, progress=progress("GAINED")),
                draft("pool exhausted", evidence=[(inv + "1", "timeouts")],
                      progress=progress("GAINED"))]

    def per_run(request: AgentRequest) -> ModelReply:
        return steps_for(request.run_id)[request.step - 1]

    h = build([], tools=[
        ScriptedTool("logs", default=Evidence(({"line": "t"},), latency_s=2.0)),
        ScriptedTool("metrics", default=Evidence(({"p": 1},), latency_s=1.0)),
    ], capacity={CallKind.TOOL: 1})
    h.parts = h.parts.with_(components=replace(h.parts.components,
                                                 model=CallbackModel(per_run)))
    a = h.submit("first", session_id="s-a")
    b = h.submit("second", session_id="s-b")
    h.run_all()
    assert a.record.finished_at == 5.0
    assert b.record.finished_at == 6.0
    assert (a.record.release_outcome, b.record.release_outcome) == (ReleaseOutcome.SUCCESS,
                                                                    ReleaseOutcome.SUCCESS)


def _chat_parts(h: Harness, text: str, *, latency_s: float, deadline_s: float = 60.0) -> Any:
    """The harness's parts with a SYSTEM_CHAT router and a responder answering ``text``."""
    from harness_lab.fakes import ScriptedResponder, ScriptedRouter

    components = replace(h.parts.components, router=ScriptedRouter("SYSTEM_CHAT"),
                         responder=ScriptedResponder(text, latency_s=latency_s))
    return h.parts.with_(components=components, config=HarnessConfig(deadline_s=deadline_s))


def test_runs_in_flight_together_each_call_and_are_configured_by_their_own_parts() -> None:
    h = build([])
    slow, quick = _chat_parts(h, "slow", latency_s=3.0, deadline_s=2.0), _chat_parts(
        h, "quick", latency_s=1.0)
    a = h.submit("first?", session_id="s-a", parts=slow)
    b = h.submit("second?", session_id="s-b", at=0.5, parts=quick)
    h.run_all()
    assert a.record.run_state is RunState.TIMED_OUT  # its own 2 s deadline
    assert b.record.content == {"contentType": "system_answer", "text": "quick"}
    assert (a.record.started_at, a.record.finished_at) == (0.0, 3.0)
    assert (b.record.started_at, b.record.finished_at) == (0.5, 1.5)  # while a was in flight
    assert [r.query for r in slow.components.responder.requests] == ["first?"]
    assert [r.query for r in quick.components.responder.requests] == ["second?"]


def test_a_run_keeps_the_parts_it_was_submitted_with_when_the_harness_gets_others() -> None:
    h = build([])
    first = _chat_parts(h, "first parts", latency_s=1.0)
    h.parts = first
    later = h.submit("hi", at=5.0)
    h.parts = _chat_parts(h, "second parts", latency_s=1.0)
    h.run_all()
    assert later.record.content == {"contentType": "system_answer", "text": "first parts"}
    assert later.parts is first  # nothing intercepts its calls: bound as given


def test_a_five_tool_diagnosis_takes_virtual_seconds() -> None:
    five = [call_tool("logs", {"n": 1})] + [
        call_tool("logs", {"n": i}, progress=progress("GAINED", facts=[(f"f{i}", [INV1])]))
        for i in range(2, 6)
    ] + [draft("pool exhausted", evidence=[(INV1, "timeouts")], progress=progress("GAINED"))]
    r = build(five).run("why is checkout slow?")
    assert r.tool_calls == 5
    assert r.duration_s == 10.0
    assert r.release_outcome is ReleaseOutcome.SUCCESS


def test_a_retry_of_a_failed_tool_call_is_not_a_duplicate() -> None:
    from harness_lab.fakes import ToolFailure

    tools = [ScriptedTool("logs", [ToolFailure("backend down"), Evidence(({"line": "t"},))])]
    r = build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("logs", {"service": "checkout"}, progress=progress()),
        draft(findings=[("timeouts", ["run-000001-inv-2"])], progress=progress("GAINED")),
    ], tools=tools).run("why is checkout slow?")
    assert [i.status.value for i in r.invocations] == ["ERROR", "READY"]
    assert [g.value for g in r.gains] == ["GAINED"]
    assert r.invocations[1].information_gain is not None
    assert r.invocations[1].information_gain.value == "GAINED"


def test_an_exact_repeat_of_a_ready_call_is_no_gain_by_the_harness() -> None:
    r = build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("logs", {"service": "checkout"}, progress=progress("GAINED")),
        draft(findings=[("timeouts", [INV1])], progress=progress()),
    ]).run("why is checkout slow?")
    assert [g.value for g in r.gains] == ["GAINED", "NO_GAIN"]


def test_a_submit_hook_composes_a_send_hook_that_sees_every_event_of_the_run() -> None:
    harness = build(SUCCESS_STEPS)
    sent: list[str] = []
    calls: list[int] = []

    def hook(h: Any, parts: Any) -> Any:
        calls.append(len(h.handles))  # called before the run's handle exists
        return parts.with_(before_send=lambda session, k, kind: sent.append(str(kind)))

    harness.submit_hooks.append(hook)
    r = harness.run("why is checkout slow?")
    assert calls == [0]
    assert sent == [str(e.kind) for e in r.sse_events]
    assert len(sent) >= 2


def test_a_subclass_of_the_harness_overrides_what_its_runs_use() -> None:
    base = build(SUCCESS_STEPS)

    class NamedSessions(Harness):
        def new_session_id(self) -> str:
            return "session-of-the-subclass"

    harness = NamedSessions(base.parts.components, base.config, store=base.store)
    r = harness.run("why is checkout slow?")
    assert r.session_id == "session-of-the-subclass"
    assert r.release_outcome is ReleaseOutcome.SUCCESS


# -- arguments that cannot be meant ---------------------------------------------------------------


@pytest.mark.parametrize("when", [{"disconnect_at": math.nan}, {"cancel_at": math.nan},
                                  {"at": math.inf}, {"at": -1.0}, {"cancel_at": math.inf}])
def test_a_time_that_is_not_a_finite_virtual_time_is_refused_where_it_is_given(
        when: dict[str, Any]) -> None:
    harness = build(SUCCESS_STEPS)
    [(name, value)] = when.items()
    with pytest.raises(ValueError, match=f"Harness: {name} must be a"):
        harness.run("why?", **when)
    assert harness.handles == []  # nothing was scheduled


def test_a_time_that_is_not_a_number_is_a_type_error() -> None:
    harness = build(SUCCESS_STEPS)
    with pytest.raises(TypeError):
        harness.run("why?", disconnect_at="soon")
    assert harness.handles == []


def test_a_time_in_seconds_from_now_is_still_accepted() -> None:
    record = build(SUCCESS_STEPS).run("why?", at=2.5, cancel_at=1e9)
    assert record.run_state is RunState.SUCCESS


class _Boundaries:
    """A probe that keeps the run id of every boundary it sees."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def at_boundary(self, ctx: Any, boundary: Any) -> None:
        self.runs.append(ctx.run_id)


def test_prepare_gives_the_next_run_new_parts_and_clears_those_left_out() -> None:
    from harness_lab.application.components import Components
    from harness_lab.fakes import (
        ScriptedModel,
        ScriptedRepair,
        ScriptedResponder,
        ScriptedRetriever,
        ScriptedRouter,
    )
    from harness_lab.tools.ledger import InvocationLedger

    probe = _Boundaries()
    h = build(SUCCESS_STEPS, probe=probe, before_send=lambda s, k, kind: None)
    first = h.run("why is checkout slow?")
    assert probe.runs and set(probe.runs) == {first.run_id}
    responder = ScriptedResponder("Hello again!")
    h.prepare(Components(router=ScriptedRouter("SYSTEM_CHAT"), model=ScriptedModel([]),
                         guard=ScriptedSemanticGuard("SUPPORTED"), repair=ScriptedRepair([]),
                         responder=responder, retriever=ScriptedRetriever(),
                         tools=standard_tools()),
              HarnessConfig(deadline_s=5.0), ledger=InvocationLedger())
    second = h.run("hi")
    assert second.content == {"contentType": "system_answer", "text": "Hello again!"}
    assert second.deadline_at == second.started_at + 5.0
    assert set(probe.runs) == {first.run_id}  # the probe was cleared
    assert h.parts.before_send is None and h.config.deadline_s == 5.0
    assert len(responder.requests) == 1
