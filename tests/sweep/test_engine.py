"""The sweep engine: seeded, order-independent, streaming, resilient."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from harness_lab.sweep.engine import ChunkResult, Sweep, grid_points, run_chunk


def test_grid_points_are_the_product_of_the_grid_in_order() -> None:
    assert grid_points({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    assert grid_points({}) == [{}]


def test_a_sweep_has_one_row_per_sample_and_grid_point(sweep_data: dict[str, Any]) -> None:
    result = Sweep(sweep_data, samples=40, seed=7).run()
    assert result.samples == 80
    assert sorted(result.frame["config.deadline_s"].unique()) == [5, 30]


def test_the_same_seed_gives_the_same_outcomes_whatever_the_chunking(
        sweep_data: dict[str, Any]) -> None:
    a = Sweep(sweep_data, samples=60, seed=11, chunk_size=60).run().frame
    b = Sweep(sweep_data, samples=60, seed=11, chunk_size=7).run().frame
    pd.testing.assert_frame_equal(a, b)


def test_the_same_seed_gives_the_same_outcomes_on_two_worker_processes(
        sweep_data: dict[str, Any]) -> None:
    a = Sweep(sweep_data, samples=40, seed=5, workers=1).run().frame
    b = Sweep(sweep_data, samples=40, seed=5, workers=2, chunk_size=9).run().frame
    pd.testing.assert_frame_equal(a, b)


def test_a_different_seed_gives_different_draws(sweep_data: dict[str, Any]) -> None:
    a = Sweep(sweep_data, samples=40, seed=1).run().frame["duration_s"]
    b = Sweep(sweep_data, samples=40, seed=2).run().frame["duration_s"]
    assert not a.equals(b)


def test_a_longer_deadline_times_out_less(sweep_data: dict[str, Any]) -> None:
    frame = Sweep(sweep_data, samples=200, seed=3).run().frame
    timed_out = frame.groupby("config.deadline_s")["run_state"].apply(
        lambda s: (s == "TIMED_OUT").mean())
    assert timed_out[5] > 0.5
    assert timed_out[30] < 0.05


def test_a_crash_inside_one_sample_becomes_an_error_row_and_the_sweep_goes_on(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[{"kind": "crash", "at": {"call": "tool", "n": 2}}])
    result = Sweep(data, samples=10, seed=1, overrides={"config.deadline_s": 30}).run()
    errors = result.frame["error"].dropna()
    assert len(result.frame) == 10
    assert errors.str.startswith("crash: injected crash").sum() >= 1
    assert result.failures and result.failures[0]["error"].startswith("crash:")


def test_an_interrupted_sweep_keeps_every_completed_chunk(sweep_data: dict[str, Any]) -> None:
    def interrupted(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
                    ) -> Iterator[ChunkResult]:
        g, point, start, stop, _ = chunks[0]
        yield run_chunk(sweep_data, g, point, 1, start, stop)
        raise KeyboardInterrupt

    result = Sweep(sweep_data, samples=10, seed=1, chunk_size=5, backend=interrupted).run()
    assert result.interrupted is True
    assert list(result.frame["sample"]) == [0, 1, 2, 3, 4]


def test_failures_are_kept_but_capped(sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[{"kind": "crash", "at": {"call": "tool", "n": 1}}])
    result = Sweep(data, samples=30, seed=1, keep_failures=3, chunk_size=30).run()
    assert len(result.failures) == 6  # three per grid point (one chunk each)


def test_every_run_can_be_persisted_to_a_sqlite_file(sweep_data: dict[str, Any],
                                                     tmp_path: Any) -> None:
    from harness_lab.report.frames import read_runs

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    result = Sweep(sweep_data, samples=5, seed=1, store_url=url).run()
    stored = read_runs(url)
    assert len(stored) == 10
    assert sorted(stored["run_state"].astype(str)) == sorted(
        result.frame["run_state"].astype(str))


def test_a_sweep_refuses_a_database_that_already_holds_its_runs_and_keeps_them(
        sweep_data: dict[str, Any], tmp_path: Any) -> None:
    from harness_lab.errors import SweepError
    from harness_lab.report.frames import read_runs

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Sweep(sweep_data, samples=5, seed=1, store_url=url).run()
    before = read_runs(url)
    with pytest.raises(SweepError, match="already holds a sweep \\(scenario 'sweep-fixture', "
                       "seed 1, 5 samples x 2 grid points"):
        Sweep(sweep_data, samples=8, seed=2, store_url=url).run()
    assert read_runs(url).equals(before)


def test_a_persisting_sweep_cannot_be_compared_under_two_policies(
        sweep_data: dict[str, Any], tmp_path: Any) -> None:
    from harness_lab.errors import SweepError
    from harness_lab.sweep.compare import compare_policies

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(SweepError, match="cannot persist both"):
        compare_policies(Sweep(sweep_data, samples=5, store_url=url),
                         {"config.no_gain_threshold": 2}, {"config.no_gain_threshold": 3})
