"""The OpenAI adapters: harness requests become chat messages, completions become replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from harness_lab.errors import ProviderError
from harness_lab.ports import (
    AgentRequest,
    AnswerRequest,
    GuardRequest,
    Observation,
    RepairRequest,
    RouteRequest,
    TokenUsage,
    ToolCallRequest,
    Turn,
)
from harness_lab.recorded import (
    STOP_REQUIRED_NOTE,
    OpenAIDiagnosisModel,
    OpenAIRepair,
    OpenAIResponder,
    OpenAIRouter,
    OpenAISemanticGuard,
    ToolSpec,
)
from harness_lab.states import EvidenceStatus, IntentType, InvocationStatus
from tests.recorded.conftest import TOOL_SPECS, chat_body, mock_client


class Provider:
    """A MockTransport handler answering queued bodies; ``sent`` holds the decoded requests."""

    __test__ = False

    def __init__(self, *bodies: dict[str, Any]) -> None:
        self.bodies = list(bodies)
        self.sent: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(json.loads(request.content))
        return httpx.Response(200, json=self.bodies.pop(0))


def client_for(provider: Callable[[httpx.Request], httpx.Response]) -> Any:
    return mock_client(provider)


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = "c1"
              ) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}
    if call_id is not None:
        call["id"] = call_id
    return call


def agent_request(step: int = 1, observations: tuple[Observation, ...] = (), **kw: Any
                  ) -> AgentRequest:
    return AgentRequest("run-1", "why is checkout slow?", step, observations,
                        ("logs", "metrics"), **kw)


def observation(call_id: str | None = "c1") -> Observation:
    return Observation(call_id, "logs", {"service": "checkout"}, "run-1-inv-1",
                       InvocationStatus.READY, EvidenceStatus.EVIDENCE_FOUND,
                       ({"line": "timeout"},), needs_assessment=True)


# -- diagnosis model ---------------------------------------------------------------------------


def test_a_tool_call_becomes_a_tool_call_request_with_usage_and_no_latency() -> None:
    provider = Provider(chat_body(None, [tool_call("logs", {"service": "checkout"})], (90, 8)))
    reply = OpenAIDiagnosisModel(client_for(provider), TOOL_SPECS).step(agent_request())
    assert reply.tool_call == ToolCallRequest("logs", {"service": "checkout"}, "c1")
    assert reply.content is None and reply.payload is None
    assert reply.usage == TokenUsage(90, 8) and reply.latency_s is None
    sent = provider.sent[0]
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "why is checkout slow?" in sent["messages"][1]["content"]
    assert "JSON Schema" in sent["messages"][0]["content"]
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["tools"] == [spec.function_definition() for spec in TOOL_SPECS]


def test_json_content_is_passed_through_for_the_harness_to_validate() -> None:
    text = '{"draft": {"conclusion": "pool exhausted"}}'
    reply = OpenAIDiagnosisModel(client_for(Provider(chat_body(text))), TOOL_SPECS).step(
        agent_request())
    assert reply.content == text and reply.tool_call is None


def test_later_steps_carry_the_conversation_and_answer_each_call_id() -> None:
    provider = Provider(chat_body('{"progress": {}}', [tool_call("logs", {"service": "a"})]),
                        chat_body('{"draft": {"conclusion": "x"}}'))
    model = OpenAIDiagnosisModel(client_for(provider), TOOL_SPECS)
    model.step(agent_request())
    model.step(agent_request(2, (observation(),), notice="progress protocol violated: x"))
    messages = provider.sent[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    own, result, note = messages[2], messages[3], messages[4]
    assert own["tool_calls"][0]["id"] == "c1"
    assert own["content"] == '{"progress": {}}'
    assert result["tool_call_id"] == "c1"
    assert json.loads(result["content"]) == {
        "evidence_status": "EVIDENCE_FOUND", "invocation_id": "run-1-inv-1",
        "items": [{"line": "timeout"}], "needs_assessment": True,
        "scope": {"service": "checkout"}, "status": "READY", "tool": "logs"}
    assert note["content"] == "Harness: progress protocol violated: x"
    assert len(model.conversations["run-1"]) == 6  # the new reply was appended


def test_stop_required_is_a_user_note_once() -> None:
    provider = Provider(chat_body('{"draft": {}}'), chat_body('{"draft": {}}'))
    model = OpenAIDiagnosisModel(client_for(provider), TOOL_SPECS)
    model.step(agent_request(stop_required=True))
    model.step(agent_request(stop_required=True,
                             notice="STOP_REQUIRED: collection is saturated"))
    first, second = (p["messages"][-1]["content"] for p in provider.sent)
    assert first == f"Harness: {STOP_REQUIRED_NOTE}"
    assert second == "Harness: STOP_REQUIRED: collection is saturated"


def test_a_result_without_a_matching_call_is_a_user_message() -> None:
    provider = Provider(chat_body('{"draft": {}}'))
    model = OpenAIDiagnosisModel(client_for(provider), TOOL_SPECS)
    model.step(agent_request(2, (observation(call_id=None),)))
    assert provider.sent[0]["messages"][-1]["content"].startswith("Tool result: ")


def test_only_offered_tools_are_sent_and_missing_call_ids_are_made_up() -> None:
    provider = Provider(chat_body(None, [tool_call("logs", {}, call_id=None),
                                         tool_call("metrics", {}, call_id="c2")]))
    extra = ToolSpec("traces", "Traces.")
    model = OpenAIDiagnosisModel(client_for(provider), (*TOOL_SPECS, extra))
    reply = model.step(agent_request(3))
    assert reply.tool_call == ToolCallRequest("logs", {}, "call_3")
    assert [t["function"]["name"] for t in provider.sent[0]["tools"]] == ["logs", "metrics"]
    assert len(model.conversations["run-1"][-1]["tool_calls"]) == 1  # only the one taken


def test_a_provider_failure_propagates_as_provider_error() -> None:
    client = mock_client(lambda r: httpx.Response(503, json={"error": {"message": "busy"}}))
    with pytest.raises(ProviderError, match="busy"):
        OpenAIDiagnosisModel(client, TOOL_SPECS).step(agent_request())


# -- router, responder, guard, repair ------------------------------------------------------


@pytest.mark.parametrize(("raw", "intent"), [("DIAGNOSIS", IntentType.DIAGNOSIS),
                                             ("system_chat", IntentType.SYSTEM_CHAT),
                                             (" KNOWLEDGE_QUERY ", IntentType.KNOWLEDGE_QUERY)])
def test_the_router_reads_the_intent(raw: str, intent: IntentType) -> None:
    provider = Provider(chat_body(json.dumps({"intent": raw}), usage=(5, 2)))
    request = RouteRequest("hi", (Turn("run-0", "before", IntentType.SYSTEM_CHAT, "hey"),),
                           None)
    reply = OpenAIRouter(client_for(provider)).route(request)
    assert reply.intent is intent and reply.usage == TokenUsage(5, 2)
    assert reply.latency_s is None
    user = json.loads(provider.sent[0]["messages"][1]["content"])
    assert user == {"query": "hi", "previous_turn": None, "history": [
        {"query": "before", "intent": "SYSTEM_CHAT", "answer": "hey"}]}


@pytest.mark.parametrize("content", ['{"intent": "SMALL_TALK"}', '{"intent": 3}', '{}',
                                     "DIAGNOSIS", "[]", None])
def test_an_unknown_or_malformed_intent_is_a_provider_error(content: str | None) -> None:
    with pytest.raises(ProviderError):
        OpenAIRouter(client_for(Provider(chat_body(content)))).route(RouteRequest("q", (),
                                                                                  None))


def test_the_responder_answers_text_with_passages_for_knowledge() -> None:
    provider = Provider(chat_body("  Use the pool.  ", usage=(8, 3)))
    reply = OpenAIResponder(client_for(provider)).answer(
        AnswerRequest(IntentType.KNOWLEDGE_QUERY, "pool size?", (), ("a", "b")))
    assert reply.text == "Use the pool." and reply.usage == TokenUsage(8, 3)
    messages = provider.sent[0]["messages"]
    assert messages[1]["content"] == "Knowledge passages:\n[1] a\n[2] b"
    assert messages[-1] == {"role": "user", "content": "pool size?"}
    assert "response_format" not in provider.sent[0]


def test_an_empty_answer_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="no text"):
        OpenAIResponder(client_for(Provider(chat_body("   ")))).answer(
            AnswerRequest(IntentType.SYSTEM_CHAT, "hi", ()))


GUARD_REQUEST = GuardRequest("run-1", "q", {"conclusion": "c"},
                             ({"invocation_id": "i", "started_at": 1.0, "finished_at": 2.5},))


def test_the_guard_reads_supported_and_rationale() -> None:
    provider = Provider(chat_body('{"supported": false, "rationale": "no"}', usage=(4, 1)))
    reply = OpenAISemanticGuard(client_for(provider)).judge(GUARD_REQUEST)
    assert (reply.supported, reply.rationale) == (False, "no")
    assert reply.usage == TokenUsage(4, 1) and reply.latency_s is None
    assert json.loads(provider.sent[0]["messages"][1]["content"])["evidence"] == [
        {"invocation_id": "i"}]


@pytest.mark.parametrize("content", ['{"supported": "yes"}', '{"rationale": "x"}',
                                     '{"supported": true, "rationale": 5}', "yes", None])
def test_a_malformed_verdict_is_a_provider_error(content: str | None) -> None:
    with pytest.raises(ProviderError):
        OpenAISemanticGuard(client_for(Provider(chat_body(content)))).judge(GUARD_REQUEST)


def test_the_repair_returns_the_draft_json_as_content() -> None:
    text = '{"draft": {"conclusion": "c", "evidence": []}}'
    provider = Provider(chat_body(text, usage=(6, 6)))
    reply = OpenAIRepair(client_for(provider)).repair(
        RepairRequest("run-1", "q", {"conclusion": "c"}, ("unknown id",), ("run-1-inv-1",)))
    assert reply.content == text and reply.usage == TokenUsage(6, 6)
    assert reply.latency_s is None and reply.tool_call is None
    assert json.loads(provider.sent[0]["messages"][1]["content"])[
        "citable_invocation_ids"] == ["run-1-inv-1"]


def test_openai_providers_fill_the_model_like_components() -> None:
    from harness_lab.application.components import Components
    from harness_lab.fakes import ScriptedRetriever
    from harness_lab.recorded import openai_providers

    providers = openai_providers(mock_client(Provider()), TOOL_SPECS)
    components = Components(**providers, retriever=ScriptedRetriever())
    assert isinstance(components.model, OpenAIDiagnosisModel)
    assert isinstance(components.router, OpenAIRouter)
    assert isinstance(components.guard, OpenAISemanticGuard)
