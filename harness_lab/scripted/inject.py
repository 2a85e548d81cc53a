"""Fault injection: wrappers around the components, a boundary probe, an SSE hook, a ledger.

Every injected fault is counted when it fires, so a fault that points past the end of the run
is reported instead of silently doing nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness_lab.application.components import Components
from harness_lab.application.live import LiveRun
from harness_lab.core.budget import BudgetLimits
from harness_lab.core.context import Boundary, LatencyModel, RunContext
from harness_lab.errors import ProcessCrash, ProviderError, ToolExecutionError
from harness_lab.ports import (
    AgentRequest,
    AnswerReply,
    AnswerRequest,
    CallKind,
    DiagnosisModel,
    EvidenceRepair,
    GuardReply,
    GuardRequest,
    ModelReply,
    RepairRequest,
    Responder,
    RetrievalReply,
    RetrievalRequest,
    Retriever,
    Router,
    RouteReply,
    RouteRequest,
    SemanticGuard,
    Tool,
    ToolInput,
    ToolOutput,
)
from harness_lab.scenarios import faults as fs
from harness_lab.scenarios.faults import describe
from harness_lab.sse import ChatSseSession
from harness_lab.states import CancellationReason, SseEventKind
from harness_lab.tools.ledger import Ledger
from harness_lab.tools.records import CanonicalInvocation

if TYPE_CHECKING:
    from harness_lab.config import HarnessConfig
    from harness_lab.harness import Harness, RunHandle

__all__ = ["FaultPlan"]


class FaultPlan:
    """The faults of one run and the wrapped components that carry them out."""

    def __init__(self, faults: Sequence[Any]) -> None:
        self.faults = list(faults)
        self.fired = [0] * len(self.faults)
        self.live: LiveRun | None = None
        self.calls: dict[str, int] = {}  # ordinal counters per call kind / tool
        self.projection_limit = 65_536  # the run's projection_max_bytes (set by the runner)
        self._tool_total = 0

    # -- bookkeeping ----------------------------------------------------------------------------

    def of(self, *types: type) -> list[tuple[int, Any]]:
        """(index, fault) pairs of the given types."""
        return [(i, f) for i, f in enumerate(self.faults) if isinstance(f, types)]

    def fire(self, index: int) -> None:
        """Count one firing of fault ``index``."""
        self.fired[index] += 1

    def count(self, key: str) -> int:
        """Increment and return the ordinal counter ``key``."""
        n = self.calls.get(key, 0) + 1
        self.calls[key] = n
        return n

    def unfired(self) -> list[tuple[int, str]]:
        """``(index, message)`` for every fault that never fired."""
        calls = sorted(self.addressable_calls().items())
        made = ", ".join(f"{k}={v}" for k, v in calls) or "none"
        return [(i, f"fault {i} {describe(f)} never fired: it points past the end of the run "
                    f"(calls made: {made})")
                for i, f in enumerate(self.faults) if not self.fired[i]]

    def addressable_calls(self) -> dict[str, int]:
        """The calls made so far, counted as ``at:`` addresses them.

        ``router``, ``model``, ``guard``... per call kind, ``tool`` for every tool call and
        ``tool:NAME`` per tool; the plan's own bookkeeping counters are left out.
        """
        kinds = {k.value for k in CallKind} - {CallKind.TOOL.value}
        made = {k: v for k, v in self.calls.items() if k in kinds or k.startswith("tool:")}
        if self._tool_total:
            made["tool"] = self._tool_total
        return made

    # -- putting the plan into a harness --------------------------------------------------------

    def configure(self, config: HarnessConfig, tools: Sequence[str]) -> HarnessConfig:
        """The run's configuration with the configuration-level faults applied."""
        self.projection_limit = config.projection_max_bytes
        return config.with_(budget=self.budget_limits(config.budget),
                            deadline_s=self.deadline_s(config.deadline_s),
                            authorized_tools=self.authorized(tools, config.authorized_tools))

    def install(self, harness: Harness, components: Components, config: HarnessConfig,
                latency: LatencyModel | None) -> Components:
        """Prepare the harness's next run to go through this plan's wrappers, probe and hooks.

        ``config`` is the run's configuration (see :meth:`configure`), ``latency`` its
        latency model. Returns the wrapped components the run will call.
        """
        wrapped = self.wrap(components)
        harness.prepare(wrapped, config, ledger=self.ledger(), latency=latency, probe=self,
                        before_send=self.before_send)
        return wrapped

    def arm(self, harness: Harness, handle: RunHandle) -> None:
        """Schedule the timed faults of the submitted run ``handle``."""
        self.live = handle.live
        start = harness.env.now
        for kind, action in ((fs.ClientDisconnect, handle.live.disconnect),
                             (fs.UserCancel, handle.live.user_cancel)):
            for index, at_s in self.timed(kind):
                harness.at(handle, start + at_s, self._firing(index, action))

    def _firing(self, index: int, action: Callable[[], Any]) -> Callable[[], None]:
        def fire_then_act() -> None:
            self.fire(index)
            action()

        return fire_then_act

    # -- configuration-level faults -------------------------------------------------------------

    def budget_limits(self, limits: BudgetLimits) -> BudgetLimits:
        """Budgets exhausted from the start (a budget fault without ``at``)."""
        for i, f in self.of(fs.BudgetExhausted):
            if f.at is None:
                limits = dataclasses.replace(limits, **{f.budget: 0})
                self.fire(i)
        return limits

    def deadline_s(self, deadline_s: float) -> float:
        """The deadline of a ``deadline`` fault given in seconds."""
        for i, f in self.of(fs.Deadline):
            if f.at_s is not None:
                deadline_s = f.at_s
                self.fire(i)
        return deadline_s

    def authorized(self, tools: Sequence[str], current: frozenset[str] | None
                   ) -> frozenset[str] | None:
        """The authorised tools once AUTH rejections are applied (they hold from the start)."""
        denied = set()
        for i, f in self.of(fs.ToolRejection):
            if f.reason == "AUTH":
                denied.add(f.tool)
                self.fire(i)
        if not denied:
            return current
        base = set(current) if current is not None else set(tools)
        return frozenset(base - denied)

    def timed(self, kind: type) -> list[tuple[int, float]]:
        """(index, at_s) of timed faults of ``kind``."""
        return [(i, f.at_s) for i, f in self.of(kind) if getattr(f, "at_s", None) is not None]

    # -- wrapping -------------------------------------------------------------------------------

    def wrap(self, c: Components) -> Components:
        """The components with every fault of this plan wrapped around them."""
        tools = {name: _FaultyTool(t, self) for name, t in c.tools.items()}
        return Components(router=_FaultyRouter(c.router, self),
                          model=_FaultyModel(c.model, self),
                          guard=_FaultyGuard(c.guard, self), repair=_FaultyRepair(c.repair, self),
                          responder=_FaultyResponder(c.responder, self),
                          retriever=_FaultyRetriever(c.retriever, self), tools=tools)

    def ledger(self) -> Ledger:
        """A canonical ledger refusing the begins and completions the faults ask for."""
        return _FaultyLedger(self)

    def provider(self, call: str, n: int) -> ProviderError | None:
        """The provider error to raise at the ``n``-th ``call``, if any."""
        for i, f in self.of(fs.ProviderFault):
            if f.call == call and f.n == n:
                self.fire(i)
                return ProviderError(f"{f.message} (injected)", latency_s=f.latency_s)
        return None

    def raise_provider(self, call: str, n: int) -> None:
        """Raise the provider error injected at the ``n``-th ``call``, if any.

        No frame keeps the raised error in a variable: its traceback holds the frames, and a
        frame holding the error would keep both (and the run) alive until the collector ran.
        """
        error = self.provider(call, n)
        if error is not None:
            try:
                raise error
            finally:
                del error

    def spike(self, call: CallKind, n: int, tool: str | None = None,
              total: int | None = None) -> float | None:
        """The spiked latency of the ``n``-th call, if any.

        For tools, ``n`` counts the calls of ``tool`` and ``total`` every tool call of the
        run: a spike naming a tool uses the first, one that does not the second.
        """
        for i, f in self.of(fs.LatencySpike):
            ordinal = total if (f.tool is None and total is not None) else n
            if f.call is call and f.n == ordinal and (f.tool is None or f.tool == tool):
                self.fire(i)
                return float(f.latency_s)
        return None

    # -- the probe and the SSE hook -------------------------------------------------------------

    def at_boundary(self, ctx: RunContext, b: Boundary) -> None:
        """BoundaryProbe: act on every fault located at this boundary."""
        for i, f in enumerate(self.faults):
            at = getattr(f, "at", None)
            if at is None or at.when != b.when or at.call is not b.kind:
                continue
            if at.tool is not None:
                if b.name != at.tool or b.name_ordinal != at.n:
                    continue
            elif b.ordinal != at.n:
                continue
            self.fire(i)
            self._act(f, ctx)

    def _act(self, f: Any, ctx: RunContext) -> None:
        live = self.live
        if isinstance(f, fs.ClientDisconnect) and live is not None:
            live.disconnect()
        elif isinstance(f, fs.UserCancel):
            ctx.cancel(CancellationReason.USER_REQUESTED, "user requested (injected)")
        elif isinstance(f, fs.Deadline):
            ctx.deadline_at = ctx.now
        elif isinstance(f, fs.BudgetExhausted):
            budget = ctx.budget
            used = getattr(budget, f.budget)
            budget.limits = dataclasses.replace(budget.limits, **{f.budget: used})
        elif isinstance(f, fs.Crash):
            raise ProcessCrash(f"injected crash {f.at.label()}")

    def before_send(self, session: ChatSseSession, k: int, kind: SseEventKind) -> None:
        """SSE hook: the send of the k-th event fails for a located client disconnect."""
        for i, f in self.of(fs.ClientDisconnect):
            if f.sse_event == k:
                self.fire(i)
                session.disconnect()

    # -- tool-level counters --------------------------------------------------------------------

    def next_tool_total(self) -> int:
        """The ordinal of this tool invocation among all tools."""
        self._tool_total += 1
        return self._tool_total


