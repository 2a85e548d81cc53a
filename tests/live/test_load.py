"""Crowds of concurrent SSE runs against serve: the load benchmark's checks pass on a sound
server and fail on a broken one or a damaged database. No timing is asserted here."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from benchmarks.bench_live_load import (
    DUPLICATE_ORDINAL,
    DUPLICATE_RUN_ID,
    EXTRA_ROWS,
    LEFT_NOT_CANCELLED,
    RUNNING_LEFT,
    check_store,
    load,
    main,
    serving,
)
from tests.live.test_server import GUARDS_PASS
from tests.postgres import PostgresServer

pytestmark = [pytest.mark.live, pytest.mark.slow]

# serve with a driver that ignores every disconnect: the runs of clients that left go on
DEAF_SERVE = ("import runpy; from harness_lab.live import driver; "
              "driver.LiveDriver.disconnect = lambda self, slot: None; "
              "runpy.run_module('harness_lab', run_name='__main__', alter_sys=True)")


def test_a_hundred_concurrent_runs_with_disconnects_and_cancels_break_nothing() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3") as served:
        result = load(served, runs=100, concurrency=100, seed=7, disconnect=0.25,
                      cancel=0.25, run_s=2.0)
    assert result.problems == []
    assert len(result.runs) == 100
    assert result.server["max_active"] >= 90
    assert result.server["finished"] == 100 + 5  # and the five calibration runs
    reasons = {key.split(": ", 1)[1] for key in result.outcomes}
    assert {"CANCELLED/CLIENT_DISCONNECTED", "CANCELLED/USER_REQUESTED",
            "SUCCESS/completed"} <= reasons


def test_every_client_that_left_is_timed_from_its_leaving_to_its_runs_cancel() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3") as served:
        result = load(served, runs=20, concurrency=20, seed=3, disconnect=0.5, cancel=0.0,
                      run_s=2.0)
    assert result.violations == {}
    left = [run for run in result.runs if run.left]
    assert left, "no client left before its run ended: the test proves nothing"
    cancelled = result.outcomes["disconnect, left: CANCELLED/CLIENT_DISCONNECTED"]
    assert cancelled + result.figures["left_after_the_run_was_decided"] + (
        result.figures["left_and_lost_the_race_within_the_grace"]) == len(left)
    assert result.figures["disconnect_to_cancel_ms"]["n"] == cancelled
    assert result.figures["disconnect_to_row_ms"]["n"] == cancelled
    assert result.figures["healthz_ms"]["n"] > 0
    assert result.figures["healthz_failed_probes"] == 0


def test_a_server_that_ignores_disconnects_fails_the_check_of_clients_that_left() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3",
                 launcher=(sys.executable, "-c", DEAF_SERVE)) as served:
        result = load(served, runs=20, concurrency=20, seed=3, disconnect=0.5, cancel=0.0,
                      run_s=2.0, grace_s=0.2)
    assert any(run.left for run in result.runs)
    assert result.outcomes["disconnect, left: CANCELLED/CLIENT_DISCONNECTED"] == 0
    assert result.violations[LEFT_NOT_CANCELLED] >= 1
    assert result.problems


def test_a_row_left_running_a_repeated_ordinal_and_a_stray_row_fail_the_store_check(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3",
                 db=str(db)) as served:
        result = load(served, runs=10, concurrency=10, seed=5, disconnect=0.3, cancel=0.0,
                      run_s=2.0, calibrate=0)
    assert result.problems == []
    ids = [run.run_id for run in result.runs if run.run_id is not None]
    url = f"sqlite:///{db}"
    assert check_store(url, ids).counts == {}
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(diagnosis_run)")]
        copy = ", ".join("'run-stray'" if c == "run_id" else "'RUNNING'" if c == "status"
                         else c for c in columns)
        conn.execute(f"INSERT INTO diagnosis_run ({', '.join(columns)}) "
                     f"SELECT {copy} FROM diagnosis_run WHERE run_id = ?", (ids[0],))
    damaged = check_store(url, ids).counts
    assert damaged == {RUNNING_LEFT: 1, DUPLICATE_ORDINAL: 1, EXTRA_ROWS: 1}


def test_a_run_id_given_to_two_clients_fails_the_store_check(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3",
                 db=str(db)) as served:
        result = load(served, runs=5, concurrency=5, seed=5, disconnect=0.0, cancel=0.0,
                      run_s=2.0, calibrate=0)
    ids = [run.run_id for run in result.runs if run.run_id is not None]
    assert check_store(f"sqlite:///{db}", [*ids, ids[0]]).counts == {DUPLICATE_RUN_ID: 1}


def test_the_benchmark_prints_its_figures_and_goals_as_json_and_exits_0(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--runs", "20", "--concurrency", "20", "--time-scale", "0.3", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["ok"] is True
    assert doc["violations"] == {}
    assert doc["database"] == "SQLite"
    assert set(doc["goals"]) == {"/healthz p99 < 100 ms",
                                 "disconnect cancels its run, p99 < 100 ms"}
    assert {"p50", "p95", "p99", "max", "n"} <= set(doc["figures"]["healthz_ms"])
    assert len(doc["load_average"]) == 3


def test_a_crowd_stored_in_postgresql_passes_every_check(
        postgres_server: PostgresServer) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3",
                 db=postgres_server.url) as served:
        result = load(served, runs=20, concurrency=20, seed=11, disconnect=0.3, cancel=0.2,
                      run_s=2.0)
    assert result.problems == []
    assert any(run.left for run in result.runs)
