"""The load model: Poisson arrivals sharing a limited provider."""

from __future__ import annotations

from typing import Any

from harness_lab.sweep.load import load_curve, run_load


def test_more_arrivals_on_a_small_provider_queue_and_time_out_more(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[])
    data["sweep"] = {"latency": {"model": {"fixed": 1.0}, "tool": {"fixed": 1.0}}}
    light = run_load(data, 0.1, capacity={"model": 1, "tool": 1}, duration_s=100, seed=1,
                     overrides={"config.deadline_s": 20})
    heavy = run_load(data, 2.0, capacity={"model": 1, "tool": 1}, duration_s=100, seed=1,
                     overrides={"config.deadline_s": 20})
    curve = load_curve([light, heavy]).set_index("arrival_rate")
    assert heavy.runs > light.runs
    assert curve.loc[0.1, "timed_out_share"] == 0.0
    assert curve.loc[2.0, "timed_out_share"] > 0.5
    assert curve.loc[2.0, "mean_duration_s"] > curve.loc[0.1, "mean_duration_s"]


def test_a_load_run_with_unlimited_providers_takes_the_plain_latencies(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[])
    data["sweep"] = {"latency": {"model": {"fixed": 1.0}, "tool": {"fixed": 1.0}}}
    point = run_load(data, 1.0, capacity={}, duration_s=20, seed=2,
                     overrides={"config.deadline_s": 60})
    assert set(point.frame["duration_s"].round(9)) == {5.0}


def test_the_load_command_prints_one_curve_row_per_grid_point_capacity_and_rate(
        tmp_path: Any, capsys: Any) -> None:
    import csv
    import io

    import yaml

    from harness_lab.cli import main
    from tests.sweep.conftest import SWEEP

    data = yaml.safe_load(SWEEP)
    data["sweep"]["load"] = {"arrival_rate": [0.2, 1.0], "duration_s": 30,
                             "capacity": [{"model": 1}, {"model": 8}]}
    path = tmp_path / "load.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["sweep", str(path), "--load", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["config.deadline_s"], r["capacity"], r["arrival_rate"]) for r in rows] == [
        ("5", "model=1", "0.2"), ("5", "model=1", "1.0"), ("5", "model=8", "0.2"),
        ("5", "model=8", "1.0"), ("30", "model=1", "0.2"), ("30", "model=1", "1.0"),
        ("30", "model=8", "0.2"), ("30", "model=8", "1.0")]


def test_every_arriving_run_plays_a_scripted_router_sequence_from_its_first_step(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[], router=[{"intent": "DIAGNOSIS"}])
    data["sweep"] = {"latency": {"model": {"fixed": 1.0}, "tool": {"fixed": 1.0}}}
    point = run_load(data, 1.0, capacity={}, duration_s=10, seed=3,
                     overrides={"config.deadline_s": 60})
    assert point.runs > 3
    assert set(point.frame["release_outcome"]) == {"SUCCESS"}


def test_a_router_error_scripted_first_fails_every_run_not_only_the_first(
        sweep_data: dict[str, Any]) -> None:
    data = dict(sweep_data, faults=[], router=[{"error": "router down"}, {"intent": "DIAGNOSIS"}])
    data["sweep"] = {"latency": {"model": {"fixed": 1.0}, "tool": {"fixed": 1.0}}}
    point = run_load(data, 1.0, capacity={}, duration_s=10, seed=4,
                     overrides={"config.deadline_s": 60})
    assert point.runs > 3
    assert set(point.frame["run_state"]) == {"FAILED"}