class _FaultyModel:
    __slots__ = ("inner", "plan", "requests")

    def __init__(self, inner: DiagnosisModel, plan: FaultPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.requests: list[AgentRequest] = []

    def step(self, request: AgentRequest) -> ModelReply:
        plan = self.plan
        n = plan.count("model")
        self.requests.append(request)
        plan.raise_provider("model", n)
        for i, f in plan.of(fs.InvalidDraft):
            if f.n == n:
                plan.fire(i)
                return _invalid(f.form)
        spike = plan.spike(CallKind.MODEL, n)
        reply = _spiked(lambda: self.inner.step(request), spike)
        reply = self._violate(reply, n, bool(request.observations))
        reply = self._bad_id(reply)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)

    def _violate(self, reply: ModelReply, n: int, owed: bool) -> ModelReply:
        for i, f in self.plan.of(fs.ProtocolViolation):
            if f.n <= n < f.n + f.count:
                if f.mode == "missing" and not owed:
                    continue  # no report was owed at this step: nothing to leave out
                self.plan.fire(i)
                payload = dict(reply.payload or {})
                if f.mode == "missing":
                    payload.pop("progress", None)
                elif f.mode == "invalid":
                    payload["progress"] = {"assessment": "MAYBE"}
                else:
                    payload["progress"] = {"assessment": "GAINED", "facts": [
                        {"statement": "unverifiable", "citations": ["no-such-invocation"]}]}
                return dataclasses.replace(reply, payload=payload or None)
        return reply

    def _bad_id(self, reply: ModelReply) -> ModelReply:
        call = reply.tool_call
        if call is None:
            return reply
        n = self.plan.count(f"request:{call.name}")
        for i, f in self.plan.of(fs.ToolRejection):
            if f.reason == "ID" and f.tool == call.name and f.n == n:
                self.plan.fire(i)
                return dataclasses.replace(reply, tool_call=dataclasses.replace(call, call_id=" "))
        return reply


