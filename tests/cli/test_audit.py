"""harness-lab audit and calibrate on the command line: a progress bar with the rate on a
terminal, nothing on standard error in a pipe, the same report either way."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.fakes import draft
from harness_lab.store.sql import SqlRunStore
from tests.audit.test_calibrate import comment
from tests.conftest import build, finished_before_created, outcomes_log, tampered_log

SUMMARY = ("3 run(s): 3 checked, 0 incomplete (RUNNING, no RUN_FINISHED), 0 with violations\n"
           "not checked (the source holds no SSE events): late_content_refused, sse_protocol\n")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def database(tmp_path: Path) -> str:
    """A SQLite database of three stored FALLBACK runs."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    harness = build([draft(missing_info=["which service"])] * 3, store=SqlRunStore(url))
    for _ in range(3):
        harness.run("it is slow")
    return url


def test_audit_draws_runs_and_their_rate_on_a_terminal(
        database: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    terminal = Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["audit", database]) == 0
    drawn = terminal.getvalue()
    assert "runs audited" in drawn and "3/3" in drawn and "runs/s" in drawn
    assert capsys.readouterr().out == SUMMARY


def test_audit_draws_nothing_when_quiet_or_piped(
        database: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", database]) == 0
    assert capsys.readouterr() == (SUMMARY, "")
    terminal = Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["audit", database, "--quiet"]) == 0
    assert terminal.getvalue() == ""


def test_audit_refuses_fewer_than_one_worker(database: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", database, "--workers", "0"]) == 2
    assert "--workers 0: give 1 or more" in capsys.readouterr().err


def test_calibrate_draws_the_runs_it_reads_on_a_terminal_and_nothing_when_piped(
        database: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", database]) == 0
    piped = capsys.readouterr()
    assert piped.err == "" and "sweep:" in piped.out
    terminal = Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["calibrate", database]) == 0
    drawn = terminal.getvalue()
    assert "runs read" in drawn and "3/3" in drawn and "runs/s" in drawn


@pytest.mark.parametrize("columns", [None, "60"], ids=["piped", "at 60 columns"])
def test_calibrate_says_which_runs_it_left_out_as_unreadable_and_why(
        columns: str | None, database: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)

    path = database.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        (run_id,) = conn.execute("SELECT MIN(run_id) FROM diagnosis_run").fetchone()
        conn.execute("UPDATE trace_event SET t = 'soon' WHERE run_id = ? AND seq = 1",
                     (run_id,))
    conn.close()
    assert main(["calibrate", database]) == 0
    out, err = capsys.readouterr()
    said = (f"harness-lab calibrate: left out {run_id}: unreadable: trace_event.t: 'soon' is "
            "not a number")
    if columns is None:
        assert err == said + "\n"
    else:  # wrapped, each line within the width
        assert max(map(len, err.splitlines())) <= 60 < len(said)
        assert " ".join(line.strip() for line in err.splitlines()) == said
    assert comment(out).startswith(f"fitted by harness-lab calibrate from {database} "
                                   "(lognormal); left out: 1 unreadable; paste")


def test_audit_flags_a_stored_row_finished_before_it_was_created_and_exits_1(
        database: str, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    path = database.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        (run_id,) = conn.execute("SELECT MAX(run_id) FROM diagnosis_run").fetchone()
        conn.execute("UPDATE diagnosis_run SET created_at = 10.0, finished_at = 4.0 "
                     "WHERE run_id = ?", (run_id,))
    conn.close()
    assert main(["audit", database]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{run_id}: times_consistent: the stored finished_at 4 is before its "
                      "created_at 10")
    assert "  times_consistent: 1" in out


def test_audit_names_the_scenario_of_a_log_whose_run_finished_before_it_started(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tampered_log(outcomes_log(tmp_path / "logs"), "conclusion-guards-pass",
                       finished_before_created, tmp_path / "tampered.jsonl")
    capsys.readouterr()
    assert main(["audit", str(log)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert ("run-000001 (conclusion-guards-pass): times_consistent: the stored finished_at -1 "
            "is before its created_at 0") in out
    assert "  times_consistent: 1" in out


def test_at_80_columns_audit_wraps_each_problem_under_its_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    log = tampered_log(outcomes_log(tmp_path / "logs"), "conclusion-guards-pass",
                       finished_before_created, tmp_path / "tampered.jsonl")
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["audit", str(log)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert max(map(len, out)) <= 80
    assert out[:2] == ["run-000001 (conclusion-guards-pass): times_consistent: the stored "
                       "finished_at -1", "    is before its created_at 0"]


@pytest.mark.slow  # worker processes start in a second or two
def test_audit_says_a_batch_ran_again_and_exits_1_when_its_worker_dies_every_time(
        database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from functools import partial

    from harness_lab.audit import parallel
    from tests.audit.jobs import dies_on

    killer = partial(dies_on, "run-000002", ran=str(tmp_path / "ran"), every_time=True)
    monkeypatch.setattr(parallel, "_audit_run_rows", killer)  # spawned workers import jobs
    assert main(["audit", database, "--workers", "2"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:3] == [
        f"run-00000{n}: unreadable: not audited: its worker process died, again when its "
        "batch ran alone" for n in (1, 2, 3)]
    assert "3 run(s): 0 checked, 0 incomplete (RUNNING, no RUN_FINISHED), 3 unreadable, " \
           "0 with violations" in captured.out
    assert captured.err == "note: 1 batch ran again after a worker process died\n"
