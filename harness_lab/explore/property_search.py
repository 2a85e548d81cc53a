"""Property search: generate scenarios, find one that breaks the lifecycle, shrink it.

The property (checked by :func:`property_failures` on every generated scenario): every
invariant of :mod:`harness_lab.invariants` holds, and the run ends in a legal SPEC §4 row
(:func:`~harness_lab.explore.oracle.legal_problem`: one of the thirteen rows, or the SPEC
§5.1 policy row when that policy is on, stored with the doc §12.2 status; a crashed run leaves
its RUNNING row). :func:`search` runs :func:`hypothesis.find` over
:func:`~harness_lab.explore.strategies.scenarios` and returns the shrunk minimal failing
scenario, which :meth:`SearchResult.write_reproducer` writes as a scenario file that
``harness-lab run`` fails on.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from harness_lab.atomic import write_atomically
from harness_lab.explore.oracle import (
    Observed,
    closest_row,
    legal_problem,
    legal_rows,
    row_expectation,
)
from harness_lab.explore.strategies import scenarios
from harness_lab.runner.run import ScenarioResult, ScenarioRun
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scenarios.spec import Scenario
from harness_lab.store.memory import MemoryRunStore

__all__ = ["ILLEGAL_OUTCOME", "NO_RECORD", "PropertyFailure", "SearchResult",
           "property_failures", "run_data", "search"]

ILLEGAL_OUTCOME = "illegal_outcome"
"""The failure name of a run that ends outside SPEC §4 (or with the wrong stored status)."""

NO_RECORD = "no_record"
"""The failure name of a run that neither finished with a record nor crashed as injected."""


@dataclass(frozen=True, slots=True)
class PropertyFailure:
    """One way a generated scenario broke the property: an invariant's name or an outcome."""

    name: str
    message: str

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


def run_data(data: dict[str, Any]) -> tuple[ScenarioRun, ScenarioResult]:
    """Validate and run one scenario dict on an in-memory store; the run keeps its plan."""
    run = ScenarioRun(LoadedScenario(Scenario.model_validate(data), "<search>"),
                      store=MemoryRunStore())
    return run, run.run()


def _failures(data: dict[str, Any], result: ScenarioResult) -> list[PropertyFailure]:
    out = [PropertyFailure(v.invariant, v.message) for v in result.violations]
    observed = Observed.of(result)
    if result.record is None and not result.crashed:
        return [*out, PropertyFailure(NO_RECORD, str(observed.error))]
    problem = legal_problem(observed, timeout_progress_fallback=_policy(data))
    if problem is not None:
        out.append(PropertyFailure(ILLEGAL_OUTCOME, problem))
    return out


def _policy(data: dict[str, Any]) -> bool:
    """Whether the scenario switches on the SPEC §5.1 timeout_progress_fallback policy."""
    return bool(data.get("config", {}).get("policy", {}).get("timeout_progress_fallback"))


def property_failures(data: dict[str, Any]) -> list[PropertyFailure]:
    """Every way the scenario ``data`` breaks the property (empty when it holds)."""
    return _failures(data, run_data(data)[1])


@dataclass
class SearchResult:
    """The outcome of one search: the minimal failing scenario (or None) and its failures."""

    scenario: dict[str, Any] | None
    failures: tuple[PropertyFailure, ...]
    examples: int
    elapsed_s: float
    seed: int | None
    defects: tuple[str, ...] = ()
    only: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        """True when a failing scenario was found."""
        return self.scenario is not None

    @property
    def broken(self) -> list[str]:
        """The names of what the minimal scenario breaks (invariants, ``illegal_outcome``)."""
        return sorted({f.name for f in self.failures})

    def to_yaml(self) -> str:
        """The minimal scenario as YAML, with expectations that make ``harness-lab run`` fail.

        Broken invariants fail the run by themselves (they are not listed as expected); an
        outcome outside the table gets the closest legal row as its expectation.
        """
        if self.scenario is None:
            raise ValueError("the search found no failing scenario")
        data = copy.deepcopy(self.scenario)
        data["name"] = _name(self)
        data["description"] = ("A minimal scenario the property search shrank to; it breaks "
                               + "; ".join(str(f) for f in self.failures) + ".")
        expect = _expectation(data, self.failures)
        if expect:
            data["expect"] = expect
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)

    def write_reproducer(self, path: str | Path) -> Path:
        """Write :meth:`to_yaml` to ``path`` (directories are created); return the path."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, self.to_yaml())
        return out


def _name(result: SearchResult) -> str:
    defects = "-".join(result.defects) or "no-defect"
    seed = "derandomized" if result.seed is None else f"seed-{result.seed}"
    return f"search-{defects}-{seed}"


def _expectation(data: dict[str, Any], failures: Sequence[PropertyFailure]) -> dict[str, Any]:
    if not any(f.name == ILLEGAL_OUTCOME for f in failures):
        return {}
    result = run_data(data)[1]
    o = Observed.of(result)
    if o.crashed:
        return {"crashed": True, "db_status": "RUNNING"}
    return row_expectation(closest_row(o, legal_rows(_policy(data))))


def _prune(data: dict[str, Any], fails: Any) -> dict[str, Any]:
    """Drop the faults that never fired, as long as the scenario still fails."""
    run, _ = run_data(data)
    plan = run.plan
    if plan is None or all(plan.fired):
        return data
    kept = [f for f, n in zip(data.get("faults", []), plan.fired, strict=True) if n]
    pruned = {**data, "faults": kept} if kept else {k: v for k, v in data.items()
                                                    if k != "faults"}
    return pruned if fails(pruned) else data


def search(max_examples: int = 200, seed: int | None = None, defects: Sequence[str] = (), *,
           only: Collection[str] | None = None) -> SearchResult:
    """Search for a scenario breaking the property; shrink and return it.

    ``seed`` fixes the generation (None: hypothesis's derandomized mode, also
    deterministic); ``defects`` are seeded into every generated configuration; ``only``
    counts just these failure names (invariant names, ``illegal_outcome``, ``no_record``).
    """
    start = time.perf_counter()
    wanted = set(only) if only is not None else None
    count = [0]

    def fails(data: dict[str, Any]) -> bool:
        """True when ``data`` breaks the property (one of ``only``, when given)."""
        count[0] += 1
        names = {f.name for f in property_failures(data)}
        return bool(names if wanted is None else names & wanted)

    config = settings(max_examples=max_examples, database=None, deadline=None,
                      derandomize=seed is None, suppress_health_check=list(HealthCheck),
                      phases=(Phase.generate, Phase.shrink))
    rng = random.Random(seed) if seed is not None else None
    defect_names = tuple(str(d) for d in defects)
    minimal: dict[str, Any] | None
    try:
        minimal = _prune(find(scenarios(defect_names), fails, settings=config, random=rng), fails)
    except NoSuchExample:
        minimal = None
    failures = () if minimal is None else tuple(
        f for f in property_failures(minimal) if wanted is None or f.name in wanted)
    return SearchResult(minimal, failures, count[0], time.perf_counter() - start, seed,
                        defect_names, tuple(sorted(wanted or ())))
