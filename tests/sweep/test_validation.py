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
from harness_lab.sweep.compare import compare_policies
from harness_lab.sweep.engine import ChunkResult, Sweep


def _file(tmp_path: Path, data: dict[str, Any], grid: dict[str, Any]) -> Path:
    data = dict(data, sweep={**data["sweep"], "grid": grid})
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, default_flow_style=False), encoding="utf-8")
    return path


def _nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Sweep, chunks: list[Any], parallelism: int, client: Any
               ) -> Iterator[ChunkResult]:
        raise AssertionError("a sample ran")

    monkeypatch.setattr(Sweep, "_execute", refuse)


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
def test_a_misspelt_override_is_a_usage_error_naming_it(
        tmp_path: Path, sweep_data: dict[str, Any], flag: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, sweep_data, {"config.deadline_s": [5, 30]})
    assert main(["sweep", str(path), "--samples", "5", flag, "config.deadlin_s=3"]) == 2
    err = capsys.readouterr().err
    assert "override config.deadlin_s: 3: config.deadlin_s: Extra inputs are not permitted" \
        in err
    assert "sweep.grid" not in err


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
