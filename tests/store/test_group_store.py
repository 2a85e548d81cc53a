"""What the group-commit store promises beyond the RunStore contract: same rows, fewer commits."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert

from harness_lab.states import TraceEventStatus, TraceEventType, TracePhase
from harness_lab.store import GroupCommitStore, RunCompletion, SqlRunStore
from harness_lab.store.sql import diagnosis_run
from harness_lab.sweep.engine import Sweep
from harness_lab.trace import TraceEvent
from tests.store.test_run_store import start

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def completion(run_id: str) -> RunCompletion:
    """A SUCCESS completion of ``run_id`` with one trace event."""
    done = TraceEvent(run_id, 1, 1.5, TraceEventType.RUN_FINISHED, TracePhase.RUN,
                      TraceEventStatus.OK, {"outcome": "SUCCESS"})
    return RunCompletion(
        run_id=run_id, status="SUCCESS", release_outcome="SUCCESS", fallback_type=None,
        answer_json='{"text": "ok"}', conclusion=None, published_result=None,
        termination_state="SUCCESS", termination_reason=None, duration_ms=1500.0,
        input_tokens=100, output_tokens=20, total_tokens=120, agent_steps=2, tool_calls=0,
        finished_at=1.5, invocations=(), trace=(done,))


def count_commits(store: GroupCommitStore | SqlRunStore) -> list[int]:
    """A one-item list counting the COMMITs the driver runs on ``store``'s in-memory database.

    Counted at the driver, below SQLAlchemy, so commits made on a raw driver connection count
    too; the in-memory database has exactly one connection, which every writer shares.
    """
    commits = [0]

    def on_statement(sql: str) -> None:
        if sql.strip().upper().startswith("COMMIT"):
            commits[0] += 1

    fairy = store.engine.raw_connection()
    fairy.driver_connection.set_trace_callback(on_statement)  # type: ignore[union-attr]
    fairy.close()
    return commits


def test_a_group_of_runs_is_written_in_one_commit() -> None:
    store = GroupCommitStore(SqlRunStore(), every=3)
    commits = count_commits(store)
    for i in range(3):
        start(store, f"r{i}")
        store.record_intent(f"r{i}", "DIAGNOSIS")
        store.complete(completion(f"r{i}"))
    assert commits[0] == 1
    assert store.pending == 0
    assert [row["status"] for row in store.inner.runs()] == ["SUCCESS"] * 3


def test_complete_returns_the_row_the_database_then_holds() -> None:
    store = GroupCommitStore(SqlRunStore(), every=10)
    start(store, "r1")
    store.record_intent("r1", "DIAGNOSIS")
    returned = store.complete(completion("r1"))
    assert store.pending == 1
    assert store.get_run("r1") == returned
    assert returned["intent"] == "DIAGNOSIS" and returned["duration_ms"] == 1500.0


def test_a_run_in_flight_when_its_group_is_written_is_stored_running_then_completed() -> None:
    store = GroupCommitStore(SqlRunStore(), every=1)
    start(store, "slow")
    start(store, "fast")
    store.complete(completion("fast"))  # fills the group: both rows are written
    assert store.pending == 0
    assert store.inner.get_run("slow")["status"] == "RUNNING"  # type: ignore[index]
    store.record_intent("slow", "DIAGNOSIS")
    store.complete(completion("slow"))
    row = store.inner.get_run("slow")
    assert row is not None and (row["status"], row["intent"]) == ("SUCCESS", "DIAGNOSIS")
    assert [ev["seq"] for ev in store.inner.trace("slow")] == [0, 1]


def test_a_session_read_sees_the_session_runs_still_in_the_group() -> None:
    store = GroupCommitStore(SqlRunStore(), every=100)
    start(store, "r1", session="chat-7")
    store.complete(completion("r1"))
    history = store.read_session("chat-7", 5).history
    assert [turn.run_id for turn in history] == ["r1"]
    assert store.pending == 0


def test_a_session_with_no_row_reads_empty_without_writing_the_group() -> None:
    store = GroupCommitStore(SqlRunStore(), every=100)
    start(store, "r1", session="chat-7")
    context = store.read_session("another-chat", 5)
    assert (context.history, context.previous_turn) == ((), None)
    assert store.pending == 1


def test_a_run_the_database_refuses_is_named_and_the_rest_of_its_group_is_written() -> None:
    inner = SqlRunStore()
    with inner.engine.begin() as conn:  # a row left by an earlier writer with the same id
        conn.execute(insert(diagnosis_run).values(run_id="r2", session_id="old", query="q",
                                                  status="SUCCESS", created_at=0.0, ordinal=1))
    store = GroupCommitStore(inner, every=3)
    for i in range(3):
        start(store, f"r{i}")
        store.complete(completion(f"r{i}"))
    assert list(store.failures) == ["r2"]
    assert "r2" in store.failures["r2"] and "group commit failed" in store.failures["r2"]
    assert {row["run_id"]: row["session_id"] for row in inner.runs()} == {
        "r2": "old", "r0": "s1", "r1": "s1"}


def test_a_group_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="every must be at least 1"):
        GroupCommitStore(SqlRunStore(), every=0)


def _tables(url: str) -> dict[str, list[dict[str, Any]]]:
    store = SqlRunStore(url)
    try:
        return {"runs": store.runs(), "invocations": store.invocations(),
                "trace": store.trace()}
    finally:
        store.close()


def test_a_grouped_sweep_leaves_the_same_rows_as_a_run_by_run_sweep(tmp_path: Path) -> None:
    scenario = SCENARIOS / "sweeps" / "deadline-sweep.yaml"
    urls = {}
    for every in (1, 7):
        urls[every] = f"sqlite:///{tmp_path / f'runs-{every}.db'}"
        Sweep.from_file(scenario, samples=12, seed=3, store_url=urls[every],
                        commit_every=every).run()
    by_run, grouped = _tables(urls[1]), _tables(urls[7])
    assert len(by_run["runs"]) == 12 * len(Sweep.from_file(scenario).points())
    assert grouped == by_run


@pytest.mark.parametrize("paramstyle", ["named", "qmark"])
def test_a_group_is_written_alike_whatever_the_drivers_parameter_style(paramstyle: str) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import StaticPool

    engine = create_engine("sqlite://", paramstyle=paramstyle, poolclass=StaticPool,
                           connect_args={"check_same_thread": False})
    store = GroupCommitStore(SqlRunStore(engine=engine), every=2)
    for i in range(2):
        start(store, f"r{i}")
        store.complete(completion(f"r{i}"))
    assert store.pending == 0
    assert [(row["run_id"], row["seq"], row["type"], row["detail"])
            for row in store.inner.trace()] == [
        ("r0", 0, "RUN_STARTED", {}), ("r0", 1, "RUN_FINISHED", {"outcome": "SUCCESS"}),
        ("r1", 0, "RUN_STARTED", {}), ("r1", 1, "RUN_FINISHED", {"outcome": "SUCCESS"})]


def test_a_sweep_turns_a_run_its_store_refused_into_an_error_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    scenario = SCENARIOS / "sweeps" / "deadline-sweep.yaml"
    inner = SqlRunStore(url)
    with inner.engine.begin() as conn:
        conn.execute(insert(diagnosis_run).values(run_id="run-g0-s0000002", session_id="old",
                                                  query="q", status="SUCCESS",
                                                  created_at=0.0, ordinal=1))
    inner.close()
    result = Sweep.from_file(scenario, samples=4, seed=3, store_url=url,
                             overrides={"config.deadline_s": 60}).run()
    errors = result.frame.loc[result.frame["error"].notna(), ["grid", "sample", "error"]]
    assert errors[["grid", "sample"]].values.tolist() == [[0, 2]]
    assert "run-g0-s0000002" in errors["error"].iloc[0]


def test_a_persisted_sweep_keeping_records_stores_each_run_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    scenario = SCENARIOS / "sweeps" / "deadline-sweep.yaml"
    result = Sweep.from_file(scenario, samples=4, seed=3, store_url=url, keep_every=2,
                             overrides={"config.deadline_s": 60}).run()
    assert result.frame["error"].isna().all()
    # overriding the grid's own key leaves one grid point of 4 samples
    assert len(_tables(url)["runs"]) == 4
    assert len(result.kept) == 2 and all(k.get("error") is None for k in result.kept)


def test_the_held_connection_goes_back_to_the_pool_on_close(tmp_path: Path) -> None:
    store = GroupCommitStore(SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}"), every=10)
    start(store, "r1")
    store.read_session("s1", 5)
    store.complete(completion("r1"))
    pool = store.engine.pool
    assert pool.checkedout() == 1  # type: ignore[attr-defined]
    store.close()
    assert pool.checkedout() == 0  # type: ignore[attr-defined]
    assert [row["run_id"] for row in SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}").runs()] \
        == ["r1"]


def test_a_failed_group_is_rolled_back_before_its_runs_are_retried_alone() -> None:
    inner = SqlRunStore()
    with inner.engine.begin() as conn:  # r1 clashes: the group's first statement fails
        conn.execute(insert(diagnosis_run).values(run_id="r1", session_id="old", query="q",
                                                  status="SUCCESS", created_at=0.0, ordinal=1))
    store = GroupCommitStore(inner, every=2)
    start(store, "r0")
    start(store, "r1")
    store.complete(completion("r0"))
    store.complete(completion("r1"))
    assert list(store.failures) == ["r1"]
    assert [ev["seq"] for ev in inner.trace("r0")] == [0, 1]  # written once, not twice
    assert inner.trace("r1") == []


def test_a_run_the_driver_refuses_is_kept_as_a_failure_and_the_others_are_written(
        tmp_path: Path) -> None:
    from harness_lab.states import InvocationStatus
    from harness_lab.tools.records import CanonicalInvocation

    store = GroupCommitStore(SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}"), every=10)
    for run_id in ("r1", "r2", "r3"):
        start(store, run_id)
    broken = CanonicalInvocation(
        "inv-1", "r2", 0, "logs", {"service": "checkout"}, "logs|service=checkout",
        InvocationStatus.ERROR, 0.5, error="backend said \ud800")
    store.complete(completion("r1"))
    store.complete(dataclasses.replace(completion("r2"), invocations=(broken,), tool_calls=1))
    store.complete(completion("r3"))
    failed = store.flush()
    assert list(failed) == ["r2"]
    assert "UnicodeEncodeError" in failed["r2"]
    assert [r["run_id"] for r in store.runs()] == ["r1", "r3"]
    store.close()
