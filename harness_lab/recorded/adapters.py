"""The ports of :mod:`harness_lab.ports` on top of an OpenAI-compatible chat endpoint.

Each adapter turns one harness request into one chat completion and the completion into the
harness's reply type. The prompts are module constants so a change to one is visible (and
shows up as a divergence at ``messages[0].content`` when replaying an older cassette).

Latency: a recording keeps no timing, so every reply has ``latency_s=None`` and the
harness's latency model (``Harness(latency=...)``, from the scenario's latency settings)
decides how long each call takes in virtual time; without one a call takes no time.
Failures are :class:`~harness_lab.errors.ProviderError` with ``latency_s=None``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_lab.codec import data
from harness_lab.diagnosis.schema import AgentEnvelope
from harness_lab.errors import ProviderError
from harness_lab.ports import (
    AgentRequest,
    AnswerReply,
    AnswerRequest,
    GuardReply,
    GuardRequest,
    ModelReply,
    Observation,
    PreviousTurn,
    RepairRequest,
    RouteReply,
    RouteRequest,
    ToolCallRequest,
    Turn,
)
from harness_lab.recorded.client import ChatCompletion, OpenAICompatibleClient
from harness_lab.states import IntentType

__all__ = ["DIAGNOSIS_SYSTEM_PROMPT", "GUARD_SYSTEM_PROMPT", "KNOWLEDGE_SYSTEM_PROMPT",
           "REPAIR_SYSTEM_PROMPT", "ROUTER_SYSTEM_PROMPT", "STOP_REQUIRED_NOTE",
           "SYSTEM_CHAT_PROMPT", "OpenAIDiagnosisModel", "OpenAIRepair", "OpenAIResponder",
           "OpenAIRouter", "OpenAISemanticGuard", "ToolSpec", "envelope_schema_text", "json_text",
           "openai_providers"]


def json_text(value: Any) -> str:
    """Deterministic JSON text for prompts: sorted keys, enums as values."""
    return json.dumps(data(value), sort_keys=True, ensure_ascii=False)


@functools.cache
def envelope_schema_text() -> str:
    """The JSON Schema of one agent reply object, as compact sorted text.

    Titles and descriptions are left out: they are the models' documentation, and the prompt
    should not change (nor old cassettes diverge) when only documentation does. Generated
    once per process (pydantic takes milliseconds to build it; the model does not change).
    """
    schema = _bare_schema(AgentEnvelope.model_json_schema())
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def _bare_schema(schema: Any, *, names: bool = False) -> Any:
    """``schema`` without ``title``/``description`` keywords (property names are kept)."""
    if isinstance(schema, Mapping):
        return {k: _bare_schema(v, names=k in ("properties", "$defs"))
                for k, v in schema.items()
                if names or k not in ("title", "description")}
    if isinstance(schema, list):
        return [_bare_schema(v) for v in schema]
    return schema


ROUTER_SYSTEM_PROMPT = """\
You route the messages of an incident-diagnosis chat service. Read the user's query, the \
recent history and the previous diagnosis, and choose exactly one intent:
- "DIAGNOSIS": the user wants a problem in a running system investigated with tools.
- "KNOWLEDGE_QUERY": the user asks a question the documentation answers.
- "SYSTEM_CHAT": greetings, thanks, questions about the service itself, anything else.
Reply with one JSON object and nothing else: {"intent": "DIAGNOSIS"}."""

SYSTEM_CHAT_PROMPT = """\
You are the conversational front of an incident-diagnosis service. Answer briefly and \
politely in plain text. Do not claim to have investigated anything."""

KNOWLEDGE_SYSTEM_PROMPT = """\
You answer questions from the knowledge passages given below the question. Use only what \
the passages say; when they do not answer it, say so. Answer in plain text."""

DIAGNOSIS_SYSTEM_PROMPT = """\
You are the diagnosis agent of an incident-diagnosis service. Investigate the user's \
problem with the read-only tools you are given and finish with a diagnosis draft.

