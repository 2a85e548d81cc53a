"""A sweep checks its grid, its overrides and its arguments before any sample runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness_lab.cli import main
from harness_lab.errors import SweepError
from harness_lab.scenarios import ScenarioError
from harness_lab.sweep import engine
from harness_lab.sweep.compare import compare_policies
from harness_lab.sweep.engine import ChunkResult, Sweep


def _file(tmp_path: Path, data: dict[str, Any], grid: dict[str, Any]) -> Path:
    data = dict(data, sweep={**data["sweep"], "grid": grid})
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, default_flow_style=False), encoding="utf-8")
    return path


def _nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sweep made from here on fails the test if it plays a chunk (the built-in backend
    replaced: the command line builds its own sweeps)."""
    def refuse(sweep: Sweep, chunks: list[Any], parallelism: int, client: Any
               ) -> Iterator[ChunkResult]:
        raise AssertionError("a sample ran")

    monkeypatch.setattr(engine, "play_chunks", refuse)


def test_a_bad_grid_value_names_the_file_the_grid_key_and_the_line_before_anything_runs(
        tmp_path: Path, sweep_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [4, "abc"]})
    _nothing_runs(monkeypatch)
    with pytest.raises(ScenarioError) as caught:
        Sweep.from_file(path, samples=5).run()
    [problem] = caught.value.problems
    lines = path.read_text(encoding="utf-8").splitlines()
    assert problem.path == str(path)
    assert problem.field == "sweep.grid.config.deadline_s"
    assert lines[problem.line - 1].strip() == "- abc"
    assert "value 1 ('abc')" in problem.message


@pytest.mark.parametrize("grid", [{"config.deadlin_s": [4, 6]},
                                  {"sweep.faults.tool_error_p": [0.1, 1.5]}])
def test_a_grid_the_scenario_rejects_is_a_usage_error(
        tmp_path: Path, sweep_data: dict[str, Any], grid: dict[str, Any],
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, sweep_data, grid)
    assert main(["sweep", str(path), "--samples", "5"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err
    assert f"sweep.grid.{next(iter(grid))}" in err
    assert "Traceback" not in err


def test_a_grid_value_given_twice_is_refused(tmp_path: Path, sweep_data: dict[str, Any]
                                             ) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [4, 4.0, 12]})
    with pytest.raises(ScenarioError, match=r"value 1 \(4.0\) repeats value 0"):
        Sweep.from_file(path, samples=5).run()


@pytest.mark.parametrize("flag", ["--set", "--compare", "--against"])
def test_a_misspelt_override_is_a_usage_error_naming_it_and_the_key_meant(
        tmp_path: Path, sweep_data: dict[str, Any], flag: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [5, 30]})
    assert main(["sweep", str(path), "--samples", "5", flag, "config.deadlin_s=3"]) == 2
    err = capsys.readouterr().err
    assert ("override config.deadlin_s: 3: config.deadlin_s: unknown key; "
            "did you mean 'deadline_s'?") in err
    assert "sweep.grid" not in err


def test_an_override_under_a_misspelt_block_names_the_block_as_a_file_would(
        tmp_path: Path, sweep_data: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [5, 30]})
    assert main(["sweep", str(path), "--samples", "5", "--set", "latncy.model=2"]) == 2
    assert "override latncy.model: 2: latncy: unknown key; did you mean 'latency'?" \
        in capsys.readouterr().err


def test_a_comparison_checks_both_sides_before_either_runs(
        sweep_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_runs(monkeypatch)
    with pytest.raises(ScenarioError, match="override config.deadlin_s"):
        compare_policies(Sweep(sweep_data, samples=5), {"config.deadline_s": 5},
                         {"config.deadlin_s": 30})


def test_overriding_a_grid_key_replaces_that_axis(sweep_data: dict[str, Any]) -> None:
    result = Sweep(sweep_data, samples=10, seed=1, overrides={"config.deadline_s": 7}).run()
    assert result.points == [{"config.deadline_s": 7}]
    assert result.samples == 10
    assert result.summary()["grid_points"] == 1


def test_a_comparison_of_a_grid_key_plays_the_samples_asked_for_on_each_side(
        sweep_data: dict[str, Any]) -> None:
    table, a, b = compare_policies(Sweep(sweep_data, samples=25, seed=4),
                                   {"config.deadline_s": 5}, {"config.deadline_s": 30})
    assert a.samples == b.samples == 25
    assert set(table["n"]) == {25}


def test_negative_workers_count_back_from_every_core(sweep_data: dict[str, Any]) -> None:
    cores = os.cpu_count() or 1
    assert Sweep(sweep_data, workers=-1).local_workers() == cores
    assert Sweep(sweep_data, workers=-cores - 5).local_workers() == 1


@pytest.mark.parametrize("field,value", [("samples", 0), ("samples", -5), ("workers", 0),
                                         ("keep_failures", -1)])
def test_a_sweep_of_impossible_size_is_refused(sweep_data: dict[str, Any], field: str,
                                               value: int) -> None:
    with pytest.raises(SweepError, match=field):
        Sweep(sweep_data, **{field: value}).run()


@pytest.mark.parametrize("args,message", [
    (["--column", "run_sate"], "--column 'run_sate' is not an outcome column"),
    (["--plot", "x.png"], "--plot needs --value"),
    (["--plot", "x.png", "--value", "TIMED_OUT", "--set", "config.deadline_s=5"],
     "--plot needs a grid"),
    (["--column", "run_state", "--value", "TIMEDOUT", "--plot", "x.png"],
     "--value 'TIMEDOUT' is not a value of run_state"),
])
def test_bad_table_and_plot_arguments_are_usage_errors(
        tmp_path: Path, sweep_data: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [5, 30]})
    _nothing_runs(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(path), "--samples", "5", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args", [["--samples", "-5"], ["--workers", "0"]])
def test_a_negative_sample_count_or_no_workers_is_refused_by_the_command(
        tmp_path: Path, sweep_data: dict[str, Any], args: list[str]) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [5, 30]})
    with pytest.raises(SystemExit) as caught:
        main(["sweep", str(path), *args])
    assert caught.value.code == 2


