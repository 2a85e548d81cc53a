"""Turn scenario specs into scripted fakes, a configuration and a latency model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_lab.config import HarnessConfig, Policy
from harness_lab.core.budget import BudgetLimits
from harness_lab.errors import ProviderError
from harness_lab.fakes import (
    Evidence,
    NoEvidence,
    Oversize,
    ScriptedModel,
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    ScriptedTool,
    ToolFailure,
    Unprojectable,
)
from harness_lab.fakes.model import cites_relative, expand_ids
from harness_lab.fakes.tools import ToolBehaviour
from harness_lab.frozen import value_class
from harness_lab.ports import (
    AgentRequest,
    AnswerReply,
    CallKind,
    GuardReply,
    ModelReply,
    RepairRequest,
    RouteReply,
    TokenUsage,
    ToolCallRequest,
)
from harness_lab.scenarios.spec import (
    ConfigSpec,
    DraftSpec,
    GuardField,
    GuardStepSpec,
    LatencySpec,
    ModelStepSpec,
    ProgressSpec,
    RepairStepSpec,
    RouterField,
    RouteStepSpec,
    ToolResultSpec,
    ToolSpec,
    UsageSpec,
)
from harness_lab.states import SemanticVerdict

__all__ = ["ScenarioLatency", "build_config", "build_guard", "build_model", "build_repair",
           "build_router", "build_tools", "model_reply"]

_NO_USAGE = TokenUsage()


def _has_refs(spec: ModelStepSpec) -> bool:
    return cites_relative(spec.model_dump(mode="json"))


def _usage(spec: UsageSpec | None) -> TokenUsage:
    return _NO_USAGE if spec is None else TokenUsage(spec.input, spec.output)


def _progress(spec: ProgressSpec) -> dict[str, Any]:
    return spec.model_dump(mode="json", exclude_defaults=True)


def _draft(spec: DraftSpec) -> dict[str, Any]:
    return spec.model_dump(mode="json", exclude_defaults=True)


def model_reply(step: ModelStepSpec, run_id: str) -> ModelReply | ProviderError:
    """The reply (or provider error) one model step plays in run ``run_id``."""
    usage, latency = _usage(step.usage), step.latency_s
    if step.error is not None:
        return ProviderError(step.error, latency_s=latency)
    if step.invalid_json is not None:
        return ModelReply(content=step.invalid_json, usage=usage, latency_s=latency)
    if step.empty:
        return ModelReply(usage=usage, latency_s=latency)
    payload: dict[str, Any] = {}
    if step.schema_invalid is not None:
        payload["draft"] = step.schema_invalid
    if step.draft is not None:
        payload["draft"] = _draft(step.draft)
    if step.report is not None:
        payload["progress"] = _progress(step.report)
    if step.progress is not None:
        payload["progress"] = _progress(step.progress)
    tool_call = (ToolCallRequest(step.tool, expand_ids(step.scope, run_id), step.call_id)
                 if step.tool is not None else None)
    return ModelReply(payload=expand_ids(payload, run_id) if payload else None,
                      tool_call=tool_call, usage=usage, latency_s=latency)


_RUN = "@@RUN@@"  # stands for the run id in a step's template

Fill = Callable[[str], Any]
"""Builds one value of a step's template for a run id."""


def _filler(value: Any) -> Fill | None:
    """A function building ``value`` for a run id, or None when no part of it names the run.

    Only the strings naming the run and the lists and dicts holding them are built per run;
    every other part is the template's own (immutable by use, as a static step's reply is).
    """
    if isinstance(value, str):
        if _RUN not in value:
            return None
        head, _, tail = value.partition(_RUN)
        if _RUN in tail:
            return lambda run_id: value.replace(_RUN, run_id)
        return lambda run_id: f"{head}{run_id}{tail}"
    if isinstance(value, list):
        items = [(_filler(v), v) for v in value]
        if all(f is None for f, _ in items):
            return None
        return lambda run_id: [v if f is None else f(run_id) for f, v in items]
    if isinstance(value, dict):
        entries = [(k, _filler(v), v) for k, v in value.items()]
        if all(f is None for _, f, _ in entries):
            return None
        return lambda run_id: {k: v if f is None else f(run_id) for k, f, v in entries}
    return None


