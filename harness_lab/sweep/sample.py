"""One sample of a sweep: a fresh set of scripted components, seeded randomness, one run.

:class:`GridPoint` prepares everything that is the same for every sample of one grid point
(the validated scenario, its configuration and compiled distributions); :meth:`run` plays
one sample and returns a compact :class:`Outcome`; a crash or any error inside the sample
becomes an error outcome and the sweep goes on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import simpy

from harness_lab.application.components import Components
from harness_lab.core.stepping import restart_clock, run_to_idle
from harness_lab.errors import ProcessCrash
from harness_lab.frozen import value_class
from harness_lab.harness import Harness
from harness_lab.invariant_rules import breaches
from harness_lab.ports import CallKind
from harness_lab.record import RunRecord
from harness_lab.runner.run import build_components
from harness_lab.scenarios.loader import set_path
from harness_lab.scenarios.spec import Scenario
from harness_lab.scripted.build import ScenarioLatency, build_config, build_tools
from harness_lab.scripted.inject import FaultPlan
from harness_lab.store.base import RunStore
from harness_lab.store.null import NullRunStore
from harness_lab.sweep.stochastic import (
    SampleLatency,
    SampleStream,
    compile_distribution,
    sampled_faults,
)
from harness_lab.tools.ledger import InvocationLedger

__all__ = ["PLAYED_COLUMNS", "RUN_ID_PREFIX", "GridPoint", "Outcome", "apply_overrides",
           "describe", "grid_sample_of", "run_id_of", "sample_of", "session_id_of"]


def describe(exc: BaseException) -> str:
    """The error text of a sample that raised ``exc`` (``crash: ...`` for a process crash)."""
    if isinstance(exc, ProcessCrash):
        return f"crash: {exc}"
    orig = getattr(exc, "orig", None)  # a database error: the driver's, not SQLAlchemy's wrap
    cause = orig if isinstance(orig, BaseException) else exc
    return f"{type(cause).__name__}: {cause}"


RUN_ID_PREFIX: Final = "run-g"
"""How every sweep run id begins (a database's sweep runs are those whose id begins so)."""


def run_id_of(grid: int, sample: int) -> str:
    """The run id of sample ``sample`` of grid point ``grid``."""
    return RUN_ID_PREFIX + str(grid) + "-s" + str(sample).zfill(7)  # f"...{sample:07d}"


def grid_sample_of(run_id: str) -> tuple[int, int] | None:
    """The grid point and sample of a run id made by :func:`run_id_of`; None for another."""
    grid, _, sample = run_id.removeprefix(RUN_ID_PREFIX).partition("-s")
    if run_id.startswith(RUN_ID_PREFIX) and grid.isdigit() and sample.isdigit():
        return int(grid), int(sample)
    return None


PLAYED_COLUMNS = ("session_id", "intent", "status", "termination_state", "release_outcome",
                  "fallback_type")
"""The columns of a stored run that playing its sample again must give alike for the row to
be that sample's (a persisting chunk played again finds its runs by them)."""


def session_id_of(grid: int, sample: int) -> str:
    """The session id of sample ``sample`` of grid point ``grid`` (each sample its own)."""
    return f"session-g{grid}-s{sample}"


def sample_of(run_id: str) -> int:
    """The sample number in a run id made by :func:`run_id_of`."""
    return int(run_id.rpartition("-s")[2])


@dataclass(frozen=True, slots=True, init=False)
class Outcome:
    """What a sweep keeps of one sample."""

    grid: int
    sample: int
    intent: str | None
    run_state: str | None
    release_outcome: str | None
    fallback_type: str | None
    db_status: str | None
    duration_s: float
    tool_calls: int
    model_calls: int
    tokens: int
    violations: tuple[str, ...] = ()
    error: str | None = None

    def __init__(self,
                 grid: int, sample: int, intent: str | None, run_state: str | None,
                 release_outcome: str | None, fallback_type: str | None, db_status: str | None,
                 duration_s: float, tool_calls: int, model_calls: int, tokens: int,
                 violations: tuple[str, ...] = (), error: str | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "sample", sample)
        object.__setattr__(self, "intent", intent)
        object.__setattr__(self, "run_state", run_state)
        object.__setattr__(self, "release_outcome", release_outcome)
        object.__setattr__(self, "fallback_type", fallback_type)
        object.__setattr__(self, "db_status", db_status)
        object.__setattr__(self, "duration_s", duration_s)
        object.__setattr__(self, "tool_calls", tool_calls)
        object.__setattr__(self, "model_calls", model_calls)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "violations", violations)
        object.__setattr__(self, "error", error)

    @property
    def failed(self) -> bool:
        """True when the sample errored or broke an invariant."""
        return self.error is not None or bool(self.violations)


