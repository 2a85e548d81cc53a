"""Policy comparison: the same sweep (same seed, same samples) under two configurations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from harness_lab.errors import SweepError
from harness_lab.sweep.engine import Sweep
from harness_lab.sweep.result import SweepResult, wilson

__all__ = ["compare_policies", "outcome_label", "paired_table"]


def outcome_label(frame: pd.DataFrame) -> pd.Series:
    """``RunState / ReleaseOutcome / FallbackType`` per sample (``ERROR`` for errors)."""
    text = (frame["run_state"].astype(str) + " / " + frame["release_outcome"].astype(str)
            + " / " + frame["fallback_type"].astype(str).where(frame["fallback_type"].notna(),
                                                               "-"))
    return text.where(frame["error"].isna() | frame["run_state"].notna(), "ERROR")


def compare_policies(sweep: Sweep, a: Mapping[str, Any], b: Mapping[str, Any]
                     ) -> tuple[pd.DataFrame, SweepResult, SweepResult]:
    """Outcome shares under overrides ``a`` and ``b`` and their difference (b - a).

    Both sides replay the same samples with the same seed streams, so a difference comes
    from the configuration alone. They replay the same run ids too, so a sweep persisting its
    runs cannot be compared (SweepError, before any sample runs); both sides' overrides are
    checked before either runs. When side A is interrupted, side B does not run; the table
    counts only the samples both sides completed (``result.interrupted`` tells which side
    stopped), so it never sets a partial side against a whole one.
    """
    if sweep.store_url is not None:
        raise SweepError("a policy comparison plays the same run ids under both policies, so "
                         "it cannot persist both into one database: compare without persisting")
    side_a = replace(sweep, overrides={**sweep.overrides, **a})
    side_b = replace(sweep, overrides={**sweep.overrides, **b})
    side_a.validate()
    side_b.validate()
    ra = side_a.run()
    rb = side_b.run() if not ra.interrupted else _not_run(side_b)
    return paired_table(ra.frame, rb.frame), ra, rb


def _not_run(sweep: Sweep) -> SweepResult:
    """The result of a side that did not run: no samples, interrupted."""
    return SweepResult.from_chunks([], sweep.points(), elapsed=0.0, interrupted=True,
                                   workers=sweep.workers, scenario=str(sweep.data.get("name")),
                                   axes=sweep.axes())


def paired_table(fa: pd.DataFrame, fb: pd.DataFrame) -> pd.DataFrame:
    """Every outcome's share on each side over the samples both completed, and the delta."""
    keys = ["grid", "sample"]
    both = fa[keys].merge(fb[keys], on=keys)
    la = outcome_label(fa.merge(both, on=keys))
    lb = outcome_label(fb.merge(both, on=keys))
    n = len(both)
    rows = []
    for label in sorted(set(la) | set(lb)):
        ka, kb = int((la == label).sum()), int((lb == label).sum())
        low_a, high_a = wilson(ka, n)
        low_b, high_b = wilson(kb, n)
        share_a, share_b = (ka / n, kb / n) if n else (0.0, 0.0)
        rows.append({"outcome": label, "count_a": ka, "share_a": share_a,
                     "ci_a": f"[{low_a:.3f}, {high_a:.3f}]", "count_b": kb,
                     "share_b": share_b, "ci_b": f"[{low_b:.3f}, {high_b:.3f}]",
                     "delta": share_b - share_a, "n": n})
    columns = ["outcome", "count_a", "share_a", "ci_a", "count_b", "share_b", "ci_b", "delta",
               "n"]
    return pd.DataFrame(rows, columns=columns).sort_values("delta", key=abs, ascending=False,
                                                          ignore_index=True)
