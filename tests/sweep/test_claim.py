"""A persisting sweep claims its database first: never two sweeps in one, resumable."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select, update

from harness_lab.bounds import STALE_S
from harness_lab.errors import SweepError
from harness_lab.store.sql import SqlRunStore, trace_event
from harness_lab.sweep.claim import (
    Claim,
    fingerprint,
    resume_claim,
    stake_claim,
    stored_runs,
    sweep_beat,
    sweep_claim,
)
from harness_lab.sweep.engine import Sweep
from tests.postgres import PostgresServer
from tests.store.test_run_store import start  # a RUNNING row, as a killed process leaves it
from tests.sweep.processes import completed_runs, start_sweep, wait_for


def claim_of(data: dict[str, Any], seed: int = 1, samples: int = 10) -> Claim:
    """The claim of a sweep of ``data`` without a grid override."""
    points = Sweep(data, samples=samples, seed=seed).points()
    return Claim(fingerprint(data, seed, points), "sweep-fixture", seed, samples, len(points))


def test_the_fingerprint_names_the_scenario_seed_and_grid_but_not_the_sample_count(
        sweep_data: dict[str, Any]) -> None:
    assert claim_of(sweep_data, samples=10).fingerprint == claim_of(
        sweep_data, samples=99).fingerprint
    assert claim_of(sweep_data, seed=1).fingerprint != claim_of(sweep_data, seed=2).fingerprint
    other = dict(sweep_data, name="other")
    assert claim_of(other).fingerprint != claim_of(sweep_data).fingerprint


def test_a_second_claim_is_refused_naming_the_sweep_that_holds_the_database(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    store = SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    stake_claim(store, claim_of(sweep_data), "runs.db")
    with pytest.raises(SweepError, match=rf"runs.db already holds a sweep \(scenario "
                       rf"'sweep-fixture', seed 1, 10 samples x 2 grid points, started .* by "
                       rf"{socket.gethostname()}:{os.getpid()}\)"):
        stake_claim(store, claim_of(sweep_data, seed=5), "runs.db")
    store.close()


def test_a_database_with_sweep_runs_but_no_claim_is_refused(sweep_data: dict[str, Any],
                                                            tmp_path: Path) -> None:
    store = SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    start(store, "run-g0-s0000000")
    with pytest.raises(SweepError, match="already holds run run-g0-s0000000 of a sweep"):
        stake_claim(store, claim_of(sweep_data), "runs.db")
    store.close()


def test_resuming_removes_the_runs_left_running_and_reports_the_completed_ones(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Sweep(sweep_data, samples=4, seed=1, store_url=url).run()
    store = SqlRunStore(url)
    start(store, "run-g1-s0000007")
    stored = resume_claim(store, claim_of(sweep_data, samples=8), url)
    assert stored.completed == {0: {0, 1, 2, 3}, 1: {0, 1, 2, 3}}
    assert stored.removed_running == 1
    assert store.get_run("run-g1-s0000007") is None
    with store.engine.connect() as conn:
        assert conn.execute(select(trace_event).where(
            trace_event.c.run_id == "run-g1-s0000007")).all() == []
        attempt = conn.execute(select(sweep_claim.c.attempt)).scalar_one()
    assert attempt == 2
    store.close()


def test_resuming_is_refused_without_a_sweep_for_another_sweep_and_while_it_runs(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = SqlRunStore(url)
    with pytest.raises(SweepError, match="holds no sweep to resume"):
        resume_claim(store, claim_of(sweep_data), url)
    stake_claim(store, claim_of(sweep_data), url)
    with pytest.raises(SweepError, match="holds a different sweep .* --resume needs the same "
                                         "scenario file, --seed, grid and --set overrides"):
        resume_claim(store, claim_of(sweep_data, seed=2), url)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with store.engine.begin() as conn:
            conn.execute(update(sweep_claim).values(
                owner=f"{socket.gethostname()}:{sleeper.pid}"))
        with pytest.raises(SweepError, match=f"the sweep is still running "
                                             f"\\({socket.gethostname()}:{sleeper.pid}\\)"):
            resume_claim(store, claim_of(sweep_data), url)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert resume_claim(store, claim_of(sweep_data), url).count == 0
    store.close()


def another_host_beat(store: SqlRunStore, seconds_ago: float) -> str:
    """Make the claim's owner a process of another host that last beat ``seconds_ago``."""
    owner = "another-host.example:4242"
    with store.engine.begin() as conn:
        conn.execute(update(sweep_claim).values(owner=owner))
        conn.execute(update(sweep_beat).values(owner=owner, beat_at=time.time() - seconds_ago))
    return owner