Rules for every reply:
1. A reply is either one tool call or one JSON object with the keys "progress" and/or \
"draft"; never a tool call and a draft together. Call at most one tool per reply.
2. Beside a tool call you may put {"progress": {...}} in the message content.
3. After every tool result, report progress in your next reply: {"progress": \
{"assessment": "GAINED" or "NO_GAIN", "facts": [{"statement": "...", "citations": \
["<invocation_id>"]}], "missing_info": ["..."], "next": "..."}}. Give "assessment" when \
the tool result says needs_assessment is true.
4. Cite only invocation_id values of tool results whose status is READY.
5. To finish, reply {"draft": {...}}: a "conclusion" backed by "evidence" \
[{"invocation_id": "...", "claim": "..."}], optionally "recommendations"; or, without a \
conclusion, the verified "findings" and the "missing_info" you would need.
6. When the harness says STOP_REQUIRED, call no more tools and write the draft now.

The JSON Schema of a reply object:
"""

_TIMING_FIELDS = frozenset({"started_at", "finished_at"})

STOP_REQUIRED_NOTE = "STOP_REQUIRED: collection is saturated; call no tool, write your draft now"
"""The note sent when the harness requires the agent to stop and no notice says so already."""

GUARD_SYSTEM_PROMPT = """\
You check a diagnosis before it is published. Given the user's query, the draft and the \
tool records it cites, decide whether the cited evidence supports the conclusion. Reply \
with one JSON object and nothing else: {"supported": true or false, "rationale": "one \
sentence"}."""

REPAIR_SYSTEM_PROMPT = """\
You repair the evidence of a diagnosis draft. The evidence check found the problems listed; \
rewrite the draft's "evidence" so that it cites only the citable invocation ids given, and \
keep the conclusion. Reply with one JSON object and nothing else: {"draft": {...}} in the \
same shape as the draft you were given."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and the JSON Schema of its scope."""

    name: str
    description: str
    parameters_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}})

    def function_definition(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": data(self.parameters_schema)}}


class OpenAIDiagnosisModel:
    """A DiagnosisModel: one chat completion per ReAct step, with function-calling tools.

    The harness hands each step only the observations since the previous one, so the adapter
    keeps each run's conversation (keyed by ``run_id``, restarted at step 1): the system
    prompt, the query, its own earlier replies, every tool result as a ``tool`` message
    answering its call id, and harness notes (a notice, STOP_REQUIRED) as user messages.
    Only the tools the request offers are sent. When the model asks for several tools at
    once, the first is taken (the harness runs one per step) and only it is kept in the
    conversation. A call without an id gets ``call_<step>``, as the harness needs unique ids.
    """

    def __init__(self, client: OpenAICompatibleClient, tools: Sequence[ToolSpec], *,
                 system_prompt: str | None = None, json_mode: bool = True) -> None:
        self.client = client
        self.tools = {spec.name: spec for spec in tools}
        self.system_prompt = (system_prompt if system_prompt is not None
                              else DIAGNOSIS_SYSTEM_PROMPT + envelope_schema_text())
        self.json_mode = json_mode
        self.conversations: dict[str, list[dict[str, Any]]] = {}

    def step(self, request: AgentRequest) -> ModelReply:
        """Send the conversation so far plus this step's news; return the model's reply."""
        messages = self._conversation(request)
        messages.extend(self._news(request))
        offered = [self.tools[name].function_definition() for name in request.tools
                   if name in self.tools]
        completion = self.client.complete(messages, tools=offered or None,
                                          json_output=self.json_mode)
        reply, own = self._reply(completion, request.step)
        messages.append(own)
        return reply

    def _conversation(self, request: AgentRequest) -> list[dict[str, Any]]:
        if request.step <= 1 or request.run_id not in self.conversations:
            self.conversations[request.run_id] = [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": _query_message(request.query,
                                                           request.previous_turn)},
            ]
        return self.conversations[request.run_id]

    def _news(self, request: AgentRequest) -> list[dict[str, Any]]:
        messages = self.conversations[request.run_id]
        pending = _open_call_ids(messages)
        news: list[dict[str, Any]] = []
        for obs in request.observations:
            content = json_text(_observation(obs))
            if obs.call_id is not None and obs.call_id in pending:
                pending.discard(obs.call_id)
                news.append({"role": "tool", "tool_call_id": obs.call_id, "content": content})
            else:
                news.append({"role": "user", "content": f"Tool result: {content}"})
        notes = [request.notice] if request.notice else []
        if request.stop_required and not any("STOP_REQUIRED" in n for n in notes):
            notes.append(STOP_REQUIRED_NOTE)
        if notes:
            news.append({"role": "user", "content": "Harness: " + "\n".join(notes)})
        return news

    def _reply(self, completion: ChatCompletion, step: int) -> tuple[ModelReply, dict[str, Any]]:
        own: dict[str, Any] = {"role": "assistant", "content": completion.content}
        tool_call = None
        if completion.tool_calls:
            call = completion.tool_calls[0]
            call_id = call.id or f"call_{step}"
            tool_call = ToolCallRequest(call.name, dict(call.arguments), call_id)
            own["tool_calls"] = [{
                "id": call_id, "type": "function",
                "function": {"name": call.name, "arguments": json_text(call.arguments)}}]
        elif completion.content is None:
            own["content"] = ""
        reply = ModelReply(content=completion.content, tool_call=tool_call,
                           usage=completion.usage, latency_s=None)
        return reply, own