def test_an_unreachable_scheduler_is_a_clear_error(sweep_data: dict[str, Any]) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(SweepError, match="cannot reach the dask scheduler at 'tcp://127.0.0.1:9'"):
        Sweep(sweep_data, samples=5, scheduler="tcp://127.0.0.1:9", connect_timeout_s=1).run()


def test_a_grid_integer_beyond_64_bits_is_refused_naming_its_line(
        tmp_path: Path, sweep_data: dict[str, Any]) -> None:
    path = _file(tmp_path, sweep_data, {"config.budget.tokens": [1000, 10**50]})
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    with pytest.raises(ScenarioError) as caught:  # as the Python API gets it, past the loader
        Sweep(data, samples=5, source=str(path)).validate()
    [problem] = caught.value.problems
    lines = path.read_text(encoding="utf-8").splitlines()
    assert problem.field == "sweep.grid.config.budget.tokens"
    assert lines[problem.line - 1].strip() == f"- {10**50}"
    assert problem.message == ("value 1: an integer of 51 digits is beyond the 64-bit range "
                               "a run's values are stored in")


@pytest.mark.parametrize("value, message", [
    (float("inf"), "inf is not a finite number"),
    (float("nan"), "nan is not a finite number"),
    ({"fixed": [1, {"x": -(10**30)}]}, "an integer of 31 digits is beyond the 64-bit range"),
])
def test_an_override_no_run_can_take_is_refused_by_name(
        sweep_data: dict[str, Any], value: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        Sweep(sweep_data, samples=5, overrides={"config.deadline_s": value}).validate()
    [problem] = caught.value.problems
    assert problem.field == "override config.deadline_s"
    assert problem.message.startswith(message)


def test_an_override_nested_deeper_than_any_recursion_is_refused_without_recursing(
        sweep_data: dict[str, Any]) -> None:
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ScenarioError, match="nests deeper than 32 levels"):
        Sweep(sweep_data, samples=5, overrides={"config.deadline_s": deep}).validate()


def test_an_override_too_big_to_be_a_setting_is_refused(sweep_data: dict[str, Any]) -> None:
    with pytest.raises(ScenarioError, match="holds more than 10,000 items"):
        Sweep(sweep_data, samples=5, overrides={"tags": list(range(20_000))}).validate()


@pytest.mark.parametrize("distribution", [{"fixed": float("inf")},
                                          {"uniform": [0.5, float("inf")]},
                                          {"lognormal": {"median": float("nan"), "sigma": 1}},
                                          {"empirical": [1.0, float("inf")]}])
def test_a_latency_distribution_that_is_not_finite_is_refused(
        sweep_data: dict[str, Any], distribution: dict[str, Any]) -> None:
    data = dict(sweep_data, sweep={**sweep_data["sweep"], "latency": {"tool": distribution}})
    with pytest.raises(ScenarioError, match="finite number"):
        Sweep(data, samples=5).validate()


def test_a_grid_of_more_points_than_a_sweep_runs_is_refused_before_any_point_is_built(
        sweep_data: dict[str, Any]) -> None:
    grid = {f"config.policy.x{i}": list(range(10)) for i in range(6)}
    data = dict(sweep_data, sweep={**sweep_data["sweep"], "grid": grid})
    with pytest.raises(SweepError, match=r"the grid has more than 10,000 points "
                                         r"\(10 x 10 x 10 x 10 x 10 x 10\); sweep fewer "):
        Sweep(data, samples=5).validate()


def test_more_runs_than_a_sweep_keeps_rows_for_are_refused(sweep_data: dict[str, Any]) -> None:
    with pytest.raises(SweepError, match="100,000,000 samples x 2 grid points is more than "
                                         "100,000,000 runs"):
        Sweep(sweep_data, samples=100_000_000).validate()


def test_resuming_needs_a_database(sweep_data: dict[str, Any]) -> None:
    with pytest.raises(SweepError, match="resume needs the database the sweep persisted into"):
        Sweep(sweep_data, samples=5, resume=True).validate()


def test_more_workers_than_cores_are_capped_with_a_note(sweep_data: dict[str, Any]) -> None:
    from harness_lab.sweep.engine import available_cores

    cores = available_cores()
    sweep = Sweep(sweep_data, samples=5, workers=1000)
    assert sweep.local_workers() == cores
    assert sweep.worker_note() == (f"1000 workers asked, {cores} used: this machine lets the "
                                   f"sweep use {cores} cores, and more processes than cores "
                                   "only cost memory")
    assert Sweep(sweep_data, workers=-1).local_workers() == cores
    assert Sweep(sweep_data, workers=-1000).local_workers() == 1
    assert Sweep(sweep_data, workers=1).worker_note() is None
