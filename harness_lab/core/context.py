"""RunContext: one run's clock, lifecycle, cancellation, budget, deadline and boundary check.

Every model, tool and guard call goes through :meth:`RunContext.call`, which checks the run
is active before and after the call, lets the call take its virtual latency on the simpy
clock, and discards a late result when the run ended while the call was in flight. A provider
call (router, responder, retriever, diagnosis model, repair, guard) goes through
:meth:`RunContext.provider_call`, which adds what every provider call shares: its failure
traced, its tokens charged, its success traced.

A passed deadline ends the run TIMED_OUT when a boundary check finds it (``boundary``
detection, the default) or at its own instant (``instant``): then a call that outlives the
deadline waits in two timeouts, the first ending at the deadline, where the lifecycle's
compare-and-set is made, and the call still runs to its end before its result is discarded.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import simpy

from harness_lab.config import DeadlineDetection, HarnessConfig
from harness_lab.core.budget import RunBudget
from harness_lab.core.cancellation import RunCancellation
from harness_lab.core.lifecycle import RunLifecycle
from harness_lab.core.stepping import clock_of, virtual_now
from harness_lab.defects import Defect
from harness_lab.errors import ProviderError, RunAborted, ToolExecutionError
from harness_lab.frozen import value_class
from harness_lab.messages import TokenUsage
from harness_lab.ports import CallKind
from harness_lab.states import CancellationReason, RunState, TraceEventStatus, TraceEventType
from harness_lab.trace import Tracer

__all__ = ["Boundary", "BoundaryProbe", "LatencyModel", "ProviderReply", "RunContext", "clock_of",
           "virtual_now"]

R = TypeVar("R")


class ProviderReply(Protocol):
    """What every provider's reply carries: the tokens its call spent."""

    @property
    def usage(self) -> TokenUsage:
        """The call's token usage."""
        ...


P = TypeVar("P", bound=ProviderReply)


@dataclass(frozen=True, slots=True, init=False)
class Boundary:
    """One point a run passes: before or after the k-th call of a kind (and of a name)."""

    kind: CallKind
    when: str  # "before" | "after"
    ordinal: int  # 1-based, per kind
    name: str  # the tool name, or the kind for non-tool calls
    name_ordinal: int  # 1-based, per (kind, name)
    t: float

    def __init__(self,
                 kind: CallKind, when: str, ordinal: int, name: str, name_ordinal: int,
                 t: float) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "when", when)
        object.__setattr__(self, "ordinal", ordinal)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "name_ordinal", name_ordinal)
        object.__setattr__(self, "t", t)


value_class(Boundary)  # see frozen.py


class BoundaryProbe(Protocol):
    """Observes (and may act at) every boundary of a run: faults and explorers use it."""

    def at_boundary(self, ctx: RunContext, boundary: Boundary) -> None:
        """Called before and after every external call."""
        ...


class LatencyModel(Protocol):
    """Chooses a call's virtual latency when the reply does not carry one."""

    def latency(self, kind: CallKind, name: str, reply_latency: float | None) -> float:
        """Seconds of virtual time the call takes."""
        ...


