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
from tests.cli.conftest import ROOT, on_a_terminal
from tests.sweep.conftest import sweep_data

__all__ = ["sweep_data"]


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
    err = capsys.readouterr().err
    assert "runs.db already holds a sweep (scenario 'sweep-fixture', seed 0, 3 samples x 2 " \
           "grid points, started " in err
    assert err.rstrip().endswith("persist each sweep into a fresh database, or add --resume "
                                 "to complete that one")


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


@pytest.mark.parametrize("flag", ["--out", "--records-out", "--plot"])
def test_an_output_in_a_missing_directory_is_refused_before_any_sample_runs(
        sweep_file: Path, tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
        ) -> None:
    db = tmp_path / "runs.db"
    target = tmp_path / "missing" / "out.file"
    assert main(["sweep", str(sweep_file), "--samples", "50", "--persist", f"sqlite:///{db}",
                 "--value", "TIMED_OUT", flag, str(target)]) == 2
    assert capsys.readouterr().err == (
        f"harness-lab sweep: {flag} {target}: the directory {target.parent} does not exist; "
        "create it first\n")
    assert not db.exists()  # refused before the database was even opened


@pytest.mark.parametrize("flag", ["--out", "--records-out", "--plot"])
def test_an_output_on_a_directory_or_a_fifo_is_refused_before_any_sample_runs(
        sweep_file: Path, tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
        ) -> None:
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    common = ["sweep", str(sweep_file), "--samples", "50", "--value", "TIMED_OUT"]
    assert main([*common, flag, str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"harness-lab sweep: {flag} {tmp_path} is a directory; give a file name\n")
    assert main([*common, flag, str(fifo)]) == 2
    assert capsys.readouterr().err == f"harness-lab sweep: {flag} {fifo} is not a regular file\n"


def test_two_outputs_on_one_file_are_refused(sweep_file: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "same"
    assert main(["sweep", str(sweep_file), "--out", str(out), "--records-out", str(out)]) == 2
    assert "--out, --records-out and --plot must name different files" in capsys.readouterr().err


@pytest.mark.parametrize("url, reason", [
    ("runs.db", "'runs.db' is not a database URL"),
    ("sqlite:///{tmp}/no/runs.db", "the directory {tmp}/no does not exist"),
    ("sqlite:///{tmp}", "{tmp} is a directory, not a database file"),
    ("sqlite:///{tmp}/notes.txt", "DatabaseError: file is not a database"),
    ("sqlite:///file:{tmp}/ro.db?mode=ro&uri=true", "attempt to write a readonly database"),
    ("sqlite://", "is an in-memory database: each worker would write its own"),
])
def test_a_database_the_sweep_cannot_write_is_refused_in_one_line_before_any_sample_runs(
        sweep_file: Path, tmp_path: Path, url: str, reason: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.store.target import open_writable

    (tmp_path / "notes.txt").write_text("notes\n" * 300, encoding="utf-8")
    open_writable(f"sqlite:///{tmp_path / 'ro.db'}").close()
    out = tmp_path / "samples.csv"
    assert main(["sweep", str(sweep_file), "--samples", "20", "--out", str(out),
                 "--persist", url.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness-lab sweep: ")
    assert reason.format(tmp=tmp_path) in err
    assert len(err.splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_a_sweep_whose_worker_is_killed_once_runs_its_chunks_again_loses_nothing_and_exits_0(
        sweep_file: Path) -> None:
    from harness_lab.sweep.engine import available_cores
    from tests.sweep.processes import kill_a_worker, start_sweep

    if available_cores() < 2:
        pytest.skip("needs two worker processes")
    proc = start_sweep([str(sweep_file), "--samples", "2000", "--workers", "2"])
    kill_a_worker(proc.pid)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "lost=0" in err.split() and "incomplete:" not in err
    # the chunk the killed worker ran, and the one the other worker ran at most
    assert [x for x in err.splitlines() if "ran again" in x] in (
        ["note: 1 chunk ran again after a worker process died"],
        ["note: 2 chunks ran again after a worker process died"])


@pytest.mark.slow
def test_a_sweep_with_a_chunk_that_kills_its_worker_every_time_loses_that_chunk_alone(
        sweep_file: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.sweep.engine import Sweep, available_cores
    from tests.sweep.jobs import dies_on_the_first_chunk

    if available_cores() < 2:
        pytest.skip("needs two worker processes")
    monkeypatch.setattr("harness_lab.sweep.engine.run_chunk", dies_on_the_first_chunk)
    assert main(["sweep", str(sweep_file), "--samples", "40", "--workers", "2"]) == 1
    err = capsys.readouterr().err
    sweep = Sweep.from_file(sweep_file, samples=40, workers=2)
    _, _, start, stop, _ = sweep._chunks(2)[0]
    runs = 40 * len(sweep.points())
    [line] = [x for x in err.splitlines() if x.startswith("incomplete:")]
    assert line.startswith(f"incomplete: {stop - start} of {runs} samples lost "
                           "(TerminatedWorkerError: ")
    assert any(x.startswith("note: ") and x.endswith(" ran again after a worker process died")
               for x in err.splitlines())


@pytest.fixture
def refusing_db(tmp_path: Path) -> Path:
    """A database whose rule refuses two of the sweep fixture's runs."""
    import sqlite3

    from harness_lab.store.target import open_writable

    db = tmp_path / "runs.db"
    open_writable(f"sqlite:///{db}").close()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON trace_event WHEN NEW.run_id IN "
                     "('run-g0-s0000001', 'run-g1-s0000002') "
                     "BEGIN SELECT RAISE(ABORT, 'refused by the audit rule'); END")
    return db


def test_runs_the_database_refuses_are_counted_and_the_sweep_exits_1(
        sweep_file: Path, refusing_db: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.report.frames import read_runs

    db = refusing_db
    out = tmp_path / "samples.csv"
    code = main(["sweep", str(sweep_file), "--samples", "4", "--persist", f"sqlite:///{db}",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "incomplete: 2 of 8 runs were not stored (their error names the store's reason)" \
        in err
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    refused = {(r["grid"], r["sample"]): r["error"] for r in rows if r["error"]}
    assert set(refused) == {("0", "1"), ("1", "2")}
    assert all("refused by the audit rule" in e for e in refused.values())
    assert len(read_runs(f"sqlite:///{db}")) == 6  # the other runs are all stored


def test_what_a_sweep_says_of_its_failures_wraps_to_the_terminal(
        sweep_file: Path, refusing_db: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["sweep", str(sweep_file), "--samples", "4", "--persist",
                 f"sqlite:///{refusing_db}", "--no-log", "-q"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert max(map(len, lines)) <= 80, lines
    said = " ".join(line.strip() for line in lines)
    assert ("incomplete: 2 of 8 runs were not stored (their error names the store's reason)"
            in said)
    assert said.count("failure: {'grid': ") == 2


@pytest.mark.slow
def test_more_workers_than_cores_print_a_note(sweep_file: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.sweep.engine import available_cores

    assert main(["sweep", str(sweep_file), "--samples", "2", "--workers", "1000"]) == 0
    assert f"note: 1000 workers asked, {available_cores()} used" in capsys.readouterr().err


def test_an_output_over_the_scenario_or_the_database_is_refused(
        sweep_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "runs.db"
    before = sweep_file.read_bytes()
    assert main(["sweep", str(sweep_file), "--records-out", str(sweep_file)]) == 2
    assert capsys.readouterr().err == (
        f"harness-lab sweep: an output would overwrite the scenario file {sweep_file}; write "
        "it to another file\n")
    assert sweep_file.read_bytes() == before
    assert main(["sweep", str(sweep_file), "--persist", f"sqlite:///{db}", "--out",
                 str(db)]) == 2
    assert "an output would overwrite the --persist database" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize("setting, message", [
    ("config.deadline_s=[unclosed", "harness-lab sweep: config.deadline_s='[unclosed': the "
                                    "value is not YAML (expected ',' or ']', but got '<stream "
                                    "end>')\n"),
    ("config.deadline_s", "harness-lab sweep: expected KEY=VALUE, got 'config.deadline_s'\n"),
    ("=5", "harness-lab sweep: expected KEY=VALUE, got '=5'\n"),
])
def test_a_setting_that_cannot_be_read_is_a_usage_error_in_one_line(
        sweep_file: Path, setting: str, message: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(sweep_file), "--set", setting]) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("option, value, says", [
    ("--samples", "x", "not a whole number: 'x'"),
    ("--workers", "1.5", "not a whole number: '1.5'"),
    ("--seed", "abc", "not a whole number: 'abc'"),
    ("--commit-every", "0", "must be at least 1, got 0"),
    ("--keep-failures", "-2", "must be at least 0, got -2"),
    ("--keep-every", "-1", "must be at least 0, got -1"),
])
def test_a_count_option_out_of_range_is_refused_naming_the_option(
        sweep_file: Path, option: str, value: str, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["sweep", str(sweep_file), option, value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"harness-lab sweep: error: argument {option}: {says}")


def test_a_sweep_table_drops_empty_categories_that_csv_keeps(
        capsys: pytest.CaptureFixture[str]) -> None:
    canonical = str(ROOT / "benchmarks" / "canonical.yaml")
    assert main(["sweep", canonical, "--samples", "10"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in table] == [["release_outcome", "count"],
                                                    ["SUCCESS", "10"]]
    assert main(["sweep", canonical, "--samples", "10", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["release_outcome"], r["count"]) for r in rows] == [
        ("SUCCESS", "10"), ("FALLBACK", "0"), ("FAILED", "0"), ("CANCELLED", "0")]


@pytest.mark.slow  # two sweeps on a pseudo-terminal
def test_sweep_draws_progress_on_a_terminal_unless_quiet() -> None:
    canonical = str(ROOT / "benchmarks" / "canonical.yaml")
    assert "sweep chunks" in on_a_terminal("sweep", canonical, "--samples", "400")
    assert "sweep chunks" not in on_a_terminal("sweep", canonical, "--samples", "400",
                                                "--quiet")


def test_the_summary_wraps_to_the_terminal_between_its_pairs(
        sweep_file: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["sweep", str(sweep_file), "--samples", "20", "--no-log", "-q"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 60
    pairs = " ".join(lines).split()
    assert pairs[:3] == ["scenario=sweep-fixture", "samples=40", "grid_points=2"]
    assert all(pair.count("=") == 1 for pair in pairs)