def _spiked(call: Any, spike: float | None) -> Any:
    """Make the call; a spiked call that fails takes the spiked latency too."""
    try:
        return call()
    except (ProviderError, ToolExecutionError) as exc:
        if spike is not None:
            exc.latency_s = spike
        raise


def _invalid(form: str) -> ModelReply:
    if form == "invalid_json":
        return ModelReply(content="{this is not json")
    if form == "schema_invalid":
        return ModelReply(payload={"draft": {"conclusion": 42}})
    return ModelReply()


class _FaultyTool:
    __slots__ = ("inner", "plan", "name", "evidence", "read_only")

    def __init__(self, inner: Tool, plan: FaultPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.name = inner.name
        self.evidence = inner.evidence
        denied = any(f.reason == "READ_ONLY" and f.tool == inner.name
                     for _, f in plan.of(fs.ToolRejection))
        self.read_only = inner.read_only and not denied
        if denied:
            for i, f in plan.of(fs.ToolRejection):
                if f.reason == "READ_ONLY" and f.tool == inner.name:
                    plan.fire(i)  # a property of the tool: it holds from the start

    def validate(self, scope: Mapping[str, Any]) -> str | None:
        plan = self.plan
        n = plan.count(f"validate:{self.name}")
        for i, f in plan.of(fs.ToolRejection):
            if f.reason == "REQUEST" and f.tool == self.name and f.n == n:
                plan.fire(i)
                return f"tool {self.name!r}: request refused (injected invalid request)"
        return self.inner.validate(scope)

    def invoke(self, request: ToolInput) -> ToolOutput:
        plan = self.plan
        n = plan.count(f"tool:{self.name}")
        total = plan.next_tool_total()
        spike = plan.spike(CallKind.TOOL, n, self.name, total)
        for i, f in plan.of(fs.ToolError):
            if f.tool == self.name and f.n == n and f.error != "store":
                plan.fire(i)
                latency = f.latency_s if f.latency_s is not None else spike
                if f.error == "execution":
                    raise ToolExecutionError("backend failed (injected)",
                                             latency_s=latency)
                if f.error == "projection":
                    return ToolOutput((), latency_s=latency, projectable=False)
                size = plan.projection_limit + 1  # just past the projection limit
                return ToolOutput(({"line": "oversize"},), size_bytes=size, latency_s=latency)
        output = _spiked(lambda: self.inner.invoke(request), spike)
        for i, f in plan.of(fs.NoGainStreak):
            ordinal = n if f.tool is not None else total
            if (f.tool is None or f.tool == self.name) and f.n <= ordinal < f.n + f.count:
                plan.fire(i)
                output = dataclasses.replace(output, items=(), size_bytes=0)
        return output if spike is None else dataclasses.replace(output, latency_s=spike)


class _FaultyLedger:
    """A Ledger refusing the begins and completions the plan's faults ask for."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan

    def begin(self, record: CanonicalInvocation) -> bool:
        n = self.plan.count(f"begin:{record.tool}")
        for i, f in self.plan.of(fs.ToolRejection):
            if f.reason == "STORE" and f.tool == record.tool and f.n == n:
                self.plan.fire(i)
                return False
        return True

    def complete(self, record: CanonicalInvocation) -> bool:
        n = self.plan.count(f"complete:{record.tool}")
        for i, f in self.plan.of(fs.ToolError):
            if f.error == "store" and f.tool == record.tool and f.n == n:
                self.plan.fire(i)
                return False
        return True


class _FaultyRouter:
    __slots__ = ("inner", "plan", "requests")

    def __init__(self, inner: Router, plan: FaultPlan) -> None:
        self.inner, self.plan = inner, plan
        self.requests: list[RouteRequest] = []

    def route(self, request: RouteRequest) -> RouteReply:
        plan = self.plan
        n = plan.count("router")
        self.requests.append(request)
        for i, _ in plan.of(fs.RouterUnavailable):
            plan.fire(i)
            raise ProviderError("router unavailable (injected)")
        plan.raise_provider("router", n)
        spike = plan.spike(CallKind.ROUTER, n)
        reply = _spiked(lambda: self.inner.route(request), spike)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)


class _FaultyGuard:
    __slots__ = ("inner", "plan")

    def __init__(self, inner: SemanticGuard, plan: FaultPlan) -> None:
        self.inner, self.plan = inner, plan

    def judge(self, request: GuardRequest) -> GuardReply:
        plan = self.plan
        n = plan.count("guard")
        plan.raise_provider("guard", n)
        spike = plan.spike(CallKind.GUARD, n)
        for i, f in plan.of(fs.SemanticFault):
            if f.n == n:
                plan.fire(i)
                if f.verdict == "UNAVAILABLE":
                    raise ProviderError("semantic guard unavailable (injected)",
                                        latency_s=spike or 0.0)
                return GuardReply(False, "unsupported (injected)", latency_s=spike)
        reply = _spiked(lambda: self.inner.judge(request), spike)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)


class _FaultyRepair:
    __slots__ = ("inner", "plan")

    def __init__(self, inner: EvidenceRepair, plan: FaultPlan) -> None:
        self.inner, self.plan = inner, plan

    def repair(self, request: RepairRequest) -> ModelReply:
        plan = self.plan
        n = plan.count("repair")
        plan.raise_provider("repair", n)
        for i, f in plan.of(fs.RepairFailed):
            plan.fire(i)
            if f.form == "error":
                raise ProviderError("evidence repair failed (injected)")
            if f.form == "invalid_json":
                return ModelReply(content="{not a draft")
            bad = dict(request.draft)
            bad["evidence"] = [{"invocation_id": "no-such-invocation", "claim": "still wrong"}]
            return ModelReply(payload={"draft": bad})
        spike = plan.spike(CallKind.REPAIR, n)
        reply = _spiked(lambda: self.inner.repair(request), spike)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)


class _FaultyResponder:
    __slots__ = ("inner", "plan")

    def __init__(self, inner: Responder, plan: FaultPlan) -> None:
        self.inner, self.plan = inner, plan

    def answer(self, request: AnswerRequest) -> AnswerReply:
        n = self.plan.count("responder")
        self.plan.raise_provider("responder", n)
        spike = self.plan.spike(CallKind.RESPONDER, n)
        reply = _spiked(lambda: self.inner.answer(request), spike)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)


class _FaultyRetriever:
    __slots__ = ("inner", "plan")

    def __init__(self, inner: Retriever, plan: FaultPlan) -> None:
        self.inner, self.plan = inner, plan

    def retrieve(self, request: RetrievalRequest) -> RetrievalReply:
        n = self.plan.count("retriever")
        self.plan.raise_provider("retriever", n)
        spike = self.plan.spike(CallKind.RETRIEVER, n)
        reply = _spiked(lambda: self.inner.retrieve(request), spike)
        return reply if spike is None else dataclasses.replace(reply, latency_s=spike)
