"""The live store's health probe asks the database, not the pool the runs share (a real SQLite
file and a real PostgreSQL server)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness_lab.live.store import open_store, store_problem

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
