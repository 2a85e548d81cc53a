"""The chat application: the order of doc §2, the three paths of §5, cancels and failures."""

from __future__ import annotations

from harness_lab.config import HarnessConfig, Policy, UserCancelNotice
from harness_lab.errors import ProviderError
from harness_lab.fakes import call_tool, invalid_json, progress, schema_invalid_draft
from harness_lab.harness import Harness
from harness_lab.invariants import check
from harness_lab.ports import GuardReply
from harness_lab.states import (
    ChatApplicationStatus,
    ReleaseOutcome,
    RunState,
    SseState,
    StoredRunStatus,
)
from tests.conftest import INV1, build, scripted_components, standard_tools
from tests.test_harness import SUCCESS_STEPS


def chat_harness(router: object, responder: object = "Hello!",
                 retriever: object = ("runbook: restart the pool",)) -> Harness:
    return Harness(scripted_components(router=router, responder=responder,
                                       retriever=retriever))


def test_a_system_chat_turn_is_one_controlled_answer() -> None:
    r = chat_harness("SYSTEM_CHAT").run("hi there")
    assert (r.run_state, r.release_outcome) == (RunState.SUCCESS, ReleaseOutcome.SUCCESS)
    assert r.statuses == (ChatApplicationStatus.ROUTING, ChatApplicationStatus.SYSTEM_RESPONDING)
    assert r.content == {"contentType": "system_answer", "text": "Hello!"}
    assert r.stored_row is not None and r.stored_row["published_result"] is None
    assert check(r) == []


def test_a_knowledge_query_is_one_retrieval_and_one_answer() -> None:
    r = chat_harness("KNOWLEDGE_QUERY", responder="Restart the pool.").run("how to fix pools?")
    assert r.statuses == (ChatApplicationStatus.ROUTING, ChatApplicationStatus.KNOWLEDGE_SEARCHING,
                          ChatApplicationStatus.KNOWLEDGE_ANSWERING)
    assert r.trace_types()[3:5] == ["KNOWLEDGE_RETRIEVAL", "KNOWLEDGE_ANSWER"]
    assert r.content == {"contentType": "knowledge_answer", "text": "Restart the pool.",
                         "sources": 1}
    assert check(r) == []


def test_a_diagnosis_passes_routing_diagnosis_and_safety_statuses() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?")
    assert r.statuses == (ChatApplicationStatus.ROUTING, ChatApplicationStatus.DIAGNOSIS_RUNNING,
                          ChatApplicationStatus.SAFETY_VALIDATING)
    assert r.sse_kinds() == ["metadata", "status", "status", "status", "content", "done"]


def test_metadata_carries_the_exact_session_and_run_id() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?", session_id="s-42")
    assert dict(r.sse_events[0].data) == {"sessionId": "s-42", "runId": "run-000001"}
    assert r.sse_events[4].data["runId"] == "run-000001"


def test_running_is_persisted_and_traced_before_routing() -> None:
    seen: list[object] = []
    h = build(SUCCESS_STEPS)
    router = h.parts.components.router
    original = router.route

    def spy(request: object) -> object:
        seen.append(h.store.get_run("run-000001"))
        return original(request)  # type: ignore[arg-type]

    router.route = spy  # type: ignore[method-assign]
    h.run("why is checkout slow?")
    row = seen[0]
    assert isinstance(row, dict) and row["status"] == "RUNNING"
    assert [e["type"] for e in h.store.trace("run-000001")][:2] == ["RUN_STARTED",
                                                                    "ROUTING_ATTEMPT"]


def test_an_unavailable_router_fails_the_run() -> None:
    r = chat_harness(ProviderError("router down")).run("hello")
    assert (r.run_state, r.release_outcome, r.stored_status) == (
        RunState.FAILED, ReleaseOutcome.FAILED, StoredRunStatus.FAILED)
    assert r.failure is not None and r.failure["code"] == "RouterUnavailable"
    assert r.sse_kinds() == ["metadata", "status", "failure", "done"]
    assert check(r) == []


def test_a_failing_answer_on_the_system_chat_path_fails_the_run() -> None:
    r = chat_harness("SYSTEM_CHAT", responder=ProviderError("model down")).run("hi")
    assert (r.run_state, r.release_outcome) == (RunState.FAILED, ReleaseOutcome.FAILED)


