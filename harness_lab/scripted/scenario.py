"""A scenario's scripted providers answering HTTP requests, faults and latencies included.

:class:`ScriptedProviders` holds one scenario's fakes (built by the scenario runner's own
``build_components``) behind its :class:`~harness_lab.scripted.inject.FaultPlan`, so a
provider-side fault (a provider error, a latency spike, an invalid draft, a protocol
violation, a failing tool...) is decided by the same code as in a simulated run. Each request
is decoded from the shape the adapters send (:mod:`harness_lab.recorded.adapters`,
:class:`~harness_lab.recorded.tool.HttpJsonTool`) into the harness's request type, played,
and the reply encoded back: a chat completion, ``{"items": [...]}``, an HTTP error. The
adapters tell the chat callers apart by their system prompt, and so does this class.

The scripted latency of a call (its reply's, else the scenario's default for its kind) is
returned with the answer for the server to really sleep, scaled by ``time_scale``.
:func:`load_script` reads the scenario (one variant of it) from a file or from YAML text.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_lab.application.intercept import intercepted
from harness_lab.errors import ProviderError, ScriptExhausted, ToolExecutionError
from harness_lab.harness import nth_run_id
from harness_lab.ports import (
    AgentRequest,
    AnswerRequest,
    CallKind,
    GuardRequest,
    ModelReply,
    Observation,
    RepairRequest,
    RetrievalRequest,
    RouteRequest,
    ToolInput,
    ToolOutput,
)
from harness_lab.recorded import adapters as prompts
from harness_lab.scenarios.discovery import SelectionError, load_scenario
from harness_lab.scenarios.spec import Scenario
from harness_lab.scripted.answer import (
    CHAT_PATH,
    RETRIEVER_PATH,
    TOOL_PREFIX,
    Answer,
    chat_completion,
    error_response,
)
from harness_lab.scripted.build import ScenarioLatency, build_tools
from harness_lab.scripted.inject import FaultPlan
from harness_lab.states import IntentType

__all__ = ["ScriptError", "ScriptedProviders", "classify_chat", "load_script"]

_INVOCATION = re.compile(r"^(.+)-inv-\d+$")
_CHAT_KINDS: tuple[tuple[str, CallKind], ...] = (
    (prompts.ROUTER_SYSTEM_PROMPT, CallKind.ROUTER),
    (prompts.GUARD_SYSTEM_PROMPT, CallKind.GUARD),
    (prompts.REPAIR_SYSTEM_PROMPT, CallKind.REPAIR),
    (prompts.DIAGNOSIS_SYSTEM_PROMPT, CallKind.MODEL),
    (prompts.SYSTEM_CHAT_PROMPT, CallKind.RESPONDER),
    (prompts.KNOWLEDGE_SYSTEM_PROMPT, CallKind.RESPONDER),
)


class ScriptError(ValueError):
    """A script that cannot be loaded; the message names the file, field and line."""


def load_script(path: str | Path | None, content: str | None, variant: str | None
                ) -> Scenario:
    """The scenario of a file (or of YAML text), one variant of it; ScriptError otherwise."""
    try:
        return load_scenario(path, variant, content=content)[0]
    except SelectionError as exc:
        raise ScriptError(str(exc)) from None


def classify_chat(messages: Sequence[Any]) -> CallKind | None:
    """Which caller sent a chat completion, from its system prompt (None: not one of ours)."""
    first = messages[0] if messages else None
    text = first.get("content") if isinstance(first, Mapping) else None
    if not isinstance(text, str):
        return None
    return next((kind for prompt, kind in _CHAT_KINDS if text == prompt
                 or (kind is CallKind.MODEL and text.startswith(prompt))), None)


def _json_object(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _run_id_in(values: Any) -> str | None:
    """The run id an invocation id such as ``<run>-inv-3`` names, anywhere in ``values``."""
    if isinstance(values, str):
        m = _INVOCATION.match(values)
        return m.group(1) if m else None
    if isinstance(values, Mapping):
        values = list(values.values())
    if not isinstance(values, list | tuple):
        return None
    return next((found for v in values if (found := _run_id_in(v)) is not None), None)


class ScriptedProviders:
    """One scenario's providers (or one of its earlier ``turns``'), answering HTTP bodies.

    Thread-safe: the fakes are played under one lock (a script is a sequence), the sleeping
    is the server's. ``run_id`` is the run whose ``inv-N`` references a reply expands when the
    request itself names no invocation (set by a driver from the run's ``metadata`` event).
    """

    def __init__(self, scenario: Scenario, *, turn: int | None = None) -> None:
        from harness_lab.runner.run import build_components

        self.scenario = scenario
        self.turn = turn
        tools = build_tools(scenario.tools)
        source = scenario.turns[turn] if turn is not None else None
        components = build_components(scenario, tools, source)
        self.plan = FaultPlan(scenario.faults) if scenario.faults and turn is None else None
        self.components = (intercepted(components, self.plan) if self.plan is not None
                           else components)
        if self.plan is not None:
            self.plan.projection_limit = scenario.config.projection_max_bytes
        self.latency = ScenarioLatency.from_spec(scenario.latency)
        self.run_id = ""
        self._lock = threading.Lock()

    # -- dispatch ---------------------------------------------------------------------------

    def serves(self, path: str) -> bool:
        """Whether ``path`` is the chat path, the retriever or one of the scenario's tools."""
        return path in (CHAT_PATH, RETRIEVER_PATH) or (
            path.startswith(TOOL_PREFIX) and path[len(TOOL_PREFIX):] in self.components.tools)

    def answer(self, path: str, body: Mapping[str, Any]) -> Answer:
        """The answer to a POST of ``body`` (a decoded JSON object) to a path it serves."""
        with self._lock:
            if path == RETRIEVER_PATH:
                return self._retrieve(str(body.get("query") or ""))
            if path != CHAT_PATH:
                return self._tool(path[len(TOOL_PREFIX):], body)
            messages = body.get("messages")
            kind = classify_chat(messages) if isinstance(messages, list) else None
            if kind is None or not isinstance(messages, list):
                return error_response(400, "not a request of the harness's adapters (unknown "
                                           "system prompt)")
            return self._chat(kind, messages)

    def _chat(self, kind: CallKind, messages: list[Any]) -> Answer:
        c = self.components
        last = messages[-1].get("content")
        data = _json_object(last)  # what the router, guard and repair adapters send
        query = str(data.get("query", ""))
        try:
            if kind is CallKind.ROUTER:
                route = c.router.route(RouteRequest(query, (), None))
                return self._completion(kind, json.dumps({"intent": route.intent.value}),
                                        route.usage, route.latency_s)
            if kind is CallKind.GUARD:
                verdict = c.guard.judge(GuardRequest(self._run_of(data), query,
                                                     dict(data.get("draft") or {}),
                                                     tuple(data.get("evidence") or ())))
                text = json.dumps({"supported": verdict.supported,
                                   "rationale": verdict.rationale})
                return self._completion(kind, text, verdict.usage, verdict.latency_s)
            if kind is CallKind.REPAIR:
                reply = c.repair.repair(RepairRequest(
                    self._run_of(data), query, dict(data.get("draft") or {}),
                    tuple(data.get("problems") or ()),
                    tuple(data.get("citable_invocation_ids") or ())))
                return self._model_completion(kind, reply)
            if kind is CallKind.MODEL:
                return self._model_completion(kind, c.model.step(self._agent_request(messages)))
            knowledge = messages[0].get("content") == prompts.KNOWLEDGE_SYSTEM_PROMPT
            intent = IntentType.KNOWLEDGE_QUERY if knowledge else IntentType.SYSTEM_CHAT
            answer = c.responder.answer(AnswerRequest(intent, str(last or ""), ()))
            return self._completion(kind, answer.text, answer.usage, answer.latency_s)
        except ProviderError as exc:
            return error_response(exc.status or 503, str(exc),
                                  latency_s=self.latency.latency(kind, "", exc.latency_s))
        except ScriptExhausted as exc:
            return error_response(500, f"script exhausted: {exc}")

    def _completion(self, kind: CallKind, content: str | None, usage: Any,
                    latency_s: float | None, tool_call: Any = None) -> Answer:
        calls: list[dict[str, Any]] = []
        if tool_call is not None:
            calls.append({"type": "function", "function": {
                "name": tool_call.name,
                "arguments": json.dumps(dict(tool_call.scope), sort_keys=True)}})
            if tool_call.call_id is not None:
                calls[0]["id"] = tool_call.call_id
        body = chat_completion(content, calls, (usage.input_tokens, usage.output_tokens),
                               completion_id="chatcmpl-scripted", model="scripted")
        return Answer(200, body, latency_s=self.latency.latency(kind, "", latency_s))

    def _model_completion(self, kind: CallKind, reply: ModelReply) -> Answer:
        content = (json.dumps(reply.payload, sort_keys=True) if reply.payload is not None
                   else self._live_ids(reply.content))
        return self._completion(kind, content, reply.usage, reply.latency_s, reply.tool_call)

    def _live_ids(self, text: str | None) -> str | None:
        """A scripted text reply with the simulated run's invocation ids
        (``run-000001-inv-2``, known before the run) naming the served run's instead, as a
        scripted draft's ``inv-N`` does: raw text is written against the simulation."""
        if not text or not self.run_id:
            return text
        turn = self.turn if self.turn is not None else len(self.scenario.turns)
        return text.replace(f"{nth_run_id(turn + 1)}-inv-", f"{self.run_id}-inv-")

    def _agent_request(self, messages: list[Any]) -> AgentRequest:
        own = [i for i, m in enumerate(messages)
               if isinstance(m, Mapping) and m.get("role") == "assistant"]
        step, last = 1 + len(own), max(own, default=1)
        observations = []
        for m in messages[last + 1:]:
            if not isinstance(m, Mapping):
                continue
            text = m.get("content")
            if m.get("role") == "user" and isinstance(text, str):
                if not text.startswith("Tool result: "):
                    continue
                text = text[len("Tool result: "):]
            elif m.get("role") != "tool":
                continue
            data = _json_object(text)
            observations.append(Observation(
                m.get("tool_call_id"), str(data.get("tool", "")), data.get("scope") or {},
                data.get("invocation_id"), None, None))
        run_id = self._run_of([o.invocation_id for o in observations]
                              + [m.get("content") for m in messages if isinstance(m, Mapping)
                                 and m.get("role") == "tool"])
        query = messages[1].get("content", "") if len(messages) > 1 else ""
        return AgentRequest(run_id, str(query), step, tuple(observations),
                            tuple(self.components.tools))

    def _run_of(self, data: Any) -> str:
        found = _run_id_in(data)
        if found is None and isinstance(data, list):  # JSON texts: tool results
            found = _run_id_in([_json_object(text) for text in data])
        if found is not None:
            self.run_id = found
        return found or self.run_id

    def _tool(self, name: str, scope: Mapping[str, Any]) -> Answer:
        tool = self.components.tools[name]
        try:
            output: ToolOutput = tool.invoke(ToolInput(self.run_id, "", name, dict(scope)))
        except ToolExecutionError as exc:
            latency = self.latency.latency(CallKind.TOOL, name, exc.latency_s)
            return error_response(500, str(exc), latency_s=latency)
        except ScriptExhausted as exc:
            return error_response(500, f"script exhausted: {exc}")
        latency = self.latency.latency(CallKind.TOOL, name, output.latency_s)
        if not output.projectable:
            return Answer(200, {"result": "not a list of items"}, latency_s=latency)
        return Answer(200, {"items": [dict(i) for i in output.items]}, latency_s=latency,
                      pad_to=output.size_bytes)

    def _retrieve(self, query: str) -> Answer:
        kind = CallKind.RETRIEVER
        try:
            reply = self.components.retriever.retrieve(RetrievalRequest(query))
        except ProviderError as exc:
            return error_response(exc.status or 503, str(exc),
                                  latency_s=self.latency.latency(kind, "", exc.latency_s))
        return Answer(200, {"passages": list(reply.passages)},
                      latency_s=self.latency.latency(kind, "", reply.latency_s))
