"""The load model: sessions arriving by a Poisson process into one simpy environment.

Every run of a load point shares the environment and the providers' concurrency limits
(``simpy.Resource`` per call kind), so queueing adds latency and, past the deadline, turns
into timeouts. Each arriving run gets its own scripted components: the model, guard, repair
and tool calls reach them by the run id their requests carry; the router, responder and
retriever, whose requests carry none, by the simpy process making the call (each run is one
process), so a scripted sequence is played from its first step in every run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import simpy

from harness_lab.application.components import Components
from harness_lab.harness import Harness
from harness_lab.ports import CallKind
from harness_lab.runner.run import build_components
from harness_lab.scenarios.spec import Scenario
from harness_lab.scripted.build import build_config, build_tools
from harness_lab.store.null import NullRunStore
from harness_lab.sweep.result import wilson
from harness_lab.sweep.sample import apply_overrides
from harness_lab.sweep.stochastic import (
    SampleLatency,
    SampleStream,
    compile_distribution,
    wrap_stochastic,
)

__all__ = ["LoadPoint", "run_load"]


class _PerRun:
    """Dispatches each call to the components of the run that makes it (by run id)."""

    def __init__(self, factory: Callable[[str], Components]) -> None:
        self.factory = factory
        self.runs: dict[str, Components] = {}

    def of(self, run_id: str) -> Components:
        c = self.runs.get(run_id)
        if c is None:
            c = self.runs[run_id] = self.factory(run_id)
        return c


class _ByProcess:
    """The components of the run whose simpy process is making the current call."""

    def __init__(self, per: _PerRun) -> None:
        self.per = per
        self.env: simpy.Environment | None = None
        self.runs: dict[simpy.Process, str] = {}

    def current(self) -> Components:
        assert self.env is not None, "the load harness binds the environment before it runs"
        process = self.env.active_process
        if process is None or process not in self.runs:
            raise RuntimeError("a provider call outside any run of the load model")
        return self.per.of(self.runs[process])


class _Router:
    def __init__(self, by: _ByProcess) -> None:
        self.by = by

    def route(self, request: Any) -> Any:
        return self.by.current().router.route(request)


class _Responder:
    def __init__(self, by: _ByProcess) -> None:
        self.by = by

    def answer(self, request: Any) -> Any:
        return self.by.current().responder.answer(request)


class _Retriever:
    def __init__(self, by: _ByProcess) -> None:
        self.by = by

    def retrieve(self, request: Any) -> Any:
        return self.by.current().retriever.retrieve(request)


class _Model:
    def __init__(self, per: _PerRun) -> None:
        self.per = per

    def step(self, request: Any) -> Any:
        return self.per.of(request.run_id).model.step(request)


class _Guard:
    def __init__(self, per: _PerRun) -> None:
        self.per = per

    def judge(self, request: Any) -> Any:
        return self.per.of(request.run_id).guard.judge(request)


class _Repair:
    def __init__(self, per: _PerRun) -> None:
        self.per = per

    def repair(self, request: Any) -> Any:
        return self.per.of(request.run_id).repair.repair(request)


class _Tool:
    def __init__(self, per: _PerRun, name: str, read_only: bool, evidence: bool) -> None:
        self.per, self.name, self.read_only, self.evidence = per, name, read_only, evidence
        self._validator: Any = None

    def validate(self, scope: Any) -> Any:
        if self._validator is None:
            self._validator = self.per.factory("validator").tools[self.name]
        return self._validator.validate(scope)

    def invoke(self, request: Any) -> Any:
        return self.per.of(request.run_id).tools[self.name].invoke(request)


@dataclass(frozen=True, slots=True)
class LoadPoint:
    """The outcome of one (arrival rate, capacity) point."""

    arrival_rate: float
    capacity: Mapping[str, int]
    runs: int
    frame: pd.DataFrame


def run_load(data: Mapping[str, Any], arrival_rate: float, *, capacity: Mapping[str, int],
             duration_s: float, seed: int = 0, overrides: Mapping[str, Any] | None = None
             ) -> LoadPoint:
    """Run every session arriving in ``duration_s`` at ``arrival_rate`` per virtual second."""
    raw = apply_overrides(dict(data), overrides or {})
    raw.pop("matrix", None)
    raw.pop("expect_when", None)
    sc = Scenario.model_validate(raw)
    rng = random.Random(f"harness_lab/load/{seed}/{arrival_rate}")
    stream = SampleStream.wrapping(rng)
    block = sc.sweep
    samplers = ({CallKind(k): compile_distribution(d) for k, d in block.latency.items()}
                if block is not None else {})
    defaults = {CallKind(k): v for k, v in sc.latency.model_dump().items()}

    def factory(run_id: str) -> Components:
        c = build_components(sc, build_tools(sc.tools))
        return wrap_stochastic(c, block.faults, stream) if block is not None else c

    per = _PerRun(factory)
    template = factory("template")
    tools = {n: _Tool(per, n, t.read_only, t.evidence) for n, t in template.tools.items()}
    by = _ByProcess(per)
    components = Components(router=_Router(by), model=_Model(per), guard=_Guard(per),
                            repair=_Repair(per), responder=_Responder(by),
                            retriever=_Retriever(by), tools=tools)
    harness = Harness(components, build_config(sc.config), store=NullRunStore(),
                      latency=SampleLatency(stream, samplers, defaults),
                      capacity={CallKind(k): n for k, n in capacity.items()})
    by.env = harness.env
    t = 0.0
    while True:
        t += rng.expovariate(arrival_rate)
        if t > duration_s:
            break
        handle = harness.submit(sc.query, at=t)
        by.runs[handle.process] = handle.live.run_id
    records = harness.run_all()
    rows = [{"arrival_rate": arrival_rate, "run_id": r.run_id, "arrived_at": r.started_at,
             "run_state": r.run_state.value, "release_outcome": r.release_outcome.value,
             "fallback_type": r.fallback_type.value if r.fallback_type else None,
             "duration_s": r.duration_s} for r in records]
    return LoadPoint(arrival_rate, dict(capacity), len(records), pd.DataFrame(rows))


def load_curve(points: list[LoadPoint], outcome: str = "TIMED_OUT",
               column: str = "run_state") -> pd.DataFrame:
    """Per arrival rate: runs, mean and p95 duration, and the share of ``outcome`` (95% CI)."""
    rows = []
    for p in points:
        df = p.frame
        n = len(df)
        k = int((df[column] == outcome).sum()) if n else 0
        low, high = wilson(k, n)
        rows.append({"arrival_rate": p.arrival_rate, "runs": n,
                     "mean_duration_s": df["duration_s"].mean() if n else float("nan"),
                     "p95_duration_s": df["duration_s"].quantile(0.95) if n else float("nan"),
                     f"{outcome.lower()}_share": k / n if n else float("nan"),
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)