class _JsonAdapter:
    """An adapter asking for one JSON object: its system prompt (``system_prompt``, else the
    class's :attr:`PROMPT`), then the request as JSON text."""

    PROMPT = ""

    def __init__(self, client: OpenAICompatibleClient, *,
                 system_prompt: str | None = None) -> None:
        self.client = client
        self.system_prompt = self.PROMPT if system_prompt is None else system_prompt

    def _ask(self, user: Any) -> ChatCompletion:
        return self.client.complete([{"role": "system", "content": self.system_prompt},
                                     {"role": "user", "content": json_text(user)}],
                                    json_output=True)


class OpenAIRouter(_JsonAdapter):
    """A Router: the model answers ``{"intent": ...}`` in JSON mode.

    The intent is read case-insensitively; anything but an IntentType name is a
    ProviderError, as is a reply that is not a JSON object.
    """

    PROMPT = ROUTER_SYSTEM_PROMPT

    def route(self, request: RouteRequest) -> RouteReply:
        """Ask for the intent of ``request.query``."""
        completion = self._ask({
            "query": request.query, "history": [_turn(t) for t in request.history],
            "previous_turn": _previous(request.previous_turn)})
        raw = _json_object(completion, "router").get("intent")
        try:
            intent = IntentType(str(raw).strip().upper()) if isinstance(raw, str) else None
        except ValueError:
            intent = None
        if intent is None:
            names = ", ".join(i.value for i in IntentType)
            raise ProviderError(f"router returned unknown intent {raw!r} (expected one of "
                                f"{names})")
        return RouteReply(intent, usage=completion.usage, latency_s=None)


class OpenAIResponder:
    """A Responder: one plain-text completion for SYSTEM_CHAT or KNOWLEDGE_QUERY.

    Earlier turns become a user message and the model's answer; knowledge passages are numbered in a
    system message after the prompt. An empty answer is a ProviderError.
    """

    def __init__(self, client: OpenAICompatibleClient, *,
                 system_chat_prompt: str = SYSTEM_CHAT_PROMPT,
                 knowledge_prompt: str = KNOWLEDGE_SYSTEM_PROMPT) -> None:
        self.client = client
        self.system_chat_prompt = system_chat_prompt
        self.knowledge_prompt = knowledge_prompt

    def answer(self, request: AnswerRequest) -> AnswerReply:
        """Answer ``request.query``."""
        knowledge = request.intent is IntentType.KNOWLEDGE_QUERY
        messages: list[dict[str, Any]] = [
            {"role": "system",
             "content": self.knowledge_prompt if knowledge else self.system_chat_prompt}]
        if knowledge:
            numbered = "\n".join(f"[{i}] {p}" for i, p in enumerate(request.passages, 1))
            messages.append({"role": "system",
                             "content": f"Knowledge passages:\n{numbered or '(none)'}"})
        for turn in request.history:
            messages.append({"role": "user", "content": turn.query})
            if turn.answer:
                messages.append({"role": "assistant", "content": turn.answer})
        messages.append({"role": "user", "content": request.query})
        completion = self.client.complete(messages)
        text = (completion.content or "").strip()
        if not text:
            raise ProviderError("responder returned no text")
        return AnswerReply(text, usage=completion.usage, latency_s=None)