value_class(Outcome)  # see frozen.py


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of scenario ``data`` with dotted-path ``overrides`` set."""
    out = copy.deepcopy(data)
    for dotted, value in overrides.items():
        set_path(out, dotted, value)
    return out


class GridPoint:
    """The prepared scenario of one grid point; plays its samples."""

    def __init__(self, data: Mapping[str, Any], index: int, seed: int, *,
                 check_invariants: bool = True, store: RunStore | None = None) -> None:
        raw = dict(data)
        raw.pop("matrix", None)
        raw.pop("expect_when", None)
        self.scenario = Scenario.model_validate(raw)
        self.index = index
        self.seed = seed
        self.check_invariants = check_invariants
        sc = self.scenario
        self.config = build_config(sc.config)
        self.defaults = ScenarioLatency.from_spec(sc.latency).defaults
        block = sc.sweep
        self.samplers = ({CallKind(k): compile_distribution(d) for k, d in block.latency.items()}
                         if block is not None else {})
        self.stochastic = block.faults if block is not None else None
        self.store: RunStore = store if store is not None else NullRunStore()
        # one stream, restarted for each sample, which the latency model and the sampled
        # faults draw from: the harness's parts serve every sample of the grid point
        self._stream = SampleStream(seed, index, 0)
        self._harness: Harness | None = None
        self._ledger = InvocationLedger()
        self._built: Components | None = None
        self._rewinds: list[Callable[[], None]] | None = None

    def harness(self) -> Harness:
        """The harness this grid point's samples share (one simpy environment), its parts
        those of every sample: the components, this point's configuration, latency model
        and sampled faults."""
        if self._harness is None:
            stream = self._stream
            self._harness = Harness(
                self._components(), self.config, store=self.store, ledger=self._ledger,
                latency=SampleLatency(stream, self.samplers, self.defaults),
                interceptor=(sampled_faults(self.stochastic, stream)
                             if self.stochastic is not None else None))
        return self._harness

    def _components(self) -> Components:
        """The scenario's scripted components as a fresh run finds them.

        They are built once and rewound for every later sample (their scripts start again
        from the first step), which is what building them anew gives, at a fraction of the
        cost; a sample that errored drops them, and the next one builds them again.
        """
        built, rewinds = self._built, self._rewinds
        if built is not None and rewinds is not None:
            for rewind in rewinds:
                rewind()
            return built
        built = self._built = build_components(self.scenario, build_tools(self.scenario.tools))
        self._rewinds = _rewinds(built)
        return built

    def run(self, sample: int) -> Outcome:
        """Play sample ``sample``; never raises for a failure inside the run."""
        try:
            record = self._play(sample)
        except (ProcessCrash, Exception) as exc:  # one broken sample is an error row
            self._drop()
            return self._error(sample, describe(exc))
        violations = (tuple(sorted({name for name, _ in breaches(record)}))
                      if self.check_invariants else ())
        return Outcome(self.index, sample, _v(record.intent), record.run_state.value,
                       record.release_outcome.value, _v(record.fallback_type),
                       _v(record.stored_status), record.duration_s, record.tool_calls,
                       record.usage.model_calls, record.usage.tokens, violations, record.error)

    def record(self, sample: int) -> RunRecord:
        """Play sample ``sample`` and return its full record (for kept samples).

        A sample that crashes or raises re-raises here, after the shared harness and
        components are dropped, so the next sample builds them again as :meth:`run` does.
        """
        try:
            return self._play(sample)
        except (ProcessCrash, Exception):
            self._drop()
            raise

    def _drop(self) -> None:
        """Forget the shared harness and components: the environment saw a sample die."""
        self._harness = self._built = self._rewinds = None

    def _play(self, sample: int) -> RunRecord:
        sc = self.scenario
        harness = self.harness()
        stream = self._stream
        stream.restart(sample)
        components = self._components()
        if harness.parts.components is not components:  # built afresh: one cannot rewind
            harness.parts = harness.parts.with_(components=components)
        plan = FaultPlan(sc.faults) if sc.faults else None
        parts = plan.applied_to(harness.parts) if plan is not None else None
        # each sample starts at virtual time 0 on its own clock, so its floating-point
        # timings do not depend on which samples ran before it in the same worker
        if not restart_clock(harness.env):
            harness.env = simpy.Environment()
        handle = harness.submit(sc.query, session_id_of(self.index, sample),
                                run_id=run_id_of(self.index, sample), parts=parts)
        if plan is not None:
            plan.arm(harness, handle)
        sto = self.stochastic
        if sto is not None:
            for timed, action in ((sto.disconnect, handle.live.disconnect),
                                  (sto.cancel, handle.live.user_cancel)):
                if timed is not None and stream.random() < timed.p:
                    harness.at(handle, compile_distribution(timed.at_s)(stream), action)
        # run until nothing is scheduled: the run, then what outlives it (the finished
        # process's own event, timers of faults that can no longer act). A simpy Environment
        # holds itself in a reference cycle, so anything left in its queue would keep the
        # whole run alive until the garbage collector's next full pass, instead of freeing it
        run_to_idle(harness.env)
        if plan is not None:
            plan.live = None  # the run's context holds the plan as its probe: break the loop
        harness.handles.clear()  # a sweep keeps outcomes, not every run's live objects
        return handle.record

    def _error(self, sample: int, message: str) -> Outcome:
        return Outcome(self.index, sample, None, None, None, None, None, 0.0, 0, 0, 0,
                       (), message)


def _rewinds(components: Components) -> list[Callable[[], None]] | None:
    """The rewind methods of every component, or None when one cannot be rewound."""
    parts = (components.router, components.model, components.guard, components.repair,
             components.responder, components.retriever, *components.tools.values())
    rewinds = [getattr(part, "rewind", None) for part in parts]
    if any(r is None for r in rewinds):
        return None
    return rewinds  # type: ignore[return-value]


def _v(x: Any) -> Any:
    return None if x is None else x.value