class _StepPlayer:
    """A scripted step whose invocation ids expand for the run that plays it.

    A step citing no ``inv-N`` id is the same for every run and is built once; one citing
    ids is built once with a placeholder for the run id and compiled into fill functions,
    cheaper than walking the spec again for every run.
    """

    __slots__ = ("spec", "_static", "_base", "_payload", "_scope")

    def __init__(self, spec: ModelStepSpec) -> None:
        self.spec = spec
        static = None if _has_refs(spec) else model_reply(spec, "")
        self._static = static if isinstance(static, ModelReply) else None
        self._base: ModelReply | None = None
        self._payload: Fill | None = None
        self._scope: Fill | None = None
        if static is None:
            base = model_reply(spec, _RUN)
            if isinstance(base, ModelReply):
                self._base = base
                call = base.tool_call
                self._payload = _filler(base.payload)
                self._scope = _filler(call.scope) if call is not None else None

    def __call__(self, request: AgentRequest) -> ModelReply:
        if self._static is not None:
            return self._static
        base = self._base
        if base is None:
            reply = model_reply(self.spec, request.run_id)
            if isinstance(reply, ProviderError):
                try:
                    raise reply
                finally:  # no frame of the traceback may keep the error: see RunContext.call
                    del reply
            return reply
        run_id = request.run_id
        fill_payload, fill_scope = self._payload, self._scope
        call = base.tool_call
        if call is not None and fill_scope is not None:
            call = ToolCallRequest(call.name, fill_scope(run_id), call.call_id)
        return ModelReply(payload=base.payload if fill_payload is None else fill_payload(run_id),
                          tool_call=call, usage=base.usage, latency_s=base.latency_s)


_PLAYERS: dict[int, tuple[Sequence[ModelStepSpec], list[_StepPlayer]]] = {}


def build_model(steps: Sequence[ModelStepSpec], name: str = "model") -> ScriptedModel:
    """A fresh ScriptedModel playing the scenario's model steps.

    The step players are immutable and built once per list of step specs (a sweep builds a
    model per sample from the same specs).
    """
    cached = _PLAYERS.get(id(steps))
    if cached is None or cached[0] is not steps:
        if len(_PLAYERS) > 256:
            _PLAYERS.clear()
        cached = _PLAYERS[id(steps)] = (steps, [_StepPlayer(s) for s in steps])
    return ScriptedModel(cached[1], name=name)


def _script(spec: Any, step_type: type, convert: Callable[[Any], Any]) -> Any:
    """The script of a field written as a plain value, one step or a list of steps: steps
    ``convert``ed, a plain value as it is."""
    if isinstance(spec, list):
        return [convert(s) for s in spec]
    return convert(spec) if isinstance(spec, step_type) else spec


def build_router(spec: RouterField, name: str = "router") -> ScriptedRouter:
    """A ScriptedRouter from an intent, a step or a list of steps."""
    return ScriptedRouter(_script(spec, RouteStepSpec, _route), name=name)


def _route(spec: RouteStepSpec) -> RouteReply | ProviderError:
    if spec.error is not None:
        return ProviderError(spec.error, latency_s=spec.latency_s)
    assert spec.intent is not None
    return RouteReply(spec.intent, _usage(spec.usage), spec.latency_s)


def build_guard(spec: GuardField, name: str = "guard") -> ScriptedSemanticGuard:
    """A ScriptedSemanticGuard from a verdict, a step or a list of steps."""
    return ScriptedSemanticGuard(_script(spec, GuardStepSpec, _verdict), name=name)


def _verdict(spec: GuardStepSpec) -> GuardReply | ProviderError:
    if spec.verdict is SemanticVerdict.UNAVAILABLE:
        return ProviderError("semantic guard unavailable", latency_s=spec.latency_s)
    return GuardReply(spec.verdict is SemanticVerdict.SUPPORTED, spec.rationale,
                      _usage(spec.usage), spec.latency_s)


class _RepairPlayer:
    __slots__ = ("spec",)

    def __init__(self, spec: RepairStepSpec) -> None:
        self.spec = spec

    def __call__(self, request: Any) -> ModelReply:
        s = self.spec
        if s.error is not None:
            raise ProviderError(s.error, latency_s=s.latency_s)
        if s.invalid_json is not None:
            return ModelReply(content=s.invalid_json, usage=_usage(s.usage),
                              latency_s=s.latency_s)
        assert s.draft is not None
        return ModelReply(payload={"draft": expand_ids(_draft(s.draft), request.run_id)},
                          usage=_usage(s.usage), latency_s=s.latency_s)


class UnchangedRepair:
    """The repair of a scenario that scripts none: it returns the draft as it was.

    The recheck then finds the same problems, so the run takes the
    EVIDENCE_VALIDATION_FAILED path, as when a real repair cannot fix the evidence.
    """

    __test__ = False

    def __init__(self) -> None:
        self.requests: list[RepairRequest] = []

    def rewind(self) -> None:
        """Forget the recorded requests (a fresh run's repair)."""
        self.requests = []

    def repair(self, request: RepairRequest) -> ModelReply:
        """Echo the draft back."""
        self.requests.append(request)
        return ModelReply(payload={"draft": dict(request.draft)})


def build_repair(steps: Sequence[RepairStepSpec], name: str = "repair"
                 ) -> ScriptedRepair | UnchangedRepair:
    """A ScriptedRepair playing the scenario's repair steps (an unchanged echo if none)."""
    if not steps:
        return UnchangedRepair()
    return ScriptedRepair([_RepairPlayer(s) for s in steps], name=name)


