"""A sweep's workers end with the sweep: kill -9 or Ctrl-C leaves no process, semaphore or
late write behind, and a resumed sweep completes the interrupted one exactly."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness_lab.sweep.engine import Sweep, available_cores
from tests.sweep.processes import (
    children,
    completed_runs,
    kill_session,
    running,
    semaphores_of,
    start_sweep,
    wait_for,
)

SAMPLES = 2000  # two grid points: 4,000 runs, far more than are stored when the kill comes


@pytest.fixture
def sweep_file(tmp_path: Path, sweep_data: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep_data), encoding="utf-8")
    return path


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux") or available_cores() < 2,
                                 reason="watches worker processes through /proc, on 2 cores")]


def interrupted_sweep(sweep_file: Path, db: Path, sig: signal.Signals
                      ) -> tuple[subprocess.Popen[str], list[int], int]:
    """A two-worker persisting sweep stopped by ``sig`` once runs are stored; its workers and
    the completed runs the database held once they were gone. The sweep held semaphores."""
    proc = start_sweep([str(sweep_file), "--samples", str(SAMPLES), "--seed", "4",
                        "--workers", "2", "--persist", f"sqlite:///{db}",
                        "--commit-every", "16"])
    wait_for(lambda: len([c for c in children(proc.pid) if running(c)]) >= 3,
             "the worker processes to start")
    wait_for(lambda: completed_runs(db) > 0, "the first stored runs")
    workers = children(proc.pid)
    assert semaphores_of(proc.pid)
    kill_session(proc, sig)
    proc.communicate(timeout=60)  # reads and closes its pipes
    wait_for(lambda: not any(running(w) for w in workers), "every worker to end")
    return proc, workers, completed_runs(db)


def test_a_sweep_killed_with_sigkill_leaves_no_worker_no_semaphore_and_no_late_write(
        sweep_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    proc, workers, stored = interrupted_sweep(sweep_file, db, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert workers and not any(running(w) for w in workers)
    assert 0 < stored < 2 * SAMPLES
    wait_for(lambda: not semaphores_of(proc.pid), "the sweep's semaphores to be removed")
    assert completed_runs(db) == stored  # nothing was written after the workers ended


def test_a_killed_sweep_resumed_runs_only_the_missing_samples_and_equals_an_unbroken_one(
        sweep_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _, _, stored = interrupted_sweep(sweep_file, db, signal.SIGKILL)
    out = tmp_path / "resumed.csv"
    resumed = subprocess.run(
        [sys.executable, "-m", "harness_lab", "sweep", str(sweep_file), "--samples",
         str(SAMPLES), "--seed", "4", "--workers", "2", "--persist", f"sqlite:///{db}",
         "--resume", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {stored:,} samples were already stored" in resumed.stderr
    assert completed_runs(db) == 2 * SAMPLES
    unbroken = Sweep.from_file(sweep_file, samples=SAMPLES, seed=4).run().frame
    assert out.read_text(encoding="utf-8") == unbroken.to_csv(index=False)


@pytest.mark.parametrize("stop", ["Ctrl-C", "SIGTERM to the sweep alone"])
def test_ctrl_c_stops_the_workers_and_the_result_lists_every_stored_run_it_does_not_count(
        stop: str, sweep_file: Path, tmp_path: Path) -> None:
    # SIGTERM (a supervisor, `timeout`, a cancelled CI job) stops it as Ctrl-C does; its own
    # action ended the process with nothing said (exit 143)
    db = tmp_path / "runs.db"
    out = tmp_path / "samples.csv"
    proc = start_sweep([str(sweep_file), "--samples", str(SAMPLES), "--seed", "4",
                        "--workers", "2", "--persist", f"sqlite:///{db}", "--commit-every",
                        "16", "--out", str(out)])
    wait_for(lambda: completed_runs(db) > 0, "the first stored runs")
    workers = children(proc.pid)
    if stop == "Ctrl-C":
        kill_session(proc, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    wait_for(lambda: not any(running(w) for w in workers), "every worker to end")
    counted = len(out.read_text(encoding="utf-8").splitlines()) - 1
    stored = completed_runs(db)
    extra = stored - counted
    if extra > 0:
        assert f"note: the database holds {extra:,} completed runs this result does not " \
               "count" in err
    else:
        assert "note: --resume completes the sweep" in err
    assert completed_runs(db) == stored


def test_a_sweep_run_from_a_thread_keeps_its_workers_after_that_thread_ends(
        sweep_file: Path) -> None:
    import threading

    results: list[Any] = []

    def sweep() -> None:
        results.append(Sweep.from_file(sweep_file, samples=40, seed=2, workers=2).run())

    for _ in range(2):  # the second sweep reuses the pool the first thread started
        thread = threading.Thread(target=sweep)
        thread.start()
        thread.join()
    assert [r.lost for r in results] == [0, 0]
    assert results[0].frame.equals(results[1].frame)
