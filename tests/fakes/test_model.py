import json

import pytest

from harness_lab.diagnosis.schema import DiagnosisDraft, ProgressReport
from harness_lab.errors import ProviderError, ScriptExhausted
from harness_lab.fakes import (
    CallbackModel,
    Script,
    ScriptedModel,
    call_tool,
    draft,
    empty_reply,
    invalid_json,
    progress,
    provider_error,
    report,
    schema_invalid_draft,
)
from harness_lab.fakes.model import cites_relative
from harness_lab.ports import AgentRequest, ModelReply, TokenUsage, ToolCallRequest
from harness_lab.states import InformationGain


def request(step: int = 1) -> AgentRequest:
    return AgentRequest("r1", "why is checkout slow?", step, (), ("logs",))


# ScriptedModel


def test_a_scripted_model_returns_its_replies_in_order():
    first, second = call_tool("logs", {"service": "checkout"}), draft("disk full")
    model = ScriptedModel([first, second])
    assert model.step(request(1)) is first
    assert model.step(request(2)) is second


def test_a_scripted_model_records_every_request_it_received():
    model = ScriptedModel([empty_reply(), empty_reply()])
    a, b = request(1), request(2)
    model.step(a)
    model.step(b)
    assert model.requests == [a, b]


def test_a_scripted_model_that_runs_out_names_itself_and_the_step():
    model = ScriptedModel([empty_reply(), empty_reply()])
    model.step(request(1))
    model.step(request(2))
    with pytest.raises(ScriptExhausted) as caught:
        model.step(request(3))
    assert str(caught.value) == "ScriptedModel: script exhausted at step 3 (it holds 2 step(s))"
    assert (caught.value.component, caught.value.step) == ("ScriptedModel", 3)


def test_a_scripted_model_records_the_request_that_found_its_script_exhausted():
    model = ScriptedModel([])
    with pytest.raises(ScriptExhausted):
        model.step(request(1))
    assert model.requests == [request(1)]


def test_a_named_scripted_model_uses_its_name_when_it_runs_out():
    model = ScriptedModel([], name="planner")
    with pytest.raises(ScriptExhausted) as caught:
        model.step(request(1))
    assert str(caught.value) == "planner: script exhausted at step 1 (it holds 0 step(s))"
    assert (caught.value.component, caught.value.step) == ("planner", 1)


def test_a_provider_error_step_is_raised_with_its_latency():
    model = ScriptedModel([provider_error("rate limited", latency_s=1.5, status=429)])
    with pytest.raises(ProviderError) as caught:
        model.step(request(1))
    assert (str(caught.value), caught.value.latency_s, caught.value.status) == (
        "rate limited", 1.5, 429)


def test_a_callable_step_is_called_with_the_request():
    seen = []

    def step(req: AgentRequest) -> ModelReply:
        seen.append(req)
        return report(progress(next=f"step {req.step}"))

    reply = ScriptedModel([step]).step(request(4))
    assert seen == [request(4)]
    assert reply.payload == {"progress": {"next": "step 4"}}


def test_a_callable_step_that_returns_no_model_reply_is_a_type_error():
    model = ScriptedModel([lambda req: "not a reply"])
    with pytest.raises(TypeError):
        model.step(request(1))


def test_a_scripted_model_counts_its_remaining_steps():
    model = ScriptedModel([empty_reply(), empty_reply()])
    model.step(request(1))
    assert model.remaining == 1


def test_a_scripted_model_fills_in_latency_and_usage_a_reply_does_not_carry():
    model = ScriptedModel([empty_reply()], latency_s=2.0, usage=TokenUsage(10, 5))
    reply = model.step(request(1))
    assert (reply.latency_s, reply.usage) == (2.0, TokenUsage(10, 5))


def test_a_scripted_model_keeps_the_latency_and_usage_a_reply_carries():
    own = empty_reply(latency_s=0.5, usage=TokenUsage(3, 1))
    model = ScriptedModel([own], latency_s=2.0, usage=TokenUsage(10, 5))
    reply = model.step(request(1))
    assert (reply.latency_s, reply.usage) == (0.5, TokenUsage(3, 1))


# CallbackModel


def test_a_callback_model_returns_what_its_function_returns_and_records_requests():
    model = CallbackModel(lambda req: draft(f"answer to step {req.step}"))
    reply = model.step(request(2))
    assert reply.payload == {"draft": {"conclusion": "answer to step 2"}}
    assert model.requests == [request(2)]


