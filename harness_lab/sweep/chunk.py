"""One chunk of a sweep's samples, played in a worker: the job the engine hands out.

This module is what a worker process imports (joblib and dask send the job by reference),
so it loads the harness and nothing of the reporting stack: no pandas, no matplotlib, and
SQLAlchemy only when the chunk persists its runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_lab.sweep.sample import GridPoint, Outcome, apply_overrides, sample_of

if TYPE_CHECKING:
    from harness_lab.store.group import GroupCommitStore
    from harness_lab.store.sql import SqlRunStore

__all__ = ["ChunkResult", "run_chunk"]


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """The outcomes of one chunk of samples, plus the records it was asked to keep."""

    grid: int
    start: int
    outcomes: tuple[Outcome, ...]
    failures: tuple[dict[str, Any], ...] = ()
    kept: tuple[dict[str, Any], ...] = ()


def run_chunk(data: Mapping[str, Any], grid: int, overrides: Mapping[str, Any], seed: int,
              start: int, stop: int, *, check_invariants: bool = True, keep_failures: int = 20,
              keep_every: int = 0, store_url: str | None = None,
              commit_every: int = 256) -> ChunkResult:
    """Play samples ``start..stop-1`` of grid point ``grid`` (a top-level, picklable job).

    With ``store_url``, every run is persisted; ``commit_every`` runs share a transaction
    (1: a transaction per step of each run, as the live harness writes them).
    """
    store: SqlRunStore | GroupCommitStore | None = None
    if store_url is not None:
        from harness_lab.store.group import GroupCommitStore
        from harness_lab.store.sql import SqlRunStore

        sql = SqlRunStore(store_url)
        store = GroupCommitStore(sql, every=commit_every) if commit_every > 1 else sql
    point = GridPoint(apply_overrides(dict(data), overrides), grid, seed,
                      check_invariants=check_invariants, store=store)
    outcomes: list[Outcome] = []
    failures: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    # kept samples are played again for their whole record, away from the store: the store
    # already holds each sample's run under its id
    replay = (GridPoint(apply_overrides(dict(data), overrides), grid, seed)
              if keep_every and store is not None else point)
    for i in range(start, stop):
        outcome = point.run(i)
        outcomes.append(outcome)
        if outcome.failed and len(failures) < keep_failures:
            failures.append(_failure(point, outcome))
        if keep_every and i % keep_every == 0:
            try:  # the same seeded sample, played again for its whole record
                kept.append(replay.record(i).to_dict())
            except Exception as exc:  # a kept sample that crashes is already a failure row
                kept.append({"grid": grid, "sample": i, "error": str(exc)})
    if store is not None:
        store.close()
        lost = store.failures if isinstance(store, GroupCommitStore) else {}
        for run_id, message in lost.items():  # a run whose rows were not written errors
            i = sample_of(run_id) - start
            if 0 <= i < len(outcomes):
                outcomes[i] = dataclasses.replace(outcomes[i], error=f"store: {message}")
                if len(failures) < keep_failures:
                    failures.append(_failure(point, outcomes[i]))
    return ChunkResult(grid, start, tuple(outcomes), tuple(failures), tuple(kept))


def _failure(point: GridPoint, outcome: Outcome) -> dict[str, Any]:
    return {"grid": outcome.grid, "sample": outcome.sample, "seed": point.seed,
            "error": outcome.error, "violations": list(outcome.violations),
            "run_state": outcome.run_state, "release_outcome": outcome.release_outcome}
