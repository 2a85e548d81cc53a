"""Fault injection: a scenario's faults as one interceptor of the run's port calls (its
store's too), its boundary probe and its SSE send hook.

Every injected fault is counted when it fires, so a fault that points past the end of the run
is reported instead of silently doing nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness_lab.application.intercept import Proceed, compose
from harness_lab.application.live import LiveRun
from harness_lab.application.parts import RunParts
from harness_lab.core.context import Boundary, RunContext
from harness_lab.errors import ProcessCrash, ProviderError, StoreError, ToolExecutionError
from harness_lab.ports import AgentRequest, CallKind, GuardReply, ModelReply, ToolOutput
from harness_lab.scenarios import faults as fs
from harness_lab.scenarios.faults import StartConfiguration, describe, start_configuration
from harness_lab.sse import ChatSseSession
from harness_lab.states import CancellationReason, SseEventKind
from harness_lab.tools.records import CanonicalInvocation

if TYPE_CHECKING:
    from harness_lab.config import HarnessConfig
    from harness_lab.harness import Harness, RunHandle

__all__ = ["FaultPlan"]


class FaultPlan:
    """The faults of one run: an :class:`~harness_lab.application.intercept.Interceptor` of
    its port calls, its boundary probe and its SSE send hook.

    ``requests`` holds the router's and the diagnosis model's requests as the plan saw them,
    faulted calls included (a fault answering a call keeps it from the fake): what an
    observation's ``routing`` and ``agent_requests`` list.
    """

    def __init__(self, faults: Sequence[Any]) -> None:
        self.faults = list(faults)
        self.fired = [0] * len(self.faults)
        self.live: LiveRun | None = None
        self.calls: dict[str, int] = {}  # ordinal counters per call kind / tool
        self.projection_limit = 65_536  # the run's projection_max_bytes (set by configure)
        self.start = StartConfiguration()  # the faults holding from the start (configure)
        self.requests: dict[CallKind, list[Any]] = {CallKind.ROUTER: [], CallKind.MODEL: []}
        self._tool_total = 0
        self._of: dict[type, list[tuple[int, Any]]] = {}  # of() by one kind: asked at every call

    # -- bookkeeping ----------------------------------------------------------------------------

    def of(self, *types: type) -> list[tuple[int, Any]]:
        """(index, fault) pairs of the given types."""
        if len(types) != 1:
            return [(i, f) for i, f in enumerate(self.faults) if isinstance(f, types)]
        found = self._of.get(types[0])
        if found is None:
            found = self._of[types[0]] = [(i, f) for i, f in enumerate(self.faults)
                                          if isinstance(f, types[0])]
        return found

    def fire(self, index: int) -> None:
        """Count one firing of fault ``index``."""
        self.fired[index] += 1

    def hit(self, kind: type, applies: Callable[[Any], bool] = lambda f: True) -> Any:
        """The first fault of ``kind`` that ``applies``, counted as fired; None if none does."""
        for i, f in self.of(kind):
            if applies(f):
                self.fire(i)
                return f
        return None

    def count(self, key: str) -> int:
        """Increment and return the ordinal counter ``key``."""
        n = self.calls[key] = self.calls.get(key, 0) + 1
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

    # -- putting the plan into a run ------------------------------------------------------------

    def configure(self, config: HarnessConfig, tools: Sequence[str]) -> HarnessConfig:
        """The run's configuration with the faults holding from its start applied (they fire
        now); ``tools`` are the names of the run's tools."""
        start = self.start = start_configuration(self.faults, tools)
        for i in start.applied:
            self.fire(i)
        self.projection_limit = config.projection_max_bytes
        changes: dict[str, Any] = {}
        if start.deadline_s is not None:
            changes["deadline_s"] = start.deadline_s
        if start.exhausted:
            changes["budget"] = dataclasses.replace(config.budget,
                                                    **{b: 0 for b in start.exhausted})
        if start.unauthorized:
            changes["authorized_tools"] = frozenset(start.authorized(config.authorized_tools,
                                                                     tools))
        return config.with_(**changes) if changes else config

    def applied_to(self, parts: RunParts) -> RunParts:
        """``parts`` with this plan applied: their configuration as :meth:`configure` makes it
        (for their tools), the plan as their probe and send hook, and as their interceptor
        (around theirs, when they have one)."""
        config = self.configure(parts.config, list(parts.components.tools))
        return parts.with_(config=config, probe=self, before_send=self.before_send,
                           interceptor=compose(self, parts.interceptor))

    def arm(self, harness: Harness, handle: RunHandle) -> None:
        """Schedule the timed faults of the submitted run ``handle``; faults at one instant
        act in the order the scenario lists them."""
        live = self.live = handle.live
        start = harness.env.now
        for index, f in self.of(fs.ClientDisconnect, fs.UserCancel, fs.ServerShutdown):
            if f.at_s is not None:
                harness.at(handle, start + f.at_s, self._firing(index, _timed_action(f, live)))

    def _firing(self, index: int, action: Callable[[], Any]) -> Callable[[], None]:
        def fire_then_act() -> None:
            self.fire(index)
            action()

        return fire_then_act

    # -- the interceptor: what each call of the run returns --------------------------------------

    def call(self, kind: CallKind, name: str, request: Any, proceed: Proceed) -> Any:
        """A provider call or a tool's invoke, with the faults that hit it."""
        if kind is CallKind.TOOL:
            return self._invoke(name, request, proceed)
        n = self.count(kind.value)
        seen = self.requests.get(kind)
        if seen is not None:
            seen.append(request)
        if kind is CallKind.ROUTER and self.hit(fs.RouterUnavailable) is not None:
            raise ProviderError("router unavailable (injected)")
        self.raise_provider(kind.value, n)
        if kind is CallKind.MODEL:
            return self._step(n, request, proceed)
        if kind is CallKind.GUARD:
            return self._judge(n, request, proceed)
        failed = self.hit(fs.RepairFailed) if kind is CallKind.REPAIR else None
        if failed is not None:
            return _failed_repair(failed.form, request.draft)
        return _spiked(proceed, request, self.spike(kind, n))

    def validate(self, tool: str, scope: Mapping[str, Any],
                 proceed: Callable[[Mapping[str, Any]], str | None]) -> str | None:
        """The tool's check of a scope, refused at an injected invalid request."""
        n = self.count(f"validate:{tool}")
        if self.hit(fs.ToolRejection,
                    lambda f: f.reason == "REQUEST" and f.tool == tool and f.n == n) is not None:
            return f"tool {tool!r}: request refused (injected invalid request)"
        return proceed(scope)

    def read_only(self, tool: str, read_only: bool) -> bool:
        """The tool's read-only flag, False for a READ_ONLY rejection (see :meth:`configure`)."""
        return read_only and tool not in self.start.writable

    def keep(self, stage: str, record: CanonicalInvocation,
             proceed: Callable[[CanonicalInvocation], bool]) -> bool:
        """The ledger's begin or completion, refused where a store fault asks."""
        n = self.count(f"{stage}:{record.tool}")
        if stage == "begin":
            refused = self.hit(fs.ToolRejection, lambda f: f.reason == "STORE"
                               and f.tool == record.tool and f.n == n)
        else:
            refused = self.hit(fs.ToolError, lambda f: f.error == "store"
                               and f.tool == record.tool and f.n == n)
        return refused is None and proceed(record)

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        """The run store's ``operation``, refused where a store failure names it."""
        f = self.hit(fs.StoreFailure, lambda f: f.operation == operation)
        if f is not None:
            raise StoreError(f"{f.message} (injected)")
        return proceed()

    def _step(self, n: int, request: AgentRequest, proceed: Proceed) -> ModelReply:
        invalid = self.hit(fs.InvalidDraft, lambda f: f.n == n)
        if invalid is not None:
            return _invalid(invalid.form)
        reply: ModelReply = _spiked(proceed, request, self.spike(CallKind.MODEL, n))
        return self._bad_id(self._violate(reply, n, bool(request.observations)))

    def _violate(self, reply: ModelReply, n: int, owed: bool) -> ModelReply:
        # a "missing" violation skips a step that owed no report: nothing to leave out there
        f = self.hit(fs.ProtocolViolation, lambda f: f.n <= n < f.n + f.count
                     and (owed or f.mode != "missing"))
        if f is None:
            return reply
        payload = dict(reply.payload or {})
        if f.mode == "missing":
            payload.pop("progress", None)
        elif f.mode == "invalid":
            payload["progress"] = {"assessment": "MAYBE"}
        else:
            payload["progress"] = {"assessment": "GAINED", "facts": [
                {"statement": "unverifiable", "citations": ["no-such-invocation"]}]}
        return dataclasses.replace(reply, payload=payload or None)

    def _bad_id(self, reply: ModelReply) -> ModelReply:
        call = reply.tool_call
        if call is None:
            return reply
        n = self.count(f"request:{call.name}")
        if self.hit(fs.ToolRejection,
                    lambda f: f.reason == "ID" and f.tool == call.name and f.n == n) is None:
            return reply
        return dataclasses.replace(reply, tool_call=dataclasses.replace(call, call_id=" "))

    def _judge(self, n: int, request: Any, proceed: Proceed) -> GuardReply:
        spike = self.spike(CallKind.GUARD, n)
        fault = self.hit(fs.SemanticFault, lambda f: f.n == n)
        if fault is None:
            return _spiked(proceed, request, spike)
        if fault.verdict == "UNAVAILABLE":
            raise ProviderError("semantic guard unavailable (injected)", latency_s=spike or 0.0)
        return GuardReply(False, "unsupported (injected)", latency_s=spike)

    def _invoke(self, tool: str, request: Any, proceed: Proceed) -> ToolOutput:
        n = self.count(f"tool:{tool}")
        self._tool_total += 1
        total = self._tool_total  # the ordinal of this invocation among all tools
        spike = self.spike(CallKind.TOOL, n, tool, total)
        f = self.hit(fs.ToolError, lambda f: f.tool == tool and f.n == n and f.error != "store")
        if f is not None:
            latency = f.latency_s if f.latency_s is not None else spike
            if f.error == "execution":
                raise ToolExecutionError("backend failed (injected)", latency_s=latency)
            if f.error == "connection":
                raise ConnectionResetError("connection reset by peer (injected)")
            if f.error == "projection":
                return ToolOutput((), latency_s=latency, projectable=False)
            size = self.projection_limit + 1  # just past the projection limit
            return ToolOutput(({"line": "oversize"},), size_bytes=size, latency_s=latency)
        output: ToolOutput = _spiked(proceed, request, spike)
        for i, f in self.of(fs.NoGainStreak):
            ordinal = n if f.tool is not None else total
            if (f.tool is None or f.tool == tool) and f.n <= ordinal < f.n + f.count:
                self.fire(i)
                output = dataclasses.replace(output, items=(), size_bytes=0)
        return output

    def raise_provider(self, call: str, n: int) -> None:
        """Raise the provider error injected at the ``n``-th ``call``, if any.

        No frame keeps the raised error in a variable: its traceback holds the frames, and a
        frame holding the error would keep both (and the run) alive until the collector ran.
        """
        f = self.hit(fs.ProviderFault, lambda f: f.call == call and f.n == n)
        if f is not None and f.connection:
            raise ConnectionResetError(f"{f.message} (injected)")
        if f is not None:
            raise ProviderError(f"{f.message} (injected)", latency_s=f.latency_s)

    def spike(self, call: CallKind, n: int, tool: str | None = None,
              total: int | None = None) -> float | None:
        """The spiked latency of the ``n``-th call, if any.

        For tools, ``n`` counts the calls of ``tool`` and ``total`` every tool call of the
        run: a spike naming a tool uses the first, one that does not the second.
        """
        f = self.hit(fs.LatencySpike, lambda f: f.call is call
                     and (f.tool is None or f.tool == tool)
                     and f.n == (total if f.tool is None and total is not None else n))
        return None if f is None else float(f.latency_s)

    # -- the probe and the SSE hook -------------------------------------------------------------

    def at_boundary(self, ctx: RunContext, b: Boundary) -> None:
        """BoundaryProbe: act on every fault located at this boundary."""
        for i, f in enumerate(self.faults):
            at = getattr(f, "at", None)
            if (at is None or at.when != b.when or at.call is not b.kind
                    or at.tool not in (None, b.name)):
                continue
            if (b.ordinal if at.tool is None else b.name_ordinal) != at.n:
                continue
            self.fire(i)
            self._act(f, ctx)

    def _act(self, f: Any, ctx: RunContext) -> None:
        live = self.live
        if isinstance(f, fs.ClientDisconnect) and live is not None:
            live.disconnect()
        elif isinstance(f, fs.UserCancel):
            ctx.cancel(CancellationReason.USER_REQUESTED, "user requested (injected)")
        elif isinstance(f, fs.ServerShutdown) and live is not None:
            live.server_shutdown()
        elif isinstance(f, fs.Deadline):  # passes here, unless it already has
            ctx.deadline_at = min(ctx.deadline_at, ctx.now)
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


