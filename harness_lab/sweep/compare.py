"""Policy comparison: the same sweep (same seed, same samples) under two configurations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from harness_lab.errors import SweepError
from harness_lab.sweep.engine import Sweep
from harness_lab.sweep.result import SweepResult, wilson

__all__ = ["compare_policies", "outcome_label"]


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
    runs cannot be compared (SweepError, before any sample runs).
    """
    if sweep.store_url is not None:
        raise SweepError("a policy comparison plays the same run ids under both policies, so "
                         "it cannot persist both into one database: compare without persisting")
    ra = replace(sweep, overrides={**sweep.overrides, **a}).run()
    rb = replace(sweep, overrides={**sweep.overrides, **b}).run()
    la, lb = outcome_label(ra.frame), outcome_label(rb.frame)
    na, nb = len(la), len(lb)
    labels = sorted(set(la) | set(lb))
    rows = []
    for label in labels:
        ka, kb = int((la == label).sum()), int((lb == label).sum())
        low_a, high_a = wilson(ka, na)
        low_b, high_b = wilson(kb, nb)
        rows.append({"outcome": label, "count_a": ka, "share_a": ka / na if na else 0.0,
                     "ci_a": f"[{low_a:.3f}, {high_a:.3f}]", "count_b": kb,
                     "share_b": kb / nb if nb else 0.0, "ci_b": f"[{low_b:.3f}, {high_b:.3f}]",
                     "delta": (kb / nb if nb else 0.0) - (ka / na if na else 0.0)})
    table = pd.DataFrame(rows).sort_values("delta", key=abs, ascending=False,
                                            ignore_index=True)
    return table, ra, rb
