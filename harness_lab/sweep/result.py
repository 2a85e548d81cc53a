"""SweepResult: outcome counts and shares with confidence intervals, frames and plots."""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness_lab.report.frames import AXIS_DTYPES
from harness_lab.sweep.chunk import OUTCOME_COLUMNS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from harness_lab.sweep.chunk import ChunkResult

__all__ = ["OUTCOME_COLUMNS", "SweepResult", "wilson"]


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
    """All outcomes of a sweep, one compact row per sample, plus failures and kept records."""

    frame: pd.DataFrame
    points: list[dict[str, Any]]
    failures: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)
    elapsed_s: float = 0.0
    interrupted: bool = False
    workers: int = 1
    scenario: str = ""

    @classmethod
    def from_chunks(cls, chunks: Sequence[ChunkResult], points: list[dict[str, Any]], *,
                    elapsed: float, interrupted: bool, workers: int, scenario: str
                    ) -> SweepResult:
        """Merge chunk results in (grid, sample) order, whatever order they completed in."""
        ordered = sorted(chunks, key=lambda c: (c.grid, c.start))
        columns = {c: list(itertools.chain.from_iterable(chunk.columns[c] for chunk in ordered))
                   for c in OUTCOME_COLUMNS}
        frame = pd.DataFrame(columns)
        for name in ("intent", "run_state", "release_outcome", "fallback_type", "db_status"):
            frame[name] = frame[name].astype(AXIS_DTYPES[name])
        for name, dtype in (("grid", "int32"), ("sample", "int64"), ("tool_calls", "int16"),
                            ("model_calls", "int16"), ("tokens", "int64"),
                            ("duration_s", "float64")):
            frame[name] = frame[name].astype(dtype)
        for key in sorted({k for p in points for k in p}):
            frame[key] = frame["grid"].map({i: p.get(key) for i, p in enumerate(points)})
        failures = [f for c in ordered for f in c.failures]
        kept = [k for c in ordered for k in c.kept]
        return cls(frame, points, failures, kept, elapsed, interrupted, workers, scenario)

    @property
    def samples(self) -> int:
        """Completed samples."""
        return len(self.frame)

    @property
    def runs_per_second(self) -> float:
        """Completed samples per wall-clock second."""
        return self.samples / self.elapsed_s if self.elapsed_s else math.nan

    def counts(self, column: str = "release_outcome", by: str | None = None) -> pd.DataFrame:
        """Sample counts of ``column``'s values (per ``by`` value when given)."""
        keys = [by, column] if by else [column]
        counts = self.frame.groupby(keys, observed=False, dropna=False).size()
        return counts.rename("count").reset_index()

    def shares(self, column: str = "release_outcome", by: str | None = None) -> pd.DataFrame:
        """Share of each value of ``column`` with a 95% Wilson interval (per ``by`` value)."""
        counts = self.counts(column, by)
        totals = (counts.groupby(by, observed=False)["count"].transform("sum") if by
                  else pd.Series(counts["count"].sum(), index=counts.index))
        counts["n"] = totals.astype(int)
        counts["share"] = counts["count"] / counts["n"].where(counts["n"] > 0)
        bounds = [wilson(int(c), int(n)) for c, n in zip(counts["count"], counts["n"],
                                                          strict=True)]
        counts["ci_low"] = [b[0] for b in bounds]
        counts["ci_high"] = [b[1] for b in bounds]
        return counts

    def plot_share(self, param: str, value: str, column: str = "release_outcome", *,
                   ax: Axes | None = None) -> Axes:
        """The share of ``column == value`` against swept parameter ``param``, with 95% CIs."""
        from matplotlib.figure import Figure

        if ax is None:
            ax = Figure(figsize=(6.0, 4.0)).add_subplot()
        shares = self.shares(column, by=param)
        rows = shares[shares[column].astype(str) == value].sort_values(param)
        xs = rows[param].astype(float).to_list()
        ys = rows["share"].to_list()
        low = [y - lo for y, lo in zip(ys, rows["ci_low"], strict=True)]
        high = [hi - y for y, hi in zip(ys, rows["ci_high"], strict=True)]
        ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=4, label=f"{column}={value}")
        ax.set_xlabel(param)
        ax.set_ylabel(f"share of {value}")
        ax.set_ylim(0, 1)
        ax.legend()
        ax.set_title(f"{self.scenario}: {value} share by {param}")
        return ax

    def summary(self) -> dict[str, Any]:
        """Headline figures of the sweep."""
        return {"scenario": self.scenario, "samples": self.samples,
                "grid_points": len(self.points), "workers": self.workers,
                "elapsed_s": round(self.elapsed_s, 3),
                "runs_per_s": round(self.runs_per_second, 1),
                "failures": int((self.frame["error"].notna()
                                 | (self.frame["violations"] != "")).sum()),
                "interrupted": self.interrupted}

    def _repr_html_(self) -> str:
        head = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                       for k, v in self.summary().items())
        table = self.shares().to_html(index=False, float_format=lambda x: f"{x:.4f}")
        return f"<table>{head}</table>{table}"