def _timed_action(fault: Any, live: LiveRun) -> Callable[[], Any]:
    """What a fault located in time does to the run: the client goes, the user cancels, or
    the server shuts down with the run in flight (after its grace period)."""
    if isinstance(fault, fs.ClientDisconnect):
        return live.disconnect
    if isinstance(fault, fs.UserCancel):
        return live.user_cancel
    return live.server_shutdown


def _spiked(proceed: Proceed, request: Any, spike: float | None) -> Any:
    """Make the call; a spiked call takes the spiked latency, failing or not."""
    try:
        reply = proceed(request)
    except (ProviderError, ToolExecutionError) as exc:
        if spike is not None:
            exc.latency_s = spike
        raise
    return reply if spike is None else dataclasses.replace(reply, latency_s=spike)


def _invalid(form: str) -> ModelReply:
    if form == "invalid_json":
        return ModelReply(content="{this is not json")
    if form == "schema_invalid":
        return ModelReply(payload={"draft": {"conclusion": 42}})
    return ModelReply()


def _failed_repair(form: str, draft: Mapping[str, Any]) -> ModelReply:
    """What a failed EvidenceRepair answers: an error, invalid JSON or a still-invalid draft."""
    if form == "error":
        raise ProviderError("evidence repair failed (injected)")
    if form == "invalid_json":
        return ModelReply(content="{not a draft")
    bad = dict(draft)
    bad["evidence"] = [{"invocation_id": "no-such-invocation", "claim": "still wrong"}]
    return ModelReply(payload={"draft": bad})
