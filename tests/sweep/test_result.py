"""Sweep results: shares with Wilson intervals, plots, policy comparison."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.sweep.compare import compare_policies
from harness_lab.sweep.engine import Sweep
from harness_lab.sweep.result import wilson


def test_the_wilson_interval_of_known_proportions() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0


def test_shares_per_grid_value_sum_to_one(sweep_data: dict[str, Any]) -> None:
    result = Sweep(sweep_data, samples=50, seed=2).run()
    shares = result.shares("run_state", by="config.deadline_s")
    totals = shares.groupby("config.deadline_s")["share"].sum()
    assert list(totals.round(9)) == [1.0, 1.0]
    assert set(shares["n"]) == {50}


def test_the_share_plot_has_one_point_per_grid_value_with_error_bars(
        sweep_data: dict[str, Any]) -> None:
    result = Sweep(sweep_data, samples=30, seed=2).run()
    ax = result.plot_share("config.deadline_s", "TIMED_OUT", "run_state")
    line = ax.lines[0]
    assert list(line.get_xdata()) == [5.0, 30.0]
    assert ax.get_xlabel() == "config.deadline_s"
    assert ax.get_legend().get_texts()[0].get_text() == "run_state=TIMED_OUT"


def test_comparing_two_deadlines_shows_fewer_timeouts_for_the_longer_one(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, sweep={**sweep_data["sweep"], "grid": {}})
    table, a, b = compare_policies(Sweep(data, samples=100, seed=4),
                                   {"config.deadline_s": 5}, {"config.deadline_s": 30})
    row = table.set_index("outcome").loc["TIMED_OUT / FAILED / -"]
    assert row["share_a"] > row["share_b"]
    assert row["delta"] == pytest.approx(row["share_b"] - row["share_a"])
    assert a.samples == b.samples == 100


def test_a_result_shows_its_summary_in_a_notebook(sweep_data: dict[str, Any]) -> None:
    html = Sweep(sweep_data, samples=5, seed=1).run()._repr_html_()
    assert "<th>samples</th><td>10</td>" in html
