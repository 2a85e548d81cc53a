"""Running explorer variants, in this process or a worker's: light on purpose (no pandas, no
matplotlib), so a worker process starts in a fraction of a second."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness_lab.explore.oracle import Observed
from harness_lab.runner.run import ScenarioRun
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scenarios.spec import Scenario
from harness_lab.store.memory import MemoryRunStore

__all__ = ["run_chunk", "run_variant"]


def run_variant(data: dict[str, Any], path: str = "<explore>") -> Observed:
    """Run one variant scenario dict on an in-memory store and observe it.

    The variant's own fault is the last of its faults: it must fire (it points at a point
    the base run passed). The base scenario's own faults may legitimately never fire when
    the variant's fault ends the run before them.
    """
    try:
        scenario = Scenario.model_validate(data)
    except ValueError as exc:
        return Observed(None, None, None, None, error=f"invalid variant: {exc}")
    run = ScenarioRun(LoadedScenario(scenario, path), store=MemoryRunStore(), observe=False)
    result = run.run()
    own = len(scenario.faults) - 1  # the variant's fault is the last one
    unfired = [m for i, m in run.plan.unfired() if i == own] if run.plan else []
    return Observed.of(result, unfired)


def run_chunk(chunk: Sequence[tuple[dict[str, Any], str]]) -> list[Observed]:
    """Run ``(variant data, base path)`` pairs in order (one unit of work for a pool)."""
    return [run_variant(data, path) for data, path in chunk]
