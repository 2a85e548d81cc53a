"""The job a sweep worker runs: it loads the harness, not the reporting stack, and playing
it again gives the same database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.sweep.conftest import stored_statuses


def test_a_worker_importing_the_chunk_job_loads_no_pandas_matplotlib_or_sqlalchemy() -> None:
    probe = ("import sys, harness_lab.sweep.chunk; "
             "print(sorted(m for m in ('pandas', 'matplotlib', 'sqlalchemy') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_chunk_keeps_its_outcomes_as_columns_and_gives_them_back_unchanged() -> None:
    from harness_lab.sweep.chunk import ChunkResult
    from harness_lab.sweep.sample import Outcome

    outcomes = [
        Outcome(0, 4, "DIAGNOSIS", "SUCCESS", "SUCCESS", None, "SUCCESS", 9.5, 5, 6, 120),
        Outcome(0, 5, None, None, None, None, None, 0.0, 0, 0, 0, (), "crash: host died"),
        Outcome(0, 6, "DIAGNOSIS", "SUCCESS", "FALLBACK", "INSUFFICIENT_EVIDENCE", "SUCCESS",
                3.0, 1, 2, 40, ("cited_ready_only", "sse_protocol")),
    ]
    chunk = ChunkResult.of(0, 4, outcomes)
    assert chunk.columns["sample"] == [4, 5, 6]
    assert chunk.columns["violations"] == ["", "", "cited_ready_only,sse_protocol"]
    assert len(chunk) == 3
    assert chunk.outcomes == tuple(outcomes)


def test_a_persisting_chunk_played_again_stores_each_run_once_and_says_it_ran_again(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    from harness_lab.store.sql import SqlRunStore
    from harness_lab.sweep.chunk import run_chunk
    from harness_lab.sweep.sample import run_id_of
    from tests.store.test_run_store import start as start_run

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    first = run_chunk(sweep_data, 0, {}, 3, 0, 4, store_url=url)
    assert not first.ran_again
    # as a worker killed midway leaves it: sample 4 RUNNING
    store = SqlRunStore(url)
    start_run(store, run_id_of(0, 4))
    store.close()
    again = run_chunk(sweep_data, 0, {}, 3, 0, 6, store_url=url)
    assert again.ran_again
    assert again.columns["sample"] == [0, 1, 2, 3, 4, 5]
    assert {c: v[:4] for c, v in again.columns.items()} == first.columns
    stored = stored_statuses(url)
    assert sorted(stored) == [run_id_of(0, s) for s in range(6)]
    assert "RUNNING" not in stored.values()


def test_a_run_another_stored_under_a_samples_id_is_refused_as_the_store_would_and_kept(
        sweep_data: dict[str, Any], tmp_path: Path) -> None:
    from sqlalchemy import insert

    from harness_lab.store.sql import SqlRunStore, diagnosis_run
    from harness_lab.sweep.chunk import run_chunk
    from harness_lab.sweep.sample import run_id_of

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = SqlRunStore(url)
    with store.engine.begin() as conn:
        conn.execute(insert(diagnosis_run).values(run_id=run_id_of(0, 1), session_id="old",
                                                  query="q", status="SUCCESS",
                                                  created_at=0.0, ordinal=1))
    store.close()
    played = run_chunk(sweep_data, 0, {}, 3, 0, 3, store_url=url)
    assert not played.ran_again
    assert played.columns["error"][0] is None and played.columns["error"][2] is None
    assert played.columns["error"][1] == (
        "StoreError: the database already holds run-g0-s0000001, stored otherwise "
        "(session_id 'old' where the sample gives 'session-g0-s1')")
    stored = stored_statuses(url)
    assert sorted(stored) == [run_id_of(0, s) for s in range(3)]
    store = SqlRunStore(url)
    try:
        assert {r["run_id"]: r["session_id"] for r in store.runs()}[run_id_of(0, 1)] == "old"
    finally:
        store.close()