def build_responder(text: str, error: str | None, latency_s: float | None,
                    usage: UsageSpec | None) -> ScriptedResponder:
    """The responder of SYSTEM_CHAT and KNOWLEDGE_QUERY answers."""
    step: AnswerReply | ProviderError = (
        ProviderError(error, latency_s=latency_s) if error is not None
        else AnswerReply(text, _usage(usage), latency_s))
    return ScriptedResponder(step)


def build_retriever(passages: Sequence[str], error: str | None,
                    latency_s: float | None) -> ScriptedRetriever:
    """The knowledge retriever."""
    if error is not None:
        return ScriptedRetriever(script=[ProviderError(error, latency_s=latency_s)])
    return ScriptedRetriever(tuple(passages), latency_s=latency_s)


def tool_behaviour(spec: ToolResultSpec, default_latency: float | None) -> ToolBehaviour:
    """The fake behaviour of one tool result spec."""
    latency = spec.latency_s if spec.latency_s is not None else default_latency
    if spec.evidence is not None:
        return Evidence(tuple(spec.evidence), size_bytes=spec.bytes, latency_s=latency)
    if spec.no_evidence:
        return NoEvidence(latency_s=latency, size_bytes=spec.bytes or 0)
    if spec.error is not None:
        return ToolFailure(spec.error, latency_s=latency)
    if spec.oversize is not None:
        return Oversize(spec.oversize, latency_s=latency)
    return Unprojectable(latency_s=latency)


_BEHAVIOURS: dict[int, tuple[ToolSpec, Any, list[Any], list[Any]]] = {}


def _behaviours(name: str, spec: ToolSpec) -> tuple[Any, list[Any], list[Any]]:
    """The (immutable) behaviours of one tool spec, built once per spec object."""
    cached = _BEHAVIOURS.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1], cached[2], cached[3]
    lat = spec.latency_s
    default = (tool_behaviour(spec.default, lat) if spec.default is not None
               else None if spec.script or spec.by_scope
               else Evidence(({"tool": name, "line": "evidence"},), latency_s=lat))
    by_scope = [(s.scope, [tool_behaviour(r, lat) for r in s.result]
                 if isinstance(s.result, list) else tool_behaviour(s.result, lat))
                for s in spec.by_scope]
    script = [tool_behaviour(r, lat) for r in spec.script]
    if len(_BEHAVIOURS) > 1024:
        _BEHAVIOURS.clear()
    _BEHAVIOURS[id(spec)] = (spec, default, by_scope, script)
    return default, by_scope, script


def build_tools(specs: Mapping[str, ToolSpec]) -> dict[str, ScriptedTool]:
    """Fresh scripted tools by name (their scripts start from the first step)."""
    tools: dict[str, ScriptedTool] = {}
    for name, spec in specs.items():
        default, by_scope, script = _behaviours(name, spec)
        tools[name] = ScriptedTool(name, script or None, by_scope=by_scope or None,
                                   default=default, read_only=spec.read_only,
                                   evidence=spec.evidence, required=tuple(spec.required))
    return tools


def build_config(spec: ConfigSpec) -> HarnessConfig:
    """The HarnessConfig of a scenario."""
    b = spec.budget
    p = spec.policy
    return HarnessConfig(
        budget=BudgetLimits(b.model_calls, b.tool_calls, b.tokens, b.bytes),
        deadline_s=spec.deadline_s, no_gain_threshold=spec.no_gain_threshold,
        protocol_violation_threshold=spec.protocol_violation_threshold,
        history_limit=spec.history_limit, projection_max_items=spec.projection_max_items,
        projection_max_bytes=spec.projection_max_bytes,
        authorized_tools=(frozenset(spec.authorized_tools)
                          if spec.authorized_tools is not None else None),
        policy=Policy(p.timeout_progress_fallback, p.user_cancel_notice,
                      p.require_progress_reports, p.deadline_detection),
        defects=frozenset(spec.defects))


@dataclass(frozen=True, slots=True)
class ScenarioLatency:
    """Latency when a reply carries none: the scenario's default for the call kind.

    Recorded (cassette) calls carry no timing, so they always take these defaults.
    """

    defaults: Mapping[CallKind, float]

    @classmethod
    def from_spec(cls, spec: LatencySpec) -> ScenarioLatency:
        """From the scenario's ``latency`` block."""
        return cls({CallKind(k): v for k, v in spec.model_dump().items()})

    def latency(self, kind: CallKind, name: str, reply_latency: float | None) -> float:
        """The reply's own latency, else the default of its kind."""
        if reply_latency is not None:
            return reply_latency
        return self.defaults.get(kind, 0.0)


value_class(ScenarioLatency)  # see frozen.py
