"""Exported runs, as the OpenTelemetry SDK's own in-memory exporter receives them: the span
tree, its attributes and events, and times placed at the epoch.

Expected times are the scenario files' latencies added up by hand (router 0.2 s, model
1.0 s, ...), expected states those their ``expect`` blocks name.
"""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tests.otel.conftest import (
    TREE,
    at,
    children,
    export,
    named,
    only,
    outline,
    played,
    spans_of,
)

GUARDS_PASS = "outcomes/conclusion-guards-pass.yaml"
TOOL_ERROR = "faults/tool-error-projection.yaml"
REPAIR_FAILS = "faults/repair-failed-error.yaml"
REASON_WINS = "late/first-reason-wins.yaml[user-cancel-first]"


@pytest.fixture(scope="module")
def guards_pass() -> list:
    """The spans of the scenario whose conclusion passes both guards."""
    return spans_of(GUARDS_PASS)


def test_a_run_is_one_trace_under_one_root_span(guards_pass: list) -> None:
    assert len({s.context.trace_id for s in guards_pass}) == 1
    assert [s.name for s in children(guards_pass, None)] == ["harness_lab.run"]


def test_a_released_report_is_routing_the_agents_steps_the_guards_and_the_release(
        guards_pass: list) -> None:
    assert outline(guards_pass) == TREE


def test_span_times_are_the_epoch_plus_the_scenarios_latencies(guards_pass: list) -> None:
    times = [(s.name, s.start_time, s.end_time)
             for s in sorted(guards_pass, key=lambda s: (s.start_time, s.end_time))]
    assert times == [
        ("routing", at("0"), at("0.2")),
        ("harness_lab.run", at("0"), at("6.7")),
        ("chat", at("0.2"), at("1.2")),
        ("invoke_agent diagnosis", at("0.2"), at("6.2")),
        ("execute_tool logs", at("1.2"), at("3.2")),
        ("chat", at("3.2"), at("4.2")),
        ("execute_tool metrics", at("4.2"), at("5.2")),
        ("chat", at("5.2"), at("6.2")),
        ("evidence_guard", at("6.2"), at("6.2")),
        ("semantic_guard", at("6.2"), at("6.7")),
        ("release", at("6.7"), at("6.7")),
    ]


def test_the_root_carries_every_state_axis_of_the_run(guards_pass: list) -> None:
    root = only(guards_pass, "harness_lab.run")
    axes = {k: root.attributes.get(f"harness_lab.{k}") for k in (
        "intent", "run_state", "termination_reason", "release_outcome", "fallback_type",
        "db_status", "sse_state", "collection_state", "stop_reason", "semantic_verdict",
        "statuses", "scenario")}
    assert axes == {"intent": "DIAGNOSIS", "run_state": "SUCCESS",
                    "termination_reason": "completed", "release_outcome": "SUCCESS",
                    "fallback_type": None, "db_status": "SUCCESS", "sse_state": "TERMINAL",
                    "collection_state": "COLLECTING", "stop_reason": None,
                    "semantic_verdict": "SUPPORTED",
                    "statuses": ("ROUTING", "DIAGNOSIS_RUNNING", "SAFETY_VALIDATING"),
                    "scenario": "conclusion-guards-pass"}
    assert root.attributes["gen_ai.conversation.id"] == "session-000001"
    assert root.attributes["harness_lab.model_calls"] == 3
    assert root.attributes["harness_lab.tool_calls"] == 2
    assert root.status.status_code is StatusCode.UNSET


def test_the_agent_its_model_calls_and_its_tools_speak_the_genai_conventions(
        guards_pass: list) -> None:
    agent = only(guards_pass, "invoke_agent diagnosis")
    assert (agent.attributes["gen_ai.operation.name"], agent.attributes["gen_ai.agent.name"],
            agent.kind) == ("invoke_agent", "diagnosis", SpanKind.INTERNAL)
    chats = named(guards_pass, "chat")
    assert [(c.attributes["gen_ai.operation.name"], c.attributes["harness_lab.detail.step"],
             c.kind) for c in chats] == [("chat", 1, SpanKind.CLIENT), ("chat", 2, SpanKind.CLIENT),
                                         ("chat", 3, SpanKind.CLIENT)]
    tools = [s for s in guards_pass if s.name.startswith("execute_tool ")]
    assert [(t.attributes["gen_ai.operation.name"], t.attributes["gen_ai.tool.name"])
            for t in sorted(tools, key=lambda s: s.start_time)] == [
        ("execute_tool", "logs"), ("execute_tool", "metrics")]


