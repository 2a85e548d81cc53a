"""Exploring a library: every explorable scenario under some paths, on every core.

:func:`plan_library` loads each file (``FILE[variant]`` selects one matrix variant), records
each base run and enumerates its variants; a file or base that cannot be explored (malformed,
crashing, leaving no record) is kept with the reason. :func:`run_library` then runs every
variant of every base in one pool of worker processes (joblib's loky executor, reused across
calls), chunk by chunk, and judges them base by base.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness_lab.explore.boundaries import BaseRun, ExplorationError, record_base
from harness_lab.explore.explorer import ExplorationResult, Finding, judged
from harness_lab.explore.oracle import Observed
from harness_lab.explore.variants import Variant, enumerate_variants
from harness_lab.explore.worker import run_chunk
from harness_lab.pool import available_cores

__all__ = ["IN_PROCESS_BELOW", "LibraryExploration", "LibraryPlan", "Unexplored",
           "explore_library", "plan_library", "run_library"]

IN_PROCESS_BELOW = 400
"""Fewer variants than this run in the calling process: starting workers would cost more."""

Advance = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class Unexplored:
    """A file, or a scenario of one, that could not be explored, and why."""

    path: str
    scenario: str | None
    reason: str


@dataclass
class LibraryPlan:
    """The recorded bases with their variants, and what could not be explored."""

    bases: list[BaseRun] = field(default_factory=list)
    variants: list[list[Variant]] = field(default_factory=list)
    unexplored: list[Unexplored] = field(default_factory=list)
    files: int = 0
    elapsed_s: float = 0.0

    @property
    def variant_count(self) -> int:
        """How many variants the plan runs."""
        return sum(map(len, self.variants))


@dataclass
class LibraryExploration:
    """Every judged variant of a library (one :class:`ExplorationResult`) and what was left
    out, with the reason; ``not_run`` counts the variants whose worker process died before
    it ran them (inconclusive, their error saying so), ``ran_again`` the chunks of variants
    that ran a second time, their worker process having died the first."""

    result: ExplorationResult
    unexplored: list[Unexplored]
    files: int
    not_run: int = 0
    ran_again: int = 0

    def summary(self) -> str:
        """``16,739 variants of 130 bases in 112 files, 0 flagged, ... (3 not explorable)``."""
        from harness_lab.pool import ran_again

        r = self.result
        left = f", {len(self.unexplored)} not explorable" if self.unexplored else ""
        lost = f" ({self.not_run:,} not run: a worker died)" if self.not_run else ""
        again = f"; {ran_again(self.ran_again)}" if self.ran_again else ""
        return (f"{r.variant_count:,} variants of {len(r.bases)} bases in {self.files} files, "
                f"{len(r.flagged)} flagged, {len(r.inconclusive)} inconclusive{lost}{left}, "
                f"{r.elapsed_s:.2f} s on {r.workers} worker(s){again}")


def plan_library(paths: Iterable[str | Path], *, faults: Collection[str] | None = None,
                 advance: Advance | None = None) -> LibraryPlan:
    """Record every base under ``paths`` and enumerate its variants (``advance(1)`` after
    each file). Raise :class:`~harness_lab.scenarios.discovery.SelectionError` for a
    ``FILE[variant]`` its file does not have."""
    from harness_lab.scenarios.discovery import Selector, discover, select
    from harness_lab.scenarios.loader import ScenarioError, load_file

    start = time.perf_counter()
    plan = LibraryPlan()
    for selector in map(Selector.parse, paths):
        for path in discover([selector.path]):
            plan.files += 1
            try:
                loaded = select(selector, load_file(path))
            except ScenarioError as exc:
                first = exc.problems[0] if exc.problems else exc
                more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
                plan.unexplored.append(Unexplored(str(path), None, f"{first}{more}"))
                loaded = []
            for item in loaded:
                try:
                    base = record_base(item)
                except ExplorationError as exc:
                    plan.unexplored.append(Unexplored(str(path), item.scenario.name,
                                                      str(exc)))
                    continue
                plan.bases.append(base)
                plan.variants.append(enumerate_variants(base, faults))
            if advance is not None:
                advance(1)
    plan.elapsed_s = time.perf_counter() - start
    return plan


def run_library(plan: LibraryPlan, *, workers: int | None = None,
                advance: Advance | None = None) -> LibraryExploration:
    """Run and judge every variant of ``plan`` on ``workers`` processes (default: every
    core, or this process alone below :data:`IN_PROCESS_BELOW` variants); ``advance(n)`` after
    every ``n`` variants. The result's ``elapsed_s`` counts the planning too."""
    start = time.perf_counter() - plan.elapsed_s
    jobs = [(data, base.path) for base, variants in zip(plan.bases, plan.variants, strict=True)
            for data in (v.data for v in variants)]
    if workers is None:
        used = 1 if len(jobs) < IN_PROCESS_BELOW else available_cores()
    else:
        used = max(1, workers)
    observed, not_run, ran_again = _observe(jobs, used, advance)
    findings: list[Finding] = []  # one per variant, so its length is where the next base starts
    for base, variants in zip(plan.bases, plan.variants, strict=True):
        findings += judged(base, variants, observed[len(findings):len(findings) + len(variants)])
    result = ExplorationResult(findings, list(plan.bases), time.perf_counter() - start, used)
    return LibraryExploration(result, list(plan.unexplored), plan.files, not_run, ran_again)


def _observe(jobs: Sequence[tuple[dict, str]], workers: int,
             advance: Advance | None) -> tuple[list[Observed], int, int]:
    """Every job's observation, in order, how many jobs a worker that died left unrun
    (their observation is an error saying so) and how many chunks ran again."""
    tick = advance or (lambda n: None)
    size = 64 if workers <= 1 else max(8, min(200, len(jobs) // (workers * 16) or 1))
    chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
    results: list[list[Observed]] = [[] for _ in chunks]
    not_run = 0
    again = 0
    if workers <= 1:
        for n, chunk in enumerate(chunks):
            results[n] = run_chunk(chunk)
            tick(len(chunk))
    else:  # a chunk whose worker died twice: its variants inconclusive, saying why
        from harness_lab.pool import Call, in_workers, why_lost

        def rerun(n: int, call: Call) -> Call:  # a chunk whose worker died runs as it was
            nonlocal again
            again += 1
            return call

        def lost(n: int, exc: BaseException) -> list[Observed]:
            nonlocal not_run
            not_run += len(chunks[n])
            error = f"not run: {why_lost(exc)}"
            return [Observed(None, None, None, None, error=error) for _ in chunks[n]]

        for n, observed in in_workers(run_chunk, [((chunk,), {}) for chunk in chunks],
                                      workers, lost, rerun):
            results[n] = observed
            tick(len(observed))
    return [o for chunk in results for o in chunk], not_run, again


def explore_library(paths: Iterable[str | Path], *, faults: Collection[str] | None = None,
                    workers: int | None = None) -> LibraryExploration:
    """:func:`plan_library` then :func:`run_library`: explore everything under ``paths``."""
    return run_library(plan_library(paths, faults=faults), workers=workers)
