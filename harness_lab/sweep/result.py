"""SweepResult: outcome counts and shares with confidence intervals, frames and plots."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness_lab.columns import AXIS_DTYPES
from harness_lab.sweep.chunk import OUTCOME_COLUMNS

if TYPE_CHECKING:

    from harness_lab.sweep.chunk import ChunkResult

__all__ = ["OUTCOME_COLUMNS", "SweepResult", "grid_label", "wilson"]

ERROR = "ERROR"
"""The label of an errored sample's empty state columns in counts and shares."""


def grid_label(value: Any) -> Hashable:
    """A grid value as a frame cell: scalars as they are, anything else as compact JSON text.

    ``{uniform: [0.2, 1.0]}`` becomes ``'{"uniform":[0.2,1.0]}'``, the same text for the same
    value, so a frame can be grouped by any grid column.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _trim(failures: list[dict[str, Any]], keep: int | None) -> list[dict[str, Any]]:
    """The first ``keep`` failures of each grid point, in (grid, sample) order."""
    ordered = sorted(failures, key=lambda f: (f["grid"], f["sample"]))
    if keep is None:
        return ordered
    return [f for _, group in itertools.groupby(ordered, key=lambda f: f["grid"])
            for f in itertools.islice(group, max(keep, 0))]


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(centre - half, 0.0), min(centre + half, 1.0))


@dataclass
class SweepResult:
    """All outcomes of a sweep, one compact row per sample, plus failures and kept records.

    ``axes`` are the grid keys the sweep varied (the frame has a column each); ``lost`` counts
    the samples of chunks the backend lost (error rows naming ``cause``); ``interrupted`` is
    true when the sweep stopped before every chunk ran (Ctrl-C, or a backend that failed).
    ``unstored`` counts the samples whose run a store refused (their error names the
    StoreError); ``unreported`` lists the runs a persisting sweep's database holds completed
    although the result does not count them (their chunk was lost or interrupted after part
    of it was committed), and ``unreadable`` says why the database could not be read back to
    find them (None when it was, or the sweep persisted nothing); ``replayed`` counts the
    samples a resumed sweep found stored and played again, without writing them, for this
    result. ``ran_again`` counts the chunks that ran a second time, their worker process
    having died (see :func:`~harness_lab.pool.in_workers`).
    """

    frame: pd.DataFrame
    points: list[dict[str, Any]]
    failures: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)
    elapsed_s: float = 0.0
    interrupted: bool = False
    workers: int = 1
    scenario: str = ""
    axes: list[str] = field(default_factory=list)
    lost: int = 0
    cause: str | None = None
    unstored: int = 0
    unreported: list[str] = field(default_factory=list)
    unreadable: str | None = None
    replayed: int = 0
    ran_again: int = 0

    @classmethod
    def from_chunks(cls, chunks: Sequence[ChunkResult], points: list[dict[str, Any]], *,
                    elapsed: float, interrupted: bool, workers: int, scenario: str,
                    axes: Sequence[str] | None = None, keep_failures: int | None = None,
                    cause: str | None = None) -> SweepResult:
        """Merge chunk results in (grid, sample) order, whatever order they completed in.

        The kept failures are the first ``keep_failures`` of each grid point in sample order,
        whichever chunks they came from.
        """
        ordered = sorted(chunks, key=lambda c: (c.grid, c.start))
        columns = {c: list(itertools.chain.from_iterable(chunk.columns[c] for chunk in ordered))
                   for c in OUTCOME_COLUMNS}
        frame = pd.DataFrame(columns)
        frame = frame.astype({name: AXIS_DTYPES[name] for name in (
            "intent", "run_state", "release_outcome", "fallback_type", "db_status")})
        for name, dtype in (("grid", "int32"), ("sample", "int64"), ("tool_calls", "int16"),
                            ("model_calls", "int16"), ("tokens", "int64"),
                            ("duration_s", "float64")):
            try:
                frame[name] = frame[name].astype(dtype)
            except OverflowError:  # a count beyond the type (such a run FAILED): kept exact
                frame[name] = frame[name].astype(object)
        for key in sorted({k for p in points for k in p}):
            labels = {i: grid_label(p.get(key)) for i, p in enumerate(points)}
            frame[key] = frame["grid"].map(labels)
        failures = _trim([f for c in ordered for f in c.failures], keep_failures)
        kept = [k for c in ordered for k in c.kept]
        lost = [c for c in ordered if c.lost is not None]
        cause = cause or next((c.lost for c in lost), None)
        errors = frame["error"].dropna()
        unstored = int(errors.str.contains("StoreError: ", regex=False).sum()) if len(errors) \
            else 0
        return cls(frame, points, failures, kept, elapsed, interrupted, workers, scenario,
                   list(axes if axes is not None else _varied(points)),
                   sum(len(c) for c in lost), cause, unstored,
                   ran_again=sum(c.ran_again for c in ordered))

    @property
    def incomplete(self) -> bool:
        """True when some samples were not played: the sweep stopped, or chunks were lost."""
        return self.interrupted or self.lost > 0

    @property
    def samples(self) -> int:
        """Completed samples."""
        return len(self.frame)

    @property
    def runs_per_second(self) -> float:
        """Completed samples per wall-clock second."""
        return self.samples / self.elapsed_s if self.elapsed_s else math.nan

    def counts(self, column: str = "release_outcome",
               by: str | Sequence[str] | None = None) -> pd.DataFrame:
        """Sample counts of ``column``'s values (per combination of the ``by`` columns).

        Errored samples, whose state columns are empty, count under ``ERROR``.
        """
        keys = [*_columns(by), column]
        frame = self.frame[keys].copy()
        frame[column] = _error_labelled(frame[column], self.frame)
        counts = frame.groupby(keys, observed=False, dropna=False, sort=True).size()
        return counts.rename("count").reset_index()

    def shares(self, column: str = "release_outcome",
               by: str | Sequence[str] | None = None) -> pd.DataFrame:
        """Share of each value of ``column`` with a 95% Wilson interval.

        ``by`` names one column or a list of them (every grid key, say): the shares are then
        per combination of their values, never pooled over any of them.
        """
        counts = self.counts(column, by)
        keys = _columns(by)
        totals = (counts.groupby(keys, observed=False, dropna=False)["count"].transform("sum")
                  if keys else pd.Series(counts["count"].sum(), index=counts.index))
        counts["n"] = totals.astype(int)
        counts["share"] = counts["count"] / counts["n"].where(counts["n"] > 0)
        bounds = [wilson(int(c), int(n)) for c, n in zip(counts["count"], counts["n"],
                                                          strict=True)]
        counts["ci_low"] = [b[0] for b in bounds]
        counts["ci_high"] = [b[1] for b in bounds]
        return counts

    def summary(self) -> dict[str, Any]:
        """Headline figures of the sweep."""
        return {"scenario": self.scenario, "samples": self.samples,
                "grid_points": len(self.points), "workers": self.workers,
                "elapsed_s": round(self.elapsed_s, 3),
                "runs_per_s": round(self.runs_per_second, 1),
                "failures": int((self.frame["error"].notna()
                                 | (self.frame["violations"] != "")).sum()),
                "lost": self.lost, "unstored": self.unstored, "interrupted": self.interrupted}


def _columns(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)



def _varied(points: list[dict[str, Any]]) -> list[str]:
    """The keys whose values differ between grid points, in the points' key order."""
    keys = list(dict.fromkeys(k for p in points for k in p))
    return [k for k in keys if len({grid_label(p.get(k)) for p in points}) > 1]


def _error_labelled(values: pd.Series, frame: pd.DataFrame) -> pd.Series:
    """``values`` with ``ERROR`` where the sample errored before it had a state."""
    errored = frame["error"].notna() & values.isna()
    if not errored.any():
        return values
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.cat.add_categories([ERROR])
    return values.where(~errored, ERROR)

