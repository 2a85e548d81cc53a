"""``harness-lab sweep``: shares, CSV rows, kept records, comparison."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness_lab.cli import main


@pytest.fixture
def sweep_file(tmp_path: Path, sweep_data: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    return path


def test_the_sweep_command_prints_shares_per_grid_value(sweep_file: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["sweep", str(sweep_file), "--samples", "20", "--seed", "3",
                 "--format", "csv", "--column", "run_state"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["config.deadline_s"] for r in rows] == ["5"] * 6 + ["30"] * 6
    assert {r["n"] for r in rows} == {"20"}


def test_the_sweep_command_writes_every_sample_and_the_kept_records(
        sweep_file: Path, tmp_path: Path) -> None:
    out, kept = tmp_path / "samples.csv", tmp_path / "kept.json"
    assert main(["sweep", str(sweep_file), "--samples", "10", "--out", str(out),
                 "--keep-every", "5", "--records-out", str(kept)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1 + 20
    data = json.loads(kept.read_text(encoding="utf-8"))
    assert len(data["kept"]) == 4  # samples 0 and 5 of both grid points
    assert {k["run_state"] for k in data["kept"]} <= {"SUCCESS", "TIMED_OUT", "CANCELLED",
                                                       "FAILED"}


def test_a_malformed_sweep_file_is_a_usage_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndescription: y\nsweep: {latency: {modle: {fixed: 1}}}\n",
                   encoding="utf-8")
    assert main(["sweep", str(bad)]) == 2
    assert "latency: unknown call kind(s) ['modle']" in capsys.readouterr().err


def test_a_second_sweep_into_the_same_database_is_refused_with_the_reason(
        sweep_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    args = ["sweep", str(sweep_file), "--samples", "3", "--persist", url]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 2
    assert "already holds run run-g0-s0000000 of this sweep" in capsys.readouterr().err


def test_a_grid_of_distributions_is_tabulated_and_every_sample_written(
        tmp_path: Path, sweep_data: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    grid = {"sweep.latency.tool": [{"uniform": [0.2, 1.0]}, {"uniform": [2.0, 6.0]}]}
    path = tmp_path / "dist.yaml"
    path.write_text(yaml.safe_dump(dict(sweep_data, sweep={**sweep_data["sweep"],
                                                           "grid": grid})), encoding="utf-8")
    out = tmp_path / "samples.csv"
    assert main(["sweep", str(path), "--samples", "6", "--out", str(out),
                 "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["sweep.latency.tool"] for r in rows} == {'{"uniform":[0.2,1.0]}',
                                                       '{"uniform":[2.0,6.0]}'}
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1 + 12


def test_the_sweep_command_groups_by_every_grid_key(
        tmp_path: Path, sweep_data: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    grid = {"config.deadline_s": [5, 30], "sweep.faults.tool_error_p": [0.0, 0.9]}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(dict(sweep_data, sweep={**sweep_data["sweep"],
                                                           "grid": grid})), encoding="utf-8")
    plot = tmp_path / "plot.png"
    assert main(["sweep", str(path), "--samples", "8", "--format", "csv", "--column",
                 "run_state", "--plot", str(plot), "--value", "TIMED_OUT"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    pairs = {(r["config.deadline_s"], r["sweep.faults.tool_error_p"]) for r in rows}
    assert pairs == {("5", "0.0"), ("5", "0.9"), ("30", "0.0"), ("30", "0.9")}
    assert {r["n"] for r in rows} == {"8"}
    assert plot.read_bytes().startswith(b"\x89PNG")