class RunContext:
    """The live state of one run; the harness's single source of "is this run active"."""

    __slots__ = ("run_id", "session_id", "env", "config", "lifecycle", "cancellation", "budget",
                 "deadline_at", "started_at", "tracer", "probe", "latency", "capacity",
                 "discard_late", "_counts", "_name_counts", "discarded", "instant_deadline")

    def __init__(self, run_id: str, session_id: str, env: simpy.Environment,
                 config: HarnessConfig, *, probe: BoundaryProbe | None = None,
                 latency: LatencyModel | None = None,
                 capacity: dict[CallKind, simpy.Resource] | None = None) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.env = env
        self.config = config
        self.started_at = virtual_now(env)
        self.deadline_at = virtual_now(env) + config.deadline_s
        late = Defect.LATE_SUCCESS_OVERRIDES_CANCEL in config.defects
        clock = clock_of(env)
        self.tracer = Tracer(run_id, clock)
        self.lifecycle = RunLifecycle(run_id, allow_override=late, tracer=self.tracer)
        self.discard_late = not late
        self.cancellation = RunCancellation(self.lifecycle, clock)
        self.budget = RunBudget(config.budget)
        self.probe = probe
        self.latency = latency
        self.capacity = capacity
        self._counts: dict[CallKind, int] = {}
        self._name_counts: dict[tuple[CallKind, str], int] = {}
        self.discarded: list[tuple[CallKind, str, float]] = []
        self.instant_deadline = (config.policy.deadline_detection
                                 is DeadlineDetection.INSTANT)

    @property
    def now(self) -> float:
        """Virtual seconds since the environment started."""
        return virtual_now(self.env)

    def check_active(self, boundary: str) -> None:
        """Raise RunAborted if the run is terminal; a passed deadline terminates it first.

        Under ``instant`` deadline detection that termination is dated at the deadline's own
        instant (the time passed where no timer could fire it: in a provider's queue, or in
        a call that blocked the live server's thread); under ``boundary``, now.
        """
        now = virtual_now(self.env)
        if (self.lifecycle.termination is None and now >= self.deadline_at
                and not (now == self.deadline_at  # seeded: now > deadline, not >=
                         and Defect.DEADLINE_EXCLUSIVE in self.config.defects)):
            self.cancellation.cancel(CancellationReason.DEADLINE_EXCEEDED, boundary,
                                     self.deadline_at if self.instant_deadline else None)
        if self.lifecycle.termination is not None:
            raise RunAborted(self.run_id, self.lifecycle.state, boundary)

    def certainly_active(self) -> bool:
        """True when the run is certainly active: no termination and the deadline ahead.

        A fast path in front of :meth:`check_active`, which alone decides when this says no
        (a deadline reached this instant included).
        """
        return self.lifecycle.termination is None and virtual_now(self.env) < self.deadline_at

    def cancel(self, reason: CancellationReason, detail: str = "") -> bool:
        """Cancel from outside the run (a disconnect, a user, a fault) at the current instant.

        Under the ``boundary`` deadline detection (the default) a deadline is a termination
        only once a ``check_active`` found it, so this cancel wins when none has since the
        deadline passed; under ``instant`` a deadline already passed in virtual time wins
        first, as it happened first (dated at its instant).
        """
        if (reason is CancellationReason.USER_REQUESTED
                and Defect.USER_CANCEL_NOT_TERMINAL in self.config.defects):
            return False  # seeded: the cancel is acknowledged, never handed to the run
        if self.instant_deadline:
            self._fire_if_reached(virtual_now(self.env))
        return self.cancellation.cancel(reason, detail)

    def _fire_if_reached(self, now: float) -> None:
        """Under ``instant`` detection, a deadline that ``now`` has reached with no timer to
        fire it (a cancel at its own instant, a call that waited in a provider's queue or
        blocked the live server's thread) fires now, dated at its instant: it came first."""
        if now >= self.deadline_at:
            self._deadline_fires()

    def _deadline_fires(self) -> None:
        """The deadline's timer (``instant`` detection): the lifecycle's compare-and-set at the
        deadline's own instant, as doc §4 has the deadline path decide the terminal state
        first; the call in flight runs on and its late result is discarded after it."""
        if self.lifecycle.termination is None:
            self.cancellation.cancel(CancellationReason.DEADLINE_EXCEEDED, "deadline",
                                     self.deadline_at)

    def _wait_instant(self, latency: float) -> Generator[simpy.Event, Any, None]:
        """Wait out a call's ``latency`` under ``instant`` detection: a deadline that passes
        meanwhile fires at its instant (a timer only for a call that outlives it, so a run
        leaves no event behind); one reached before it (the call waited for capacity, or
        blocked the live server's thread) fires now."""
        env = self.env
        now = virtual_now(env)
        deadline = self.deadline_at
        self._fire_if_reached(now)
        if self.lifecycle.termination is None and deadline < now + latency:
            end = now + latency
            yield env.timeout(deadline - now)
            self._deadline_fires()
            latency = max(end - virtual_now(env), 0.0)
        yield env.timeout(latency)

    @property
    def state(self) -> RunState:
        """The run's RunState now."""
        return self.lifecycle.state

    def call(self, kind: CallKind, name: str, fn: Callable[[], R],
             discard_event: TraceEventType) -> Generator[simpy.Event, Any, R]:
        """Run one external call as a boundary (``yield from`` it inside a simpy process).

        The result (or a ProviderError / ToolExecutionError) is computed when the call starts,
        takes its latency in virtual time, and is used only if the run is still active after.
        """
        return self._boundary(kind, name, fn, discard_event, False, None, None)

    def provider_call(self, kind: CallKind, name: str, fn: Callable[[], P],
                      event: TraceEventType, ok: Callable[[P], dict[str, Any]] | None, *,
                      failed: dict[str, Any] | None = None
                      ) -> Generator[simpy.Event, Any, P]:
        """One provider call as a boundary (:meth:`call`); ``yield from`` it in a simpy process.

        A :class:`ProviderError` is traced FAILED on ``event`` (the ``failed`` fields, then
        ``error``) and re-raised for the caller to decide what it means; a reply's tokens are
        charged to the budget (never raising: the caller checks the limit where its rule says),
        then ``event`` is traced OK with ``ok(reply)``. ``ok=None`` leaves the outcome's trace
        to the caller, for a reply whose success is decided after it is read.
        """
        # the same generator as call's, not one wrapped around it: a provider call is made
        # about ten times a run, and every layer of generators costs each of its resumptions
        return self._boundary(kind, name, fn, event, True, ok, failed)

    def _boundary(self, kind: CallKind, name: str, fn: Callable[[], R], event: TraceEventType,
                  provider: bool, ok: Callable[[Any], dict[str, Any]] | None,
                  failed: dict[str, Any] | None) -> Generator[simpy.Event, Any, R]:
        n = self._counts.get(kind, 0) + 1
        self._counts[kind] = n
        probe = self.probe
        m = 0
        if probe is not None:  # the ordinal per name only locates boundaries for a probe
            key = (kind, name)
            m = self._name_counts.get(key, 0) + 1
            self._name_counts[key] = m
            probe.at_boundary(self, Boundary(kind, "before", n, name, m, virtual_now(self.env)))
        if not self.certainly_active():  # the boundary text is only built when the check fails
            self.check_active(f"before {kind}:{name}")
        error: ProviderError | ToolExecutionError | None = None
        result: Any = None
        reply_latency: float | None
        try:
            result = fn()
            reply_latency = getattr(result, "latency_s", None)
        except (ProviderError, ToolExecutionError) as exc:
            error = exc
            reply_latency = exc.latency_s
        except OSError as exc:  # a reset connection, a timed-out socket: a technical failure
            error = _technical_failure(kind, exc)
            reply_latency = None
        latency = (self.latency.latency(kind, name, reply_latency) if self.latency is not None
                   else reply_latency or 0.0)
        resource = self.capacity.get(kind) if self.capacity is not None else None
        if resource is not None:
            with resource.request() as req:
                yield req
                if self.instant_deadline:
                    yield from self._wait_instant(latency)
                else:
                    yield self.env.timeout(latency)
        elif latency > 0:
            if self.instant_deadline:
                yield from self._wait_instant(latency)
            else:
                yield self.env.timeout(latency)
        try:
            if probe is not None:
                probe.at_boundary(self, Boundary(kind, "after", n, name, m, virtual_now(self.env)))
            try:
                if self.discard_late and not self.certainly_active():
                    self.check_active(f"after {kind}:{name}")
            except RunAborted:
                self.discarded.append((kind, name, virtual_now(self.env)))
                self.tracer.emit(event, TraceEventStatus.DISCARDED,
                                 {"call": kind.value, "name": name, "state": self.state.value})
                raise
            if error is not None:
                if provider:  # a provider call fails with a ProviderError (its port error)
                    text = str(error)
                    self.tracer.emit(event, TraceEventStatus.FAILED,
                                     {"error": text} if failed is None
                                     else {**failed, "error": text})
                raise error
            if provider:
                usage: TokenUsage = result.usage  # typed: its fields are then read natively
                self.budget.add_tokens(usage.input_tokens, usage.output_tokens)
                if ok is not None:
                    self.tracer.emit(event, TraceEventStatus.OK, ok(result))
            return result  # type: ignore[no-any-return]
        finally:
            # whatever is raised from here has a traceback holding this frame; if the frame
            # still held the call's error, the two would keep each other (and the whole run)
            # alive until the garbage collector's next pass instead of being freed at once
            error = None


def _technical_failure(kind: CallKind, exc: OSError) -> ProviderError | ToolExecutionError:
    """``exc`` as the port error of ``kind``: what the harness's clients turn I/O errors into."""
    error: ProviderError | ToolExecutionError
    text = f"{type(exc).__name__}: {exc}"
    error = ToolExecutionError(text) if kind is CallKind.TOOL else ProviderError(text)
    error.__cause__ = exc
    return error