def test_a_sweep_another_host_runs_is_not_resumed_while_it_is_heard_from(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = SqlRunStore(url)
    stake_claim(store, claim_of(sweep_data), url)
    owner = another_host_beat(store, seconds_ago=STALE_S - 2)
    with pytest.raises(SweepError, match=f"the sweep is still running on another host "
                                         f"\\({owner}, heard from 28 s ago\\); stop it"):
        resume_claim(store, claim_of(sweep_data), url)
    another_host_beat(store, seconds_ago=STALE_S + 1)
    assert resume_claim(store, claim_of(sweep_data), url).count == 0
    with store.engine.connect() as conn:
        assert conn.execute(select(sweep_beat.c.owner)).scalar_one() == (
            f"{socket.gethostname()}:{os.getpid()}")
    store.close()


@pytest.mark.slow
def test_a_persisting_sweep_beats_while_it_runs(sweep_data: dict[str, Any],
                                                tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    db = tmp_path / "runs.db"
    proc = start_sweep([str(path), "--samples", "100000", "--persist", f"sqlite:///{db}",
                        "--no-log", "-q"])

    def beats() -> list[tuple[str, float]]:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                return conn.execute("SELECT owner, beat_at FROM sweep_beat").fetchall()
        except sqlite3.OperationalError:  # not made yet
            return []

    try:
        wait_for(lambda: bool(beats()), "the first beat")
        first = beats()
        wait_for(lambda: beats()[0][1] > first[0][1], "a second beat")
        second = beats()
    finally:
        proc.kill()
        proc.communicate()
    assert first[0][0] == second[0][0] == f"{socket.gethostname()}:{proc.pid}"
    assert 4 < second[0][1] - first[0][1] < 10  # about HEARTBEAT_S apart


def test_a_resumed_sweep_with_more_samples_runs_only_the_new_ones_and_equals_a_whole_sweep(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Sweep(sweep_data, samples=5, seed=3, store_url=url).run()
    resumed = Sweep(sweep_data, samples=9, seed=3, store_url=url, resume=True).run()
    whole = Sweep(sweep_data, samples=9, seed=3).run()
    assert resumed.replayed == 10
    assert resumed.frame.equals(whole.frame)
    store = SqlRunStore(url)
    assert stored_runs(store).count == 18
    store.close()


@pytest.mark.slow
def test_two_sweeps_started_together_on_one_fresh_database_never_share_it(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    db = tmp_path / "runs.db"
    args = [sys.executable, "-m", "harness_lab", "sweep", str(path), "--samples", "200",
            "--persist", f"sqlite:///{db}"]
    both = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    ended = [(p.wait(timeout=300), p.communicate()[1]) for p in both]
    assert sorted(code for code, _ in ended) == [0, 2]
    refused = next(err for code, err in ended if code == 2)
    assert f"{db} already holds a sweep (scenario 'sweep-fixture'" in refused
    assert len(refused.strip().splitlines()) == 1
    assert completed_runs(db) == 400


def test_a_refused_sweep_names_the_database_without_its_password(
        sweep_data: dict[str, Any], tmp_path: Path, postgres_server: PostgresServer,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    url = postgres_server.fresh_database().replace("//postgres@", "//postgres:s3cr3t@")
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    command = ["sweep", str(path), "--samples", "5", "--persist", url, "--no-log", "-q"]
    assert main(command) == 0
    assert main([*command[:-2], "--seed", "9", "--no-log", "-q"]) == 2
    err = capsys.readouterr().err
    assert ":***@127.0.0.1:" in err and "already holds a sweep" in err
    assert "s3cr3t" not in err