def test_a_callback_model_fills_in_latency_and_usage_a_reply_does_not_carry():
    model = CallbackModel(lambda req: empty_reply(), latency_s=1.0, usage=TokenUsage(4, 2))
    reply = model.step(request(1))
    assert (reply.latency_s, reply.usage) == (1.0, TokenUsage(4, 2))


def test_a_callback_whose_function_raises_a_provider_error_propagates_it():
    def fail(req: AgentRequest) -> ModelReply:
        raise provider_error(latency_s=3.0)

    with pytest.raises(ProviderError) as caught:
        CallbackModel(fail).step(request(1))
    assert caught.value.latency_s == 3.0


# Script


def test_a_repeating_script_must_hold_exactly_one_step():
    with pytest.raises(ValueError):
        Script("x", [1, 2], repeat=True)


def test_a_repeating_script_hands_out_its_step_forever_and_has_no_remaining_count():
    script = Script("x", ["a"], repeat=True)
    assert [script.take(n) for n in (1, 2, 3)] == ["a", "a", "a"]
    assert script.remaining is None


# builders


def test_call_tool_builds_a_tool_request_with_its_scope_and_call_id():
    reply = call_tool("logs", {"service": "checkout"}, call_id="c1")
    assert reply == ModelReply(tool_call=ToolCallRequest("logs", {"service": "checkout"}, "c1"))


def test_call_tool_without_a_scope_requests_an_empty_scope_and_has_no_payload():
    reply = call_tool("metrics")
    assert reply.tool_call == ToolCallRequest("metrics", {}, None)
    assert reply.payload is None


def test_call_tool_with_progress_puts_the_report_beside_the_request():
    reply = call_tool("logs", {"service": "a"}, progress=progress("GAINED"))
    assert reply.payload == {"progress": {"assessment": "GAINED"}}


def test_report_carries_only_a_progress_report():
    reply = report(progress(missing_info=["the deploy time"]))
    assert reply.payload == {"progress": {"missing_info": ["the deploy time"]}}
    assert (reply.tool_call, reply.content) == (None, None)


def test_progress_writes_every_field_it_is_given():
    body = progress("NO_GAIN", facts=[("pod restarted", ["inv-1"])],
                    missing_info=["heap size"], next="read the heap dump")
    assert body == {
        "assessment": "NO_GAIN",
        "facts": [{"statement": "pod restarted", "citations": ["inv-1"]}],
        "missing_info": ["heap size"],
        "next": "read the heap dump",
    }


def test_progress_with_nothing_given_is_an_empty_report():
    assert progress() == {}


def test_progress_writes_an_information_gain_as_its_string_value():
    assert progress(InformationGain.GAINED) == {"assessment": "GAINED"}


def test_progress_refuses_an_assessment_that_is_no_information_gain():
    with pytest.raises(ValueError):
        progress("MAYBE")


def test_a_built_progress_report_passes_the_strict_schema_in_json_mode():
    body = progress("GAINED", facts=[{"statement": "oom", "citations": ["inv-1"]}])
    parsed = ProgressReport.model_validate_json(json.dumps(body))
    assert parsed.assessment is InformationGain.GAINED


def test_draft_converts_evidence_tuples_to_references():
    reply = draft("disk full", evidence=[("inv-1", "disk at 100%")])
    assert reply.payload == {"draft": {
        "conclusion": "disk full",
        "evidence": [{"invocation_id": "inv-1", "claim": "disk at 100%"}],
    }}


def test_draft_keeps_evidence_given_as_dicts():
    reply = draft("disk full", evidence=[{"invocation_id": "inv-2", "claim": "no space"}])
    assert reply.payload == {"draft": {
        "conclusion": "disk full",
        "evidence": [{"invocation_id": "inv-2", "claim": "no space"}],
    }}


def test_draft_converts_finding_tuples_and_keeps_finding_dicts():
    reply = draft(findings=[("pod restarted", ["inv-1", "inv-2"]), ("oom", "inv-3"),
                            {"statement": "cpu high", "citations": ["inv-4"]}])
    assert reply.payload == {"draft": {"findings": [
        {"statement": "pod restarted", "citations": ["inv-1", "inv-2"]},
        {"statement": "oom", "citations": ["inv-3"]},
        {"statement": "cpu high", "citations": ["inv-4"]},
    ]}}


def test_draft_writes_missing_info_recommendations_and_progress():
    reply = draft(missing_info=["the region"], recommendations=["add disk"],
                  progress=progress("GAINED"))
    assert reply.payload == {
        "draft": {"missing_info": ["the region"], "recommendations": ["add disk"]},
        "progress": {"assessment": "GAINED"},
    }


