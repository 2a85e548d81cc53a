"""The live store's health probe asks the database, not the pool the runs share (a real SQLite
file and a real PostgreSQL server)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness_lab.live.store import LiveStore, open_store, store_problem
from harness_lab.store.sql import SqlRunStore
from tests.store.test_run_store import completion, start

pytestmark = pytest.mark.live


def test_the_health_probe_answers_while_the_runs_hold_every_connection_of_the_pool(
        database: str) -> None:
    store = open_store(database)
    engine = store.inner.engine
    held = [engine.connect() for _ in range(engine.pool.size() + engine.pool._max_overflow)]  # type: ignore[attr-defined]
    answers: list[str | None] = []
    try:
        probe = threading.Thread(target=lambda: answers.append(store_problem(store)))
        probe.start()
        probe.join(timeout=10)
        assert not probe.is_alive(), "the probe waited for a connection of the runs' pool"
        assert answers == [None]
    finally:
        for connection in held:
            connection.close()
        store.close()


def test_the_health_probe_names_a_database_that_is_gone(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = open_store(f"sqlite:///{db}")
    try:
        assert store_problem(store) is None
        db.unlink()
        (tmp_path / "runs.db").mkdir()  # the path is now a directory: nothing can open it
        store.probe.dispose()  # the probe's one connection is opened afresh
        problem = store_problem(store)
        assert problem is not None and "unable to open database file" in problem
    finally:
        store.close()


def test_a_db_that_reads_as_a_url_without_its_slashes_is_refused_not_made_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_lab.live.store import database_url

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as refused:
        database_url("postgresql:runs")
    assert str(refused.value) == (
        "--db postgresql:runs: a database URL without its // (a URL reads DIALECT://..., e.g. "
        "postgresql://user@host/db); for a SQLite file of that name write ./postgresql:runs")
    assert database_url("./postgresql:runs") == f"sqlite:///{tmp_path / 'postgresql:runs'}"
    assert database_url("runs.db") == f"sqlite:///{tmp_path / 'runs.db'}"
    assert list(tmp_path.iterdir()) == []


def test_a_wall_clock_set_back_during_a_run_never_dates_its_finish_before_its_start(
        tmp_path: Path) -> None:
    walls = iter([1_760_000_100.0, 1_760_000_040.0])  # a time sync sets the clock back 60 s
    ticks = iter([500.0, 502.5])  # while the run takes 2.5 s
    store = LiveStore(SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}"), serial=True,
                      wall=lambda: next(walls), monotonic=lambda: next(ticks))
    try:
        start(store, "run-1")
        row = store.complete(completion("run-1"))
    finally:
        store.close()
    assert (row["created_at"], row["finished_at"]) == (1_760_000_100.0, 1_760_000_102.5)
