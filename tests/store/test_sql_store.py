"""What only the SQL store promises: its tables, its engines and its files."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pandas
import pytest
from sqlalchemy import create_engine, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool

from harness_lab.errors import HarnessError
from harness_lab.states import (
    EvidenceStatus,
    InvocationStatus,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.store import RunStart, SqlRunStore, StoreError
from harness_lab.store.sql import tool_invocation, trace_event
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent
from tests.store.test_run_store import completion, run_started, start


def logs_invocation(run_id: str) -> CanonicalInvocation:
    """A READY invocation of the ``logs`` tool."""
    return CanonicalInvocation(
        "inv-1", run_id, 0, "logs", {"service": "checkout"}, "logs|service=checkout",
        InvocationStatus.READY, 0.5, evidence_status=EvidenceStatus.EVIDENCE_FOUND, items=3,
    )


def test_a_file_backed_store_persists_across_two_instances_on_the_same_path(
        tmp_path: Path) -> None:
    first = SqlRunStore.from_path(tmp_path / "runs.db")
    start(first, "r1")
    first.complete(completion("r1", conclusion="pool exhausted"))
    first.close()
    second = SqlRunStore.from_path(tmp_path / "runs.db")
    row = second.get_run("r1")
    second.close()
    assert row is not None
    assert (row["status"], row["conclusion"]) == ("SUCCESS", "pool exhausted")


def test_a_sqlite_file_url_opens_the_same_database_as_from_path(tmp_path: Path) -> None:
    by_path = SqlRunStore.from_path(tmp_path / "runs.db")
    start(by_path, "r1")
    by_path.close()
    by_url = SqlRunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    row = by_url.get_run("r1")
    by_url.close()
    assert row is not None
    assert row["status"] == "RUNNING"


def test_a_crash_leaves_the_running_row_on_disk(tmp_path: Path) -> None:
    crashed = SqlRunStore.from_path(tmp_path / "runs.db")
    start(crashed, "r1")
    crashed.close()
    reopened = SqlRunStore.from_path(tmp_path / "runs.db")
    rows = [(row["run_id"], row["status"]) for row in reopened.runs()]
    events = [(ev["run_id"], ev["type"]) for ev in reopened.trace()]
    reopened.close()
    assert rows == [("r1", "RUNNING")]
    assert events == [("r1", "RUN_STARTED")]


def test_pandas_reads_diagnosis_run_with_the_run_columns_then_ordinal() -> None:
    store = SqlRunStore()
    start(store, "r1")
    frame = pandas.read_sql_table("diagnosis_run", store.engine)
    assert list(frame.columns) == [
        "run_id", "session_id", "query", "intent", "status", "release_outcome",
        "fallback_type", "answer_json", "conclusion", "published_result",
        "termination_state", "termination_reason", "duration_ms", "input_tokens",
        "output_tokens", "total_tokens", "agent_steps", "tool_calls", "created_at",
        "finished_at", "ordinal",
    ]
    assert frame["status"].tolist() == ["RUNNING"]


def test_the_ordinal_counts_runs_in_insertion_order() -> None:
    store = SqlRunStore()
    start(store, "rb")
    start(store, "ra")
    frame = pandas.read_sql_table("diagnosis_run", store.engine)
    assert list(zip(frame["run_id"], frame["ordinal"], strict=True)) == [("rb", 1), ("ra", 2)]


def test_tool_invocation_has_the_keys_of_to_dict_as_columns() -> None:
    store = SqlRunStore()
    assert [c["name"] for c in inspect(store.engine).get_columns("tool_invocation")] == [
        "invocation_id", "run_id", "seq", "tool", "scope", "normalized_scope", "status",
        "evidence_status", "error_code", "error", "items", "size_bytes", "information_gain",
        "started_at", "finished_at", "call_id",
    ]


def test_tool_invocation_stores_scope_as_json_text() -> None:
    store = SqlRunStore()
    start(store, "r1")
    store.complete(completion("r1", invocations=[logs_invocation("r1")]))
    with store.engine.connect() as conn:
        scope = conn.execute(select(tool_invocation.c.scope)).scalar_one()
    assert scope == '{"service": "checkout"}'


def test_trace_event_stores_detail_as_json_text_keyed_by_run_and_seq() -> None:
    store = SqlRunStore()
    start(store, "r1")
    with store.engine.connect() as conn:
        rows = conn.execute(select(trace_event.c.run_id, trace_event.c.seq,
                                   trace_event.c.detail)).all()
    assert [tuple(row) for row in rows] == [("r1", 0, "{}")]
    assert inspect(store.engine).get_pk_constraint("trace_event")["constrained_columns"] == [
        "run_id", "seq"]


def test_a_duplicate_seq_surfaces_as_a_store_error_caused_by_an_integrity_error() -> None:
    store = SqlRunStore()
    start(store, "r1")
    event = TraceEvent("r1", 1, 1.0, TraceEventType.RUN_FINISHED, TracePhase.RUN,
                       TraceEventStatus.OK, {})
    with pytest.raises(StoreError) as caught:
        store.complete(completion("r1", trace=[event, event]))
    assert isinstance(caught.value.__cause__, IntegrityError)
    assert caught.value.run_id == "r1"


def test_store_error_is_a_harness_error() -> None:
    assert issubclass(StoreError, HarnessError)


def test_the_default_store_is_one_in_memory_database_seen_from_every_thread() -> None:
    store = SqlRunStore()
    start(store, "r1")
    seen: list[object] = []
    reader = threading.Thread(target=lambda: seen.append(store.get_run("r1") is not None))
    reader.start()
    reader.join()
    assert seen == [True]


def test_two_default_stores_do_not_share_data() -> None:
    first, second = SqlRunStore(), SqlRunStore()
    start(first, "r1")
    assert second.get_run("r1") is None


def test_a_store_uses_an_engine_built_elsewhere() -> None:
    engine = create_engine("sqlite://", poolclass=StaticPool,
                           connect_args={"check_same_thread": False})
    store = SqlRunStore(engine=engine)
    start(store, "r1")
    assert store.engine is engine
    assert pandas.read_sql_table("diagnosis_run", engine)["run_id"].tolist() == ["r1"]


def test_opening_a_store_indexes_the_ordinal_even_on_a_table_made_without_it(
        tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE diagnosis_run (run_id TEXT PRIMARY KEY, "
                             "session_id TEXT, ordinal INTEGER NOT NULL)")
    SqlRunStore(engine=engine)
    indexed = {tuple(ix["column_names"]) for ix in inspect(engine).get_indexes("diagnosis_run")}
    assert ("ordinal",) in indexed


def test_a_start_the_store_cannot_hold_is_refused_and_writes_nothing() -> None:
    store = SqlRunStore()
    with pytest.raises(StoreError, match="query holds '\\\\udc80' at character 3"):
        store.insert_running(RunStart("r1", "s1", "why\udc80", 0.0), run_started("r1"))
    assert store.runs() == []


def test_a_completion_with_a_count_beyond_64_bits_is_refused_and_the_run_stays_running(
        ) -> None:
    store = SqlRunStore()
    start(store, "r1")
    with pytest.raises(StoreError, match="total_tokens is 31 digits long"):
        store.complete(completion("r1", total_tokens=10**30))
    row = store.get_run("r1")
    assert row is not None and row["status"] == "RUNNING"


def test_a_value_the_driver_refuses_is_a_store_error_and_rolls_back_the_completion() -> None:
    store = SqlRunStore()
    start(store, "r1")
    broken = CanonicalInvocation(
        "inv-1", "r1", 0, "logs", {"service": "checkout"}, "logs|service=checkout",
        InvocationStatus.ERROR, 0.5, error="backend said \ud800")
    with pytest.raises(StoreError, match="run 'r1': complete failed: UnicodeEncodeError"):
        store.complete(completion("r1", invocations=(broken,)))
    assert store.invocations() == []
    row = store.get_run("r1")
    assert row is not None and row["status"] == "RUNNING"


def _open_at_the_barrier(url: str, barrier: Any, answers: Any) -> None:
    barrier.wait()
    try:
        SqlRunStore(url).close()
        answers.put("opened")
    except Exception as exc:  # noqa: BLE001 (the answer names whatever went wrong)
        answers.put(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")


def opened_in_pairs(urls: list[str]) -> list[str]:
    """What two processes opening each fresh database of ``urls`` at the same moment said."""
    fork = multiprocessing.get_context("fork")
    answers = []
    for url in urls:
        barrier, queue = fork.Barrier(2), fork.Queue()
        both = [fork.Process(target=_open_at_the_barrier, args=(url, barrier, queue))
                for _ in range(2)]
        for process in both:
            process.start()
        answers += [queue.get(timeout=60) for _ in both]
        for process in both:
            process.join(timeout=60)
        queue.close()
        queue.join_thread()
    return answers


@pytest.mark.slow
def test_two_processes_opening_one_fresh_file_at_the_same_moment_both_get_the_store(
        tmp_path: Path) -> None:
    # the second connection's switch to WAL was refused at once, and the tables made at the
    # same moment could collide more often than the creation tried again: a third of the
    # pairs failed before
    urls = [f"sqlite:///{tmp_path / f'runs-{trial}.db'}" for trial in range(20)]
    assert opened_in_pairs(urls) == ["opened"] * 40
