"""What the database records of ``serve`` instances: the runs a lost one left are ended once,
by whichever server reaches them first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from harness_lab.live.instances import PROCESS_LOST, OwnedRunStore, _fail_running
from harness_lab.store.sql import diagnosis_run
from tests.store.test_run_store import start


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def owned(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OwnedRunStore]:
    """A store noting its RUNNING rows as instance ``lost-one``'s, on each database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.db'}"
    else:  # a database of its own: the serve tables of another test's store stay behind
        url = request.getfixturevalue("postgres_server").fresh_database()
    store = OwnedRunStore(url, "lost-one")
    yield store
    store.close()


def test_runs_ended_by_one_reaper_are_not_reported_ended_again_by_another(
        owned: OwnedRunStore) -> None:
    start(owned, "run-1")
    start(owned, "run-2")
    with owned.engine.begin() as conn:  # the first server to reach the lost instance's runs
        first = _fail_running(conn, ["run-1", "run-2"], "its server was lost", 10.0)
    with owned.engine.begin() as conn:  # another one that had read them RUNNING meanwhile
        second = _fail_running(conn, ["run-1", "run-2"], "its server was lost", 11.0)
    assert first == ("run-1", "run-2")
    assert second == ()
    with owned.engine.connect() as conn:
        ended = conn.execute(select(diagnosis_run.c.termination_reason,
                                    diagnosis_run.c.finished_at)).all()
    assert sorted(ended) == [(PROCESS_LOST, 10.0), (PROCESS_LOST, 10.0)]


def test_a_reaper_whose_clock_is_behind_the_start_dates_the_end_at_the_start(
        owned: OwnedRunStore) -> None:
    start(owned, "run-1", at=1_760_000_100.0)
    with owned.engine.begin() as conn:  # another host, its clock 30 s behind
        assert _fail_running(conn, ["run-1"], "its server was lost", 1_760_000_070.0) == (
            "run-1",)
    with owned.engine.connect() as conn:
        ended = conn.execute(select(diagnosis_run.c.created_at,
                                    diagnosis_run.c.finished_at)).all()
    assert ended == [(1_760_000_100.0, 1_760_000_100.0)]