class OpenAISemanticGuard(_JsonAdapter):
    """A SemanticGuard: JSON ``{"supported": bool, "rationale": str}``.

    ``supported`` must be a JSON boolean and ``rationale`` (optional) a string; anything
    else is a ProviderError, which the harness treats as the guard being unavailable. The
    cited records are sent without their virtual timestamps (``started_at``,
    ``finished_at``): they mean nothing to the model, and leaving them out keeps a recording
    valid when only the scenario's latency settings change.
    """

    PROMPT = GUARD_SYSTEM_PROMPT

    def judge(self, request: GuardRequest) -> GuardReply:
        """Judge whether ``request.evidence`` supports ``request.draft``."""
        evidence = [{k: v for k, v in record.items() if k not in _TIMING_FIELDS}
                    for record in request.evidence]
        completion = self._ask({"query": request.query, "draft": request.draft,
                                "evidence": evidence})
        reply = _json_object(completion, "semantic guard")
        supported = reply.get("supported")
        rationale = "" if reply.get("rationale") is None else reply["rationale"]
        if not isinstance(supported, bool):
            raise ProviderError(f"semantic guard: 'supported' must be true or false, "
                                f"not {supported!r}")
        if not isinstance(rationale, str):
            raise ProviderError("semantic guard: 'rationale' must be a string")
        return GuardReply(supported, rationale, usage=completion.usage, latency_s=None)


class OpenAIRepair(_JsonAdapter):
    """An EvidenceRepair: the model rewrites the draft's evidence in JSON mode.

    The reply's content is handed to the harness as is (``{"draft": {...}}`` or a bare
    draft); the harness validates it and decides whether the repair worked.
    """

    PROMPT = REPAIR_SYSTEM_PROMPT

    def repair(self, request: RepairRequest) -> ModelReply:
        """Ask for the draft with repaired evidence."""
        completion = self._ask({
            "query": request.query, "draft": request.draft, "problems": list(request.problems),
            "citable_invocation_ids": list(request.citable)})
        return ModelReply(content=completion.content, usage=completion.usage, latency_s=None)


def openai_providers(client: OpenAICompatibleClient, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The model-like components of a harness on one client, as ``Components`` keywords.

    ``Components(**openai_providers(client, specs), retriever=..., tools=...)``: router,
    diagnosis model, semantic guard, evidence repair and responder; the retriever and the
    tools are the caller's (a fake retriever, HttpJsonTools named like ``tools``).
    """
    return {"router": OpenAIRouter(client), "model": OpenAIDiagnosisModel(client, tools),
            "guard": OpenAISemanticGuard(client), "repair": OpenAIRepair(client),
            "responder": OpenAIResponder(client)}


def _json_object(completion: ChatCompletion, who: str) -> Mapping[str, Any]:
    text = completion.content
    if text is None or not text.strip():
        raise ProviderError(f"{who} returned no content")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProviderError(f"{who} reply is not JSON: {text[:120]!r}") from exc
    if not isinstance(data, Mapping):
        raise ProviderError(f"{who} reply is not a JSON object")
    return data


def _query_message(query: str, previous: PreviousTurn | None) -> str:
    text = f"Query: {query}"
    if previous is not None:
        text += ("\n\nPrevious diagnosis in this conversation (run "
                 f"{previous.run_id}, query {previous.query!r}): "
                 f"{json_text(previous.published_result)}")
    return text


def _open_call_ids(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """Call ids of the model's last tool calls that no tool message answered yet."""
    open_ids: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            open_ids = {c["id"] for c in message.get("tool_calls", ())}
        elif message.get("role") == "tool":
            open_ids.discard(message.get("tool_call_id", ""))
    return open_ids


def _observation(obs: Observation) -> dict[str, Any]:
    body: dict[str, Any] = {"tool": obs.tool, "scope": obs.scope,
                            "invocation_id": obs.invocation_id, "status": obs.status,
                            "evidence_status": obs.evidence_status, "items": list(obs.items),
                            "needs_assessment": obs.needs_assessment}
    if obs.error is not None:
        body["error"] = obs.error
    return body


def _turn(turn: Turn) -> dict[str, Any]:
    return {"query": turn.query, "intent": turn.intent, "answer": turn.answer}


def _previous(previous: PreviousTurn | None) -> dict[str, Any] | None:
    if previous is None:
        return None
    return {"query": previous.query, "conclusion": previous.conclusion}

