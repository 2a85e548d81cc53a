"""Sweep results: shares with Wilson intervals, plots, policy comparison."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.report.notebook import sweep_html
from harness_lab.report.plots import sweep_share
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
    ax = sweep_share(result, "config.deadline_s", "TIMED_OUT", "run_state")
    line = ax.lines[0]
    assert list(line.get_xdata()) == [5.0, 30.0]
    assert ax.get_xlabel() == "config.deadline_s (s)"
    assert ax.get_ylabel() == "share of samples with run_state=TIMED_OUT"
    assert ax.yaxis.get_major_formatter()(0.5, 0) == "50%"
    assert ax.get_legend().get_texts()[0].get_text() == "run_state=TIMED_OUT"
    assert ax.get_legend().get_title().get_text() == "bars: 95% Wilson interval"
    assert "(30 samples per point, 95% Wilson intervals)" in ax.get_title(loc="left")


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
    html = sweep_html(Sweep(sweep_data, samples=5, seed=1).run())
    assert "<dt>samples</dt><dd>10</dd>" in html


def test_a_grid_of_distributions_is_grouped_by_each_distribution_as_text(
        sweep_data: dict[str, Any]) -> None:
    grid = {"sweep.latency.tool": [{"uniform": [0.2, 1.0]}, {"uniform": [2.0, 6.0]}]}
    data = dict(sweep_data, sweep={**sweep_data["sweep"], "grid": grid})
    result = Sweep(data, samples=20, seed=2).run()
    shares = result.shares("run_state", by="sweep.latency.tool")
    assert set(shares["sweep.latency.tool"]) == {'{"uniform":[0.2,1.0]}',
                                                 '{"uniform":[2.0,6.0]}'}
    assert set(shares["n"]) == {20}
    assert result.points[0]["sweep.latency.tool"] == {"uniform": [0.2, 1.0]}


def test_the_share_plot_of_a_distribution_grid_labels_each_distribution(
        sweep_data: dict[str, Any]) -> None:
    grid = {"sweep.latency.tool": [{"uniform": [0.2, 1.0]}, {"uniform": [2.0, 6.0]}]}
    data = dict(sweep_data, sweep={**sweep_data["sweep"], "grid": grid})
    ax = sweep_share(Sweep(data, samples=10, seed=2).run(), "sweep.latency.tool", "SUCCESS",
                                                          "run_state")
    assert [t.get_text() for t in ax.get_xticklabels()] == ['{"uniform":[0.2,1.0]}',
                                                            '{"uniform":[2.0,6.0]}']


def _two_keys(sweep_data: dict[str, Any]) -> dict[str, Any]:
    grid = {"config.deadline_s": [5, 30], "sweep.faults.tool_error_p": [0.0, 0.9]}
    return dict(sweep_data, sweep={**sweep_data["sweep"], "grid": grid})


def test_shares_by_every_grid_key_never_pool_grid_points(sweep_data: dict[str, Any]) -> None:
    result = Sweep(_two_keys(sweep_data), samples=15, seed=2).run()
    shares = result.shares("run_state", by=result.axes)
    assert result.axes == ["config.deadline_s", "sweep.faults.tool_error_p"]
    groups = shares.groupby(result.axes)["count"].sum()
    assert list(groups.index) == [(5, 0.0), (5, 0.9), (30, 0.0), (30, 0.9)]
    assert set(groups) == {15}


def test_the_share_plot_draws_a_line_per_value_of_the_other_grid_keys(
        sweep_data: dict[str, Any]) -> None:
    result = Sweep(_two_keys(sweep_data), samples=10, seed=2).run()
    ax = sweep_share(result, "config.deadline_s", "TIMED_OUT", "run_state")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "run_state=TIMED_OUT, sweep.faults.tool_error_p=0.0",
        "run_state=TIMED_OUT, sweep.faults.tool_error_p=0.9"]
    assert [list(line.get_xdata()) for line in ax.lines[:2]] == [[5.0, 30.0], [5.0, 30.0]]


def test_errored_samples_are_shared_under_error(sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[{"kind": "crash", "at": {"call": "tool", "n": 1}}])
    result = Sweep(data, samples=10, seed=1).run()
    shares = result.shares("run_state", by="config.deadline_s")
    errors = shares[shares["run_state"] == "ERROR"]
    assert list(errors["count"]) == [10, 10]
    assert shares["run_state"].notna().all()


def _interrupt_on_call(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """The ``call``-th sweep made from here on (the command line's too) is interrupted after
    its first chunk; those before it play as the built-in backend does."""
    from collections.abc import Iterator

    from harness_lab.sweep import engine
    from harness_lab.sweep.engine import ChunkResult, run_chunk

    play_chunks = engine.play_chunks
    calls: list[int] = []

    def stopping(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
                 ) -> Iterator[ChunkResult]:
        calls.append(1)
        if len(calls) < call:
            yield from play_chunks(sweep, chunks, parallelism, client)
            return
        g, point, start, stop, _ = chunks[0]
        yield run_chunk(sweep.data, g, point, sweep.seed, start, stop)
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "play_chunks", stopping)


def test_an_interrupted_first_side_stops_the_comparison(sweep_data: dict[str, Any],
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    _interrupt_on_call(monkeypatch, 1)
    table, a, b = compare_policies(Sweep(sweep_data, samples=20, seed=4, chunk_size=5),
                                   {"config.deadline_s": 5}, {"config.deadline_s": 30})
    assert a.interrupted and a.samples == 5
    assert b.interrupted and b.samples == 0
    assert table.empty


def test_an_interrupted_second_side_is_compared_on_the_samples_both_completed(
        sweep_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt_on_call(monkeypatch, 2)
    table, a, b = compare_policies(Sweep(sweep_data, samples=20, seed=4, chunk_size=5),
                                   {"config.deadline_s": 5}, {"config.deadline_s": 30})
    assert a.samples == 20 and not a.interrupted
    assert b.samples == 5 and b.interrupted
    assert set(table["n"]) == {5}
    assert table["count_a"].sum() == table["count_b"].sum() == 5


def test_an_interrupted_comparison_exits_130(tmp_path: Any, sweep_data: dict[str, Any],
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from harness_lab.cli import main

    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    _interrupt_on_call(monkeypatch, 1)
    assert main(["sweep", str(path), "--samples", "20", "--compare", "config.deadline_s=5",
                 "--against", "config.deadline_s=30"]) == 130
    captured = capsys.readouterr()
    assert "comparison interrupted" in captured.err
    assert "delta" not in captured.out


def test_a_count_beyond_64_bits_keeps_the_table_and_its_value_exact() -> None:
    from harness_lab.sweep.chunk import ChunkResult
    from harness_lab.sweep.result import SweepResult
    from harness_lab.sweep.sample import Outcome

    outcomes = [Outcome(0, 0, "DIAGNOSIS", "FAILED", "FAILED", None, "FAILED", 1.0, 1, 1,
                        10**50, (), "StoreError: run run-g0-s0000000: total_tokens is 51 "
                        "digits long"),
                Outcome(0, 1, "DIAGNOSIS", "SUCCESS", "SUCCESS", None, "SUCCESS", 1.0, 1, 1, 7)]
    result = SweepResult.from_chunks([ChunkResult.of(0, 0, outcomes)], [{}], elapsed=1.0,
                                     interrupted=False, workers=1, scenario="s")
    assert result.frame["tokens"].tolist() == [10**50, 7]
    assert result.unstored == 1
    assert result.shares("run_state")["count"].sum() == 2