def test_draft_with_nothing_given_is_the_empty_draft():
    assert draft().payload == {"draft": {}}


def test_a_built_draft_is_json_shaped_and_passes_the_strict_schema_in_json_mode():
    payload = draft("disk full", evidence=[("inv-1", "disk at 100%")],
                    findings=[("disk at 100%", ("inv-1",))]).payload
    assert json.loads(json.dumps(payload)) == payload
    parsed = DiagnosisDraft.model_validate_json(json.dumps(payload["draft"]))
    assert parsed.conclusion == "disk full"


def test_invalid_json_carries_unparseable_content_and_no_payload():
    reply = invalid_json()
    assert (reply.content, reply.payload, reply.tool_call) == ("{not json", None, None)


def test_invalid_json_carries_the_text_it_is_given():
    assert invalid_json("```json").content == "```json"


def test_schema_invalid_draft_by_default_has_a_conclusion_the_schema_refuses():
    payload = schema_invalid_draft().payload
    assert payload == {"draft": {"conclusion": 42}}
    with pytest.raises(ValueError):
        DiagnosisDraft.model_validate_json(json.dumps(payload["draft"]))


def test_schema_invalid_draft_carries_the_payload_it_is_given():
    reply = schema_invalid_draft({"draft": {"verdict": "x"}})
    assert reply.payload == {"draft": {"verdict": "x"}}


def test_empty_reply_has_no_content_no_payload_and_no_tool_request():
    assert empty_reply() == ModelReply()


def test_provider_error_by_default_is_an_instant_503():
    error = provider_error()
    assert (str(error), error.latency_s, error.status) == ("provider unavailable", 0.0, 503)


def test_builders_by_default_carry_zero_usage_and_no_latency():
    replies = [call_tool("logs"), report({}), draft(), invalid_json(),
               schema_invalid_draft(), empty_reply()]
    assert {(r.usage, r.latency_s) for r in replies} == {(TokenUsage(0, 0), None)}


def test_builders_carry_the_latency_and_usage_they_are_given():
    given = {"latency_s": 1.5, "usage": TokenUsage(7, 3)}
    replies = [call_tool("logs", **given), report({}, **given), draft(**given),
               invalid_json(**given), schema_invalid_draft(**given), empty_reply(**given)]
    assert {(r.usage, r.latency_s) for r in replies} == {(TokenUsage(7, 3), 1.5)}


def test_a_rewound_scripted_model_plays_again_from_its_first_step_with_no_requests():
    first, second = call_tool("logs", {"service": "checkout"}), draft("disk full")
    model = ScriptedModel([first, second])
    model.step(request(1))
    model.step(request(2))
    model.rewind()
    assert (model.requests, model.remaining) == ([], 2)
    assert model.step(request(1)) is first


def test_a_scripted_model_plays_its_script_from_the_top_for_each_run() -> None:
    from harness_lab.messages import AgentRequest

    model = ScriptedModel([draft(missing_info=["which service?"])])

    def ask(run_id: str) -> object:
        return model.step(AgentRequest(run_id, "why?", 1, (), ("logs",)))

    assert ask("run-000001").payload is not None  # type: ignore[attr-defined]
    with pytest.raises(ScriptExhausted):
        ask("run-000001")  # within one run, a script that runs out fails loudly
    assert ask("run-000002").payload is not None  # type: ignore[attr-defined]
    assert [r.run_id for r in model.requests] == ["run-000002"]


def test_run_relative_invocation_ids_become_the_runs_own() -> None:
    from harness_lab.messages import AgentRequest

    model = ScriptedModel([draft("pool exhausted", evidence=[("inv-2", "timeouts")])])
    reply = model.step(AgentRequest("run-000007", "why?", 1, (), ("logs",)))
    assert reply.payload is not None
    assert reply.payload["draft"]["evidence"] == [
        {"invocation_id": "run-000007-inv-2", "claim": "timeouts"}]


def test_an_inv_id_is_found_at_any_depth_of_json_data_and_only_as_a_whole_string() -> None:
    assert cites_relative({"evidence": [{"invocation_id": "inv-2", "claim": "x"}]}) is True
    assert cites_relative(["inv-1"]) is True
    assert cites_relative({"evidence": [{"invocation_id": "run-1-inv-2"}], "n": 3}) is False
    assert cites_relative("the inv-1 call") is False
