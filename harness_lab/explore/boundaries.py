"""Boundary enumeration: run a base scenario once and list every point a fault can target.

The base run is recorded by a :class:`~harness_lab.core.context.BoundaryProbe` and an SSE
send hook that the explorer puts *in front of* whatever probe and hook the scenario runner
installs (its fault plan, when the base scenario has faults), composed at each submit through
``Harness.submit_hooks``. It reads the run's state at each instant, which the oracle needs;
docs/explore.md ("What is enumerated") says why the points are recorded live.

A base run yields three kinds of point:

* each boundary, before and after every router / responder / retriever / model / tool /
  repair / guard call (:class:`BoundaryState`);
* each public SSE event the run sent, 1..k (:class:`SseSend`);
* each virtual-time gap: the midpoint between two consecutive distinct trace timestamps,
  relative to the run's start (:class:`Gap`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness_lab.application.live import LiveRun
from harness_lab.application.parts import RunParts
from harness_lab.core.context import Boundary, BoundaryProbe, RunContext
from harness_lab.diagnosis.progress import verified
from harness_lab.harness import Harness
from harness_lab.outcome_table import OUTCOME_BY_CASE, OUTCOME_TABLE, ExpectedOutcome
from harness_lab.ports import CallKind
from harness_lab.record import RunRecord
from harness_lab.runner.run import ScenarioRun
from harness_lab.scenarios.faults import At
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scenarios.spec import Scenario
from harness_lab.sse import ChatSseSession
from harness_lab.states import SseEventKind, TraceEventStatus
from harness_lab.store.memory import MemoryRunStore

__all__ = ["BaseRun", "BoundaryState", "ExplorationError", "Gap", "SseSend", "record_base",
           "at_label", "scenario_data"]

_EXPECTATION_KEYS = ("expect", "case", "matrix", "expect_when", "snapshot")


class ExplorationError(RuntimeError):
    """The base scenario cannot be explored (it did not finish with a record)."""


@dataclass(frozen=True, slots=True)
class BoundaryState:
    """One boundary of the base run and the run's state when the run reached it.

    ``active`` is "no RunTermination yet"; ``past_deadline`` is "the virtual clock is at or
    past the deadline" (the next ``checkActive`` would time the run out); ``facts`` counts the
    verified facts of the ProgressSnapshot (each cites READY invocations only); ``tokens`` and
    ``bytes`` are the budget consumption so far; ``trace_len`` is how many trace events the
    run had emitted. These are read after the base scenario's own faults acted at this
    boundary (so a base fault that cancels here makes it not live); ``reached_active`` and
    ``reached_past_deadline`` are the same two facts as the run reached the boundary, before
    any fault acted (what a budget reserve or a timer just before the boundary sees).
    """

    index: int
    kind: CallKind
    when: str
    ordinal: int
    name: str
    name_ordinal: int
    t: float
    active: bool
    past_deadline: bool
    facts: int
    tokens: int
    bytes: int
    reached_active: bool = True
    reached_past_deadline: bool = False
    trace_len: int = 0

    @property
    def live(self) -> bool:
        """True when a fault acting here meets a run that is still active and in time."""
        return self.active and not self.past_deadline

    @property
    def reached_live(self) -> bool:
        """True when the run reached this boundary active and in time."""
        return self.reached_active and not self.reached_past_deadline

    def at(self) -> At:
        """The scenario-format lifecycle point of this boundary."""
        if self.kind is CallKind.TOOL:
            return At(when=self.when, call=self.kind, n=self.name_ordinal,  # type: ignore[arg-type]
                      tool=self.name)
        return At(when=self.when, call=self.kind, n=self.ordinal)  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        """``before model#2``, ``after tool:logs#1``..."""
        return self.at().label()

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label a fault's ``at`` may address this boundary by: a tool call's by its
        tool (``after tool:logs#1``) and by its place among all tool calls (``after
        tool#3``)."""
        if self.kind is CallKind.TOOL:
            return self.label, f"{self.when} {self.kind.value}#{self.ordinal}"
        return (self.label,)

    @property
    def call_label(self) -> str:
        """The call without the side: ``model#2``, ``tool:logs#1``."""
        if self.kind is CallKind.TOOL:
            return f"tool:{self.name}#{self.name_ordinal}"
        return f"{self.kind.value}#{self.ordinal}"


@dataclass(frozen=True, slots=True)
class SseSend:
    """The k-th public SSE event the base run sent (1-based) and the run's state then."""

    k: int
    kind: SseEventKind
    t: float
    active: bool
    past_deadline: bool
    boundaries_before: int = 0
    """How many of the run's boundaries it had passed when it sent this event (the index of
    the first boundary after the send)."""

    @property
    def live(self) -> bool:
        """True when a disconnect at this send meets a run that is still active and in time."""
        return self.active and not self.past_deadline

    @property
    def label(self) -> str:
        """``sse#5:content``."""
        return f"sse#{self.k}:{self.kind.value}"


@dataclass(frozen=True, slots=True)
class Gap:
    """A virtual instant strictly between two consecutive distinct trace timestamps."""

    at_s: float  # seconds after the run started (what a fault's ``at_s`` means)
    t: float  # absolute virtual time

    @property
    def label(self) -> str:
        """``t+2.2s``."""
        return f"t+{self.at_s:g}s"


@dataclass(frozen=True)
class BaseRun:
    """The recorded base run of one scenario: its record and every point a fault can target."""

    scenario: Scenario
    path: str
    data: dict[str, Any]
    record: RunRecord
    boundaries: tuple[BoundaryState, ...]
    sends: tuple[SseSend, ...]
    gaps: tuple[Gap, ...]
    error: str | None = None
    _by_at: dict[str, BoundaryState] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for b in self.boundaries:
            for label in b.labels:
                self._by_at.setdefault(label, b)

    @property
    def name(self) -> str:
        """The base scenario's name."""
        return self.scenario.name

    @property
    def started_at(self) -> float:
        """Absolute virtual time the run started (earlier turns take time too)."""
        return self.record.started_at

    @property
    def deadline_s(self) -> float:
        """The deadline the base run started with, in seconds after its start.

        That is the configured deadline, or the ``at_s`` of the base's own ``deadline`` fault;
        a ``deadline`` fault located ``at`` a boundary moves it later in the run, so the
        record's final deadline is not used.
        """
        for f in self.scenario.faults:
            at_s = getattr(f, "at_s", None)
            if f.kind == "deadline" and at_s is not None:
                return float(at_s)
        return float(self.scenario.config.deadline_s)

    @property
    def deadline_at(self) -> float:
        """Absolute virtual time of :attr:`deadline_s`."""
        return self.started_at + self.deadline_s

    def find(self, at: At) -> BoundaryState | None:
        """The boundary a fault's ``at`` addresses, or None if the base run never reaches it."""
        return self._by_at.get(at.label())

    def call(self, kind: CallKind, n: int, tool: str | None = None
             ) -> tuple[BoundaryState, BoundaryState] | None:
        """The (before, after) boundaries of the n-th call of ``kind`` (of ``tool``)."""
        call = kind.value if tool is None else f"{kind.value}:{tool}"
        before = self._by_at.get(f"before {call}#{n}")
        after = self._by_at.get(f"after {call}#{n}")
        return None if before is None or after is None else (before, after)

    def after_index(self, index: int, kind: CallKind, when: str | None = None
                    ) -> BoundaryState | None:
        """The first boundary of ``kind`` (and ``when``) whose index is greater than ``index``."""
        return next((b for b in self.boundaries if b.index > index and b.kind is kind
                     and (when is None or b.when == when)), None)

    def first_at_or_after(self, t: float) -> BoundaryState | None:
        """The first boundary at or after absolute time ``t`` (its ``checkActive`` sees ``t``)."""
        return next((b for b in self.boundaries if b.t >= t), None)

    def send(self, k: int) -> SseSend | None:
        """The k-th SSE send, if the base run made it."""
        return next((s for s in self.sends if s.k == k), None)

    def outcome_event(self, after: BoundaryState) -> Any:
        """The trace event a call emitted right after its ``after`` boundary, if any."""
        trace = self.record.trace
        return trace[after.trace_len] if after.trace_len < len(trace) else None

    def after_of(self, before: BoundaryState) -> BoundaryState | None:
        """The ``after`` boundary of the call that ``before`` starts, if the run reached it."""
        return self._by_at.get(f"after {before.label.split(' ', 1)[1]}")

    def call_raised(self, before: BoundaryState) -> bool:
        """True when the base run's call of this ``before`` boundary raised (its provider
        failed, or the tool backend failed in execution): its outcome event says FAILED."""
        after = self.after_of(before)
        event = self.outcome_event(after) if after is not None else None
        if event is None or event.status is not TraceEventStatus.FAILED:
            return False
        if before.kind is CallKind.TOOL:
            return bool(event.detail.get("error_code") == "EXECUTION")
        return True

    def faults_at(self, b: BoundaryState) -> list[Any]:
        """The base scenario's own faults located (``at``) at boundary ``b``."""
        return [f for f in self.scenario.faults if at_label(f) in b.labels]

    def terminated_by(self, t: float) -> bool:
        """True if the base run had a RunTermination at or before absolute time ``t``."""
        terms = self.record.terminations
        return bool(terms) and terms[0][2] <= t

    def outcome_row(self) -> ExpectedOutcome | None:
        """The SPEC §4 row the base run's outcome is (the scenario's own ``case`` first)."""
        r = self.record
        observed = (r.run_state, r.release_outcome, r.fallback_type, r.stored_status)
        rows = list(OUTCOME_TABLE)
        case = self.scenario.case
        if case is not None and case in OUTCOME_BY_CASE:
            rows.insert(0, OUTCOME_BY_CASE[case])
        return next((row for row in rows if (row.run_state, row.release_outcome,
                                             row.fallback_type, row.db_status) == observed),
                    None)


class _Recorder:
    """A BoundaryProbe and SSE send hook that records, then hands on to the runner's own."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.inner: BoundaryProbe | None = None
        self.inner_send: Callable[[ChatSseSession, int, SseEventKind], None] | None = None
        self.boundaries: list[tuple[Any, ...]] = []
        self.sends: list[tuple[str, int, SseEventKind, float, bool, bool, int]] = []
        self._live: dict[str, LiveRun] = {}

    def install(self) -> None:
        """Record every run the harness is given (composed with the runner's probe and hook)."""
        self.harness.submit_hooks.append(self._compose)

    def _compose(self, harness: Harness, parts: RunParts) -> RunParts:
        """The run's parts with the recorder in front of their probe and send hook."""
        self.inner, self.inner_send = parts.probe, parts.before_send
        return parts.with_(probe=self, before_send=self.before_send)

    def _live_run(self, run_id: str) -> LiveRun | None:
        """The live objects of a submitted run (looked up among the harness's handles)."""
        live = self._live.get(run_id)
        if live is None:
            self._live = {h.run_id: h.live for h in self.harness.handles}
            live = self._live.get(run_id)
        return live

    def at_boundary(self, ctx: RunContext, boundary: Boundary) -> None:
        """Let the inner probe act first, then record the boundary and the run's state.

        The state is read after the base scenario's own faults acted here, so ``active``
        says whether the ``checkActive`` that follows the boundary will pass.
        """
        reached = (ctx.lifecycle.is_active, ctx.now >= ctx.deadline_at)
        if self.inner is not None:
            self.inner.at_boundary(ctx, boundary)
        self.boundaries.append((ctx.run_id, boundary, ctx.lifecycle.is_active,
                                ctx.now >= ctx.deadline_at, self._facts(ctx.run_id),
                                ctx.budget.tokens, ctx.budget.bytes, *reached,
                                len(ctx.tracer.events)))

    def before_send(self, session: ChatSseSession, k: int, kind: SseEventKind) -> None:
        """Let the inner hook act first, then record the send and the run's state."""
        if self.inner_send is not None:
            self.inner_send(session, k, kind)
        run_id = session.run_id or ""
        live = self._live_run(run_id)
        ctx = live.ctx if live is not None else None
        active = ctx.lifecycle.is_active if ctx is not None else True
        past = ctx.now >= ctx.deadline_at if ctx is not None else False
        now = ctx.now if ctx is not None else self.harness.env.now
        passed = sum(1 for b in self.boundaries if b[0] == run_id)
        self.sends.append((run_id, k, kind, now, active, past, passed))

    def _facts(self, run_id: str) -> int:
        live = self._live_run(run_id)
        if live is None or live.agent is None or live.boundary is None:
            return 0
        return len(verified(live.agent.snapshot().facts, live.boundary.ready_ids()))


def scenario_data(scenario: Scenario) -> dict[str, Any]:
    """The scenario as a plain dict (what its file said), without any expectations."""
    data = scenario.model_dump(mode="json", exclude_unset=True)
    for key in _EXPECTATION_KEYS:
        data.pop(key, None)
    for turn in data.get("turns", ()):
        turn.pop("expect", None)
    return copy.deepcopy(data)


def _gaps(record: RunRecord) -> Iterator[Gap]:
    times = sorted({float(e.t) for e in record.trace})
    for a, b in zip(times, times[1:], strict=False):
        mid = (a + b) / 2.0
        at_s = round(mid - record.started_at, 6)
        if a < record.started_at + at_s < b:
            yield Gap(at_s, record.started_at + at_s)


def record_base(loaded: LoadedScenario | Scenario) -> BaseRun:
    """Run the base scenario once with the recorder and return every point it passed.

    Raises :class:`ExplorationError` when the base run leaves no record (it crashed or the
    scenario errored before the run finished).
    """
    if isinstance(loaded, Scenario):
        loaded = LoadedScenario(loaded, "<memory>")
    holder: list[_Recorder] = []

    def hook(harness: Harness) -> None:
        """Install a recorder on the harness the runner built."""
        recorder = _Recorder(harness)
        recorder.install()
        holder.append(recorder)

    result = ScenarioRun(loaded, store=MemoryRunStore(), hook=hook).run()
    record = result.record
    if record is None or not holder:
        why = result.error or result.extra.get("crash") or "no record"
        raise ExplorationError(f"base scenario {loaded.scenario.name!r} cannot be explored: "
                               f"{why}")
    run_id = record.run_id  # a turn after a crashed one runs on a harness built anew
    boundaries = tuple(
        BoundaryState(i, b.kind, b.when, b.ordinal, b.name, b.name_ordinal, b.t, *state)
        for i, (_, b, *state) in enumerate(
            x for rec in holder for x in rec.boundaries if x[0] == run_id))
    sends = tuple(SseSend(k, kind, t, active, past, passed) for rec in holder
                  for rid, k, kind, t, active, past, passed in rec.sends if rid == run_id)
    return BaseRun(loaded.scenario, loaded.path, scenario_data(loaded.scenario), record,
                   boundaries, sends, tuple(_gaps(record)), result.error)


def at_label(fault: Any) -> str | None:
    """The label of a fault's ``at`` point, or None for a fault located otherwise."""
    at = getattr(fault, "at", None)
    return None if at is None else str(at.label())
