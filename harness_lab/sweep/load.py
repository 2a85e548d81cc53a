"""The load model: sessions arriving by a Poisson process into one simpy environment.

Every run of a load point shares the environment and the providers' concurrency limits
(``simpy.Resource`` per call kind), so queueing adds latency and, past the deadline, turns
into timeouts. Each arriving run is submitted with its own parts: fresh scripted components
(a scripted sequence is played from its first step in every run) behind the sampled faults,
all drawing from the load point's one stream.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

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
    sampled_faults,
)

__all__ = ["LoadPoint", "run_load"]


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
    harness = Harness(build_components(sc, build_tools(sc.tools)), build_config(sc.config),
                      store=NullRunStore(), latency=SampleLatency(stream, samplers, defaults),
                      capacity={CallKind(k): n for k, n in capacity.items()})
    sampled = sampled_faults(block.faults, stream) if block is not None else None
    t = 0.0
    while True:
        t += rng.expovariate(arrival_rate)
        if t > duration_s:
            break
        harness.submit(sc.query, at=t, parts=harness.parts.with_(
            components=build_components(sc, build_tools(sc.tools)), interceptor=sampled))
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