def test_a_user_cancel_sends_a_cancelled_failure_and_closes_without_done() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?", cancel_at=1.0)
    assert (r.run_state, r.release_outcome, r.stored_status) == (
        RunState.CANCELLED, ReleaseOutcome.CANCELLED, StoredRunStatus.CANCELLED)
    assert r.sse_kinds()[-1] == "failure"
    assert r.sse_events[-1].data["code"] == "CANCELLED"
    assert r.sse_state is SseState.TERMINAL
    assert r.termination_reason == "USER_REQUESTED"
    assert check(r) == []


def test_a_silent_user_cancel_policy_closes_the_stream_with_no_event() -> None:
    config = HarnessConfig(policy=Policy(user_cancel_notice=UserCancelNotice.SILENT))
    r = build(SUCCESS_STEPS, config=config).run("why is checkout slow?", cancel_at=1.0)
    assert r.sse_kinds() == ["metadata", "status", "status"]
    assert r.sse_state is SseState.TERMINAL


def test_a_late_success_never_overrides_a_cancel() -> None:
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard).run("why is checkout slow?", cancel_at=4.0)
    assert r.run_state is RunState.CANCELLED
    assert r.discarded == (("guard", "semantic_guard", 5.0),)
    assert r.content is None
    assert r.trace_types().count("RUN_CANCELLED") == 1


def test_an_invalid_json_draft_with_verified_facts_becomes_insufficient_evidence() -> None:
    r = build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("metrics", {"s": 1}, progress=progress("GAINED", facts=[("timeouts", [INV1])])),
        invalid_json("{oops"),
    ]).run("why is checkout slow?")
    assert (r.run_state, r.release_outcome, r.fallback_type.value if r.fallback_type else None
            ) == (RunState.SUCCESS, ReleaseOutcome.FALLBACK, "INSUFFICIENT_EVIDENCE")
    assert r.draft_error is not None and r.draft_error.startswith("INVALID_JSON")
    assert check(r) == []


def test_a_schema_invalid_draft_without_verified_facts_fails() -> None:
    r = build([schema_invalid_draft()]).run("why is checkout slow?")
    assert (r.run_state, r.release_outcome) == (RunState.FAILED, ReleaseOutcome.FAILED)
    assert r.draft_error is not None and r.draft_error.startswith("SCHEMA_INVALID")


def test_a_script_that_runs_out_is_an_internal_failure_that_names_the_component() -> None:
    r = build([call_tool("logs", {"service": "checkout"})]).run("why is checkout slow?")
    assert r.run_state is RunState.FAILED
    assert r.error is not None and "ScriptedModel" in r.error and "step 2" in r.error


def test_the_timeout_progress_policy_releases_verified_progress_after_the_deadline() -> None:
    config = HarnessConfig(deadline_s=4.0,
                           policy=Policy(timeout_progress_fallback=True))
    slow_guard = GuardReply(supported=True, latency_s=2.0)
    r = build(SUCCESS_STEPS, guard=slow_guard, config=config).run("why is checkout slow?")
    assert (r.run_state, r.release_outcome, r.fallback_type.value if r.fallback_type else None
            ) == (RunState.TIMED_OUT, ReleaseOutcome.FALLBACK, "INSUFFICIENT_EVIDENCE")
    assert check(r) == []


def test_a_tool_request_after_stop_required_ends_in_a_controlled_stop() -> None:
    config = HarnessConfig(no_gain_threshold=1)
    r = build([
        call_tool("logs", {"service": "checkout"}),
        call_tool("metrics", {"s": 1},
                  progress=progress("NO_GAIN", facts=[("timeouts", [INV1])])),
        call_tool("metrics", {"s": 2}, progress=progress()),
    ], config=config).run("why is checkout slow?")
    assert r.stop_required_delivered is True
    assert [x.reason.value for x in r.rejections] == ["SATURATED", "SATURATED"]
    assert r.tool_calls == 1
    assert r.release_outcome is ReleaseOutcome.FALLBACK
    assert check(r) == []


def test_a_draft_and_a_tool_request_in_one_reply_is_schema_invalid() -> None:
    from harness_lab.ports import ModelReply, ToolCallRequest
    both = ModelReply(payload={"draft": {"conclusion": "x"}},
                      tool_call=ToolCallRequest("logs", {"service": "a"}))
    r = build([both]).run("why?")
    assert r.draft_error is not None and "not both" in r.draft_error


