"""One chunk of a sweep's samples, played in a worker: the job the engine hands out.

This module is what a worker process imports (joblib and dask send the job by reference),
so it loads the harness and nothing of the reporting stack: no pandas, no matplotlib, and
SQLAlchemy only when the chunk persists its runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_lab.errors import ProcessCrash
from harness_lab.frozen import value_class
from harness_lab.sweep.sample import (
    PLAYED_COLUMNS,
    GridPoint,
    Outcome,
    apply_overrides,
    describe,
    run_id_of,
    sample_of,
    session_id_of,
)

if TYPE_CHECKING:
    from harness_lab.store.group import GroupCommitStore
    from harness_lab.store.sql import SqlRunStore

__all__ = ["OUTCOME_COLUMNS", "ChunkResult", "run_chunk"]


OUTCOME_COLUMNS = ("grid", "sample", "intent", "run_state", "release_outcome", "fallback_type",
                   "db_status", "duration_s", "tool_calls", "model_calls", "tokens",
                   "violations", "error")
"""The fields of :class:`~harness_lab.sweep.sample.Outcome`, one column each."""


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """The outcomes of one chunk of samples as columns, plus the records it was asked to keep.

    ``columns`` holds one list per :data:`OUTCOME_COLUMNS` name, a value per sample in sample
    order (``violations`` as comma-joined text): built in the worker, so what travels back
    and what the sweep keeps is a few lists, not an object per sample. ``lost`` names the
    cause when the chunk could not be played at all (its samples are then error rows);
    ``ran_again`` is true when it ran a second time, its worker process having died (a
    chunk that persists finds what it stored the first time; one that does not, run again
    by a dask scheduler rather than by the pool, cannot tell).
    """

    grid: int
    start: int
    columns: Mapping[str, list[Any]]
    failures: tuple[dict[str, Any], ...] = ()
    kept: tuple[dict[str, Any], ...] = ()
    lost: str | None = None
    ran_again: bool = False

    @classmethod
    def lost_samples(cls, grid: int, start: int, stop: int, cause: str) -> ChunkResult:
        """The chunk of samples ``start..stop-1`` lost to ``cause``: one error row each."""
        message = f"lost: {cause}"
        outcomes = [Outcome(grid, i, None, None, None, None, None, 0.0, 0, 0, 0, (), message)
                    for i in range(start, stop)]
        failures: tuple[dict[str, Any], ...] = (
            {"grid": grid, "sample": start, "seed": None, "error": message, "violations": [],
             "run_state": None, "release_outcome": None},)
        return dataclasses.replace(cls.of(grid, start, outcomes, failures), lost=cause)

    @classmethod
    def of(cls, grid: int, start: int, outcomes: Sequence[Outcome],
           failures: tuple[dict[str, Any], ...] = (),
           kept: tuple[dict[str, Any], ...] = ()) -> ChunkResult:
        """The chunk result of ``outcomes`` (in sample order)."""
        columns = {c: [getattr(o, c) for o in outcomes] for c in OUTCOME_COLUMNS}
        columns["violations"] = [",".join(v) for v in columns["violations"]]
        return cls(grid, start, columns, failures, kept)

    def __len__(self) -> int:
        return len(self.columns["sample"])

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        """The chunk's outcomes as :class:`Outcome` objects again."""
        cols = [self.columns[c] for c in OUTCOME_COLUMNS]
        out = []
        for values in zip(*cols, strict=True):
            row = dict(zip(OUTCOME_COLUMNS, values, strict=True))
            row["violations"] = tuple(row["violations"].split(",")) if row["violations"] else ()
            out.append(Outcome(**row))
        return tuple(out)


value_class(ChunkResult)  # see frozen.py


def run_chunk(data: Mapping[str, Any], grid: int, overrides: Mapping[str, Any], seed: int,
              start: int, stop: int, *, check_invariants: bool = True, keep_failures: int = 20,
              keep_every: int = 0, store_url: str | None = None,
              commit_every: int = 256) -> ChunkResult:
    """Play samples ``start..stop-1`` of grid point ``grid`` (a top-level, picklable job).

    With ``store_url``, every run is persisted; ``commit_every`` runs share a transaction
    (1: a transaction per step of each run, as the live harness writes them). Playing a
    persisting chunk again gives the same database, so whoever runs it again (the pool,
    a dask scheduler, after its worker died) need not say so: the runs an earlier play
    stored are played again without writing, those it left RUNNING are removed and played
    again, and the result says it ``ran_again``. A chunk that cannot be played at all (its
    store cannot be opened, say) comes back as error rows naming the cause, never as an
    exception that would cost the sweep its other chunks.
    """
    try:
        return _run_chunk(data, grid, overrides, seed, start, stop,
                          check_invariants=check_invariants, keep_failures=keep_failures,
                          keep_every=keep_every, store_url=store_url,
                          commit_every=commit_every)
    except Exception as exc:
        return ChunkResult.lost_samples(grid, start, stop, describe(exc))