def test_a_tool_span_carries_its_canonical_invocation(guards_pass: list) -> None:
    logs = only(guards_pass, "execute_tool logs")
    assert {k: logs.attributes.get(f"harness_lab.invocation.{k}") for k in (
        "id", "status", "evidence_status", "error_code", "scope")} == {
        "id": "run-000001-inv-1", "status": "READY", "evidence_status": "EVIDENCE_FOUND",
        "error_code": None, "scope": '{"service":"checkout"}'}
    assert logs.status.status_code is StatusCode.UNSET


def test_a_tool_that_failed_is_an_error_span_with_its_error_code() -> None:
    spans = spans_of(TOOL_ERROR)
    first, second = named(spans, "execute_tool logs")
    assert (first.status.status_code, first.attributes["error.type"],
            first.attributes["harness_lab.invocation.status"],
            first.attributes["harness_lab.invocation.evidence_status"]) == (
        StatusCode.ERROR, "PROJECTION", "ERROR", "ERROR")
    assert first.status.description == "backend answer cannot be projected"
    assert second.status.status_code is StatusCode.UNSET


def test_a_repaired_conclusion_is_checked_repaired_and_checked_again() -> None:
    spans = spans_of(TOOL_ERROR)
    root = only(spans, "harness_lab.run")
    after_agent = [(s.name, s.attributes.get("harness_lab.guard.pass"),
                    s.attributes["harness_lab.trace.status"])
                   for s in children(spans, root) if s.name not in (
                       "routing", "invoke_agent diagnosis")]
    assert after_agent == [("evidence_guard", "initial", "FAILED"),
                           ("evidence_repair", None, "OK"),
                           ("evidence_guard", "recheck", "OK"),
                           ("semantic_guard", None, "OK"),
                           ("release", None, "OK")]
    repair = only(spans, "evidence_repair")
    assert (repair.start_time, repair.end_time) == (at("5.2"), at("6.2"))


def test_a_failed_repair_is_an_error_and_the_release_names_the_fallback() -> None:
    spans = spans_of(REPAIR_FAILS)
    repair = only(spans, "evidence_repair")
    assert (repair.status.status_code, repair.status.description) == (
        StatusCode.ERROR, "evidence repair failed (injected)")
    release = only(spans, "release")
    assert (release.attributes["harness_lab.detail.outcome"],
            release.attributes["harness_lab.detail.fallback_type"]) == (
        "FALLBACK", "EVIDENCE_VALIDATION_FAILED")
    root = only(spans, "harness_lab.run")
    assert (root.attributes["harness_lab.release_outcome"],
            root.attributes["harness_lab.fallback_type"]) == (
        "FALLBACK", "EVIDENCE_VALIDATION_FAILED")
    assert "semantic_guard" not in {s.name for s in spans}


def test_a_reply_the_draft_contract_refused_is_a_chat_span_in_error_of_that_kind() -> None:
    last = named(spans_of("faults/invalid-draft-invalid-json.yaml"), "chat")[-1]
    assert (last.status.status_code, last.attributes["error.type"],
            last.attributes["harness_lab.detail.action"]) == (
        StatusCode.ERROR, "INVALID_JSON", "refused")


def test_a_tool_refused_in_preflight_is_an_event_of_the_agent_not_a_tool_span() -> None:
    spans = spans_of("tools/rejection-auth.yaml")
    agent = only(spans, "invoke_agent diagnosis")
    (rejected,) = [e for e in agent.events if e.name == "TOOL_REQUEST_REJECTED"]
    assert (rejected.attributes["harness_lab.detail.tool"],
            rejected.attributes["harness_lab.detail.reason"]) == ("admin_console", "AUTH")
    assert [s.name for s in children(spans, agent)] == ["chat", "chat", "execute_tool logs",
                                                        "chat"]


def test_the_sse_events_are_events_of_the_root_in_their_order(guards_pass: list) -> None:
    root = only(guards_pass, "harness_lab.run")
    sse = [e for e in root.events if e.name.startswith("sse.") and e.name != "sse.state"]
    assert [e.name for e in sse] == ["sse.metadata", "sse.status", "sse.status", "sse.status",
                                     "sse.content", "sse.done"]
    assert [e.attributes.get("harness_lab.sse.status") for e in sse if e.name == "sse.status"
            ] == ["ROUTING", "DIAGNOSIS_RUNNING", "SAFETY_VALIDATING"]
    done = sse[-1]
    assert (done.timestamp, done.attributes["harness_lab.sse.outcome"]) == (at("6.7"), "SUCCESS")
    assert sse[-2].attributes["harness_lab.sse.content_type"] == "diagnosis_report"