def test_usage_the_store_cannot_hold_ends_the_run_failed_with_the_reason() -> None:
    from harness_lab.ports import TokenUsage

    h = build(SUCCESS_STEPS, config=HarnessConfig().with_(budget={"tokens": None}))
    h.parts.components.model.usage = TokenUsage(10**30, 5)
    r = h.run("why is checkout slow?")
    assert (r.run_state, r.release_outcome) == (RunState.FAILED, ReleaseOutcome.FAILED)
    assert r.error == ("StoreError: run run-000001: input_tokens is 31 digits long, beyond "
                       "the 64-bit integer a store holds")
    assert r.failure == {"code": "STORE_FAILURE", "message": r.error}
    assert r.stored_row is not None
    assert (r.stored_row["status"], r.stored_row["input_tokens"]) == ("FAILED", None)
    assert r.usage.input_tokens == 3 * 10**30  # three model calls
    assert check(r) == []


def test_a_query_that_is_not_valid_unicode_ends_the_run_failed_before_it_starts() -> None:
    r = build(SUCCESS_STEPS).run("why \ud800 slow?")
    assert (r.run_state, r.release_outcome) == (RunState.FAILED, ReleaseOutcome.FAILED)
    assert r.error is not None and r.error.startswith(
        "StoreError: run 'run-000001': query holds '\\ud800' at character 4")
    assert r.stored_row is None
    assert r.sse_events == ()
    assert r.trace_types() == ["RUN_STARTED", "RUN_FINISHED"]


def test_a_completion_the_store_refuses_is_not_released_as_if_it_were_stored() -> None:
    from harness_lab.fakes import Evidence, ScriptedTool, call_tool

    odd = "logs\udc00"  # a tool name no store can write: the completion's invocation row fails
    tools = standard_tools(logs=ScriptedTool(odd, default=Evidence(({"line": "timeout"},))))
    steps = [call_tool(odd, {"service": "checkout"}), *SUCCESS_STEPS[1:]]
    r = build(steps, tools=tools).run("why is checkout slow?")
    assert r.error is not None and "StoreError: run 'run-000001': complete failed: " \
                                   "UnicodeEncodeError" in r.error
    assert r.release_outcome is ReleaseOutcome.FAILED
    assert r.failure is not None and r.failure["code"] == "STORE_FAILURE"
    assert "content" not in r.sse_kinds()
    assert r.stored_row is None
    # the RunState was SUCCESS before the write failed: the checks report both facts
    assert {v.message for v in check(r)} >= {"no stored diagnosis_run row",
                                             "RunState SUCCESS with outcome FAILED"}


def test_a_session_id_the_store_cannot_read_ends_the_run_failed_before_it_starts() -> None:
    r = build(SUCCESS_STEPS).run("why is checkout slow?", session_id="s-\udfff")
    assert (r.run_state, r.release_outcome) == (RunState.FAILED, ReleaseOutcome.FAILED)
    assert r.error == ("StoreError: session 's-\\udfff': read failed: UnicodeEncodeError: "
                       "'utf-8' codec can't encode character '\\udfff' in position 2: "
                       "surrogates not allowed")
    assert r.stored_row is None
    assert r.statuses == ()


def test_a_released_run_ends_in_the_state_its_release_decided_not_by_a_refused_finish() -> None:
    from harness_lab.core.budget import BudgetLimits
    from harness_lab.defects import Defect

    # with the seeded defect, the lifecycle lets a later terminal state override the first:
    # had the application tried to end a budget fallback SUCCESS, the run would now be SUCCESS
    config = HarnessConfig(budget=BudgetLimits(tool_calls=1),
                           defects=frozenset({Defect.LATE_SUCCESS_OVERRIDES_CANCEL}))
    r = build(SUCCESS_STEPS, config=config).run("why is checkout slow?")
    assert (r.run_state, r.release_outcome) == (RunState.BUDGET_EXHAUSTED, ReleaseOutcome.FALLBACK)
    assert [state for state, _, _ in r.terminations] == ["BUDGET_EXHAUSTED"]
    assert r.stored_row is not None and r.stored_row["termination_state"] == "BUDGET_EXHAUSTED"