def _run_chunk(data: Mapping[str, Any], grid: int, overrides: Mapping[str, Any], seed: int,
               start: int, stop: int, *, check_invariants: bool, keep_failures: int,
               keep_every: int, store_url: str | None, commit_every: int) -> ChunkResult:
    store: SqlRunStore | GroupCommitStore | None = None
    stored: dict[int, dict[str, Any]] = {}
    again = 0  # runs an earlier play of this chunk left, stored or RUNNING
    if store_url is not None:
        from harness_lab.store.group import GroupCommitStore
        from harness_lab.store.sql import SqlRunStore
        from harness_lab.sweep.claim import chunk_stored

        sql = SqlRunStore(store_url)
        stored, again = chunk_stored(sql, grid, start, stop)  # what an earlier play left
        store = GroupCommitStore(sql, every=commit_every) if commit_every > 1 else sql
    point = GridPoint(apply_overrides(dict(data), overrides), grid, seed,
                      check_invariants=check_invariants, store=store)
    outcomes: list[Outcome] = []
    failures: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    # samples already stored are played again away from the store, for their outcome; kept
    # samples too, for their whole record: the store holds each sample's run under its id
    unstored = (GridPoint(apply_overrides(dict(data), overrides), grid, seed,
                          check_invariants=check_invariants)
                if store is not None and (stored or keep_every) else point)
    for i in range(start, stop):
        row = stored.get(i)
        outcome = (point if row is None else unstored).run(i)
        if row is not None:  # the earlier play's run, or another's that holds its id
            other = _stored_otherwise(row, outcome, grid, i)
            if other is None:
                again += 1
            elif outcome.error is None:
                outcome = dataclasses.replace(outcome, error=f"StoreError: {other}")
        outcomes.append(outcome)
        if outcome.failed and len(failures) < keep_failures:
            failures.append(_failure(point, outcome))
        if keep_every and i % keep_every == 0:
            kept.append(_kept(unstored, i))
    if store is not None:
        store.close()
        lost = store.failures if isinstance(store, GroupCommitStore) else {}
        for run_id, message in lost.items():  # a run whose rows were not written errors
            i = sample_of(run_id) - start
            if 0 <= i < len(outcomes):
                outcomes[i] = dataclasses.replace(outcomes[i], error=f"StoreError: {message}")
                if len(failures) < keep_failures:
                    failures.append(_failure(point, outcomes[i]))
    result = ChunkResult.of(grid, start, outcomes, tuple(failures), tuple(kept))
    return dataclasses.replace(result, ran_again=True) if again else result


def _stored_otherwise(row: Mapping[str, Any], outcome: Outcome, grid: int,
                      sample: int) -> str | None:
    """None when the stored ``row`` is the one playing the sample again gives (its session
    and outcome); else what the database holds instead, as a refused insert would say."""
    played = {"session_id": session_id_of(grid, sample), "intent": outcome.intent,
              "status": outcome.db_status, "termination_state": outcome.run_state,
              "release_outcome": outcome.release_outcome,
              "fallback_type": outcome.fallback_type}
    column = next((c for c in PLAYED_COLUMNS if row.get(c) != played[c]), None)
    if column is None:
        return None
    return (f"the database already holds {run_id_of(grid, sample)}, stored otherwise "
            f"({column} {row.get(column)!r} where the sample gives {played[column]!r})")


def _kept(point: GridPoint, sample: int) -> dict[str, Any]:
    """The whole record of ``sample``, played again; or its error, when it crashes or raises."""
    try:
        return point.record(sample).to_dict()
    except (ProcessCrash, Exception) as exc:  # the sample's outcome row holds the same error
        return {"run_id": run_id_of(point.index, sample), "grid": point.index,
                "sample": sample, "seed": point.seed, "error": describe(exc)}


def _failure(point: GridPoint, outcome: Outcome) -> dict[str, Any]:
    return {"grid": outcome.grid, "sample": outcome.sample, "seed": point.seed,
            "error": outcome.error, "violations": list(outcome.violations),
            "run_state": outcome.run_state, "release_outcome": outcome.release_outcome}