def test_a_cancel_that_lost_to_an_earlier_one_is_an_event_after_the_termination() -> None:
    spans = spans_of(REASON_WINS)
    root = only(spans, "harness_lab.run")
    events = [(e.name, e.timestamp) for e in root.events if not e.name.startswith("sse.")]
    assert events == [("RUN_STARTED", at("0")), ("termination", at("3.0")),
                      ("TERMINATION_REJECTED", at("4.0")), ("RUN_CANCELLED", at("10.2")),
                      ("RUN_FINISHED", at("10.2"))]
    termination, rejected = [
        e for e in root.events if e.name in ("termination", "TERMINATION_REJECTED")]
    assert (termination.attributes["harness_lab.termination.state"],
            termination.attributes["harness_lab.termination.cause"]) == (
        "CANCELLED", "USER_REQUESTED")
    assert (rejected.attributes["harness_lab.detail.reason"],
            rejected.attributes["harness_lab.detail.lost_to_reason"]) == (
        "CLIENT_DISCONNECTED", "USER_REQUESTED")
    assert (root.status.status_code, root.attributes["harness_lab.run_state"]) == (
        StatusCode.ERROR, "CANCELLED")


def test_a_model_call_in_flight_at_a_cancel_runs_to_its_end_and_is_marked_discarded() -> None:
    spans = spans_of(REASON_WINS)
    (chat,) = named(spans, "chat")
    assert (chat.start_time, chat.end_time) == (at("0.2"), at("10.2"))  # model 1.0 + 10 s spike
    assert (chat.attributes["harness_lab.discarded"],
            chat.attributes["harness_lab.discarded_in"]) == (True, "CANCELLED")
    assert chat.status.status_code is StatusCode.UNSET  # the call did not fail


def test_a_disconnect_is_an_sse_state_event_at_its_instant() -> None:
    root = only(spans_of("outcomes/client-disconnect.yaml"), "harness_lab.run")
    states = [(e.attributes["harness_lab.sse_state"], e.timestamp) for e in root.events
              if e.name == "sse.state"]
    assert states[-1] == ("DISCONNECTED", at("0.7"))
    assert "sse.done" not in [e.name for e in root.events]


def test_a_knowledge_query_is_routing_a_retrieval_and_an_answer() -> None:
    spans = spans_of("paths/knowledge-query.yaml")
    assert outline(spans) == ["harness_lab.run", "  routing", "  knowledge_retrieval",
                              "  knowledge_answer"]
    assert [only(spans, n).attributes["gen_ai.operation.name"]
            for n in ("routing", "knowledge_retrieval", "knowledge_answer")] == [
        "chat", "retrieval", "chat"]


def test_the_same_records_export_the_same_ids_twice() -> None:
    pairs = played(GUARDS_PASS, REASON_WINS)
    first, again = (sorted((s.context.trace_id, s.context.span_id) for s in export(pairs))
                    for _ in range(2))
    assert first == again
    assert len(set(first)) == len(first)


def test_two_runs_with_the_same_run_id_are_two_traces() -> None:
    spans = spans_of(GUARDS_PASS, REPAIR_FAILS)
    roots = named(spans, "harness_lab.run")
    assert [r.attributes["harness_lab.run_id"] for r in roots] == ["run-000001", "run-000001"]
    assert roots[0].context.trace_id != roots[1].context.trace_id


def test_an_epoch_of_the_callers_moves_every_time_and_makes_another_trace(
        guards_pass: list) -> None:
    noon = at("0") + 12 * 3600 * 1_000_000_000
    moved = spans_of(GUARDS_PASS, epoch=noon / 1_000_000_000)
    release = only(moved, "release")
    assert release.start_time == at("6.7", noon)
    assert release.context.trace_id != only(guards_pass, "release").context.trace_id


def test_a_span_current_in_the_caller_does_not_become_the_runs_parent() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("caller")
    with tracer.start_as_current_span("the caller's work"):
        spans = spans_of(GUARDS_PASS)
    assert only(spans, "harness_lab.run").parent is None

