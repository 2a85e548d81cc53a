"""The SQL store on a real PostgreSQL server: runs round-trip as they do on SQLite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from harness_lab.config import HarnessConfig
from harness_lab.core.budget import BudgetLimits
from harness_lab.fakes import call_tool, draft, progress
from harness_lab.messages import TokenUsage
from harness_lab.states import IntentType, RunState, StoredRunStatus
from harness_lab.store.sql import SqlRunStore, metadata
from tests.conftest import INV1, build
from tests.postgres import PostgresServer
from tests.store.test_sql_store import opened_in_pairs

STEPS = [
    call_tool("logs", {"service": "checkout"}),
    draft("the db connection pool is exhausted", evidence=[(INV1, "timeouts in logs")],
          progress=progress("GAINED")),
]


@pytest.fixture
def store(postgres_url: str) -> Iterator[SqlRunStore]:
    """A store on an empty PostgreSQL database (the tables of earlier tests dropped)."""
    engine = create_engine(postgres_url)
    metadata.drop_all(engine)
    engine.dispose()
    store = SqlRunStore(postgres_url)
    yield store
    store.close()


def test_a_run_stored_on_postgresql_reads_back_with_its_trace_and_invocations(
        store: SqlRunStore) -> None:
    record = build(STEPS, store=store).run("why is checkout slow?", "s1")
    row = store.get_run(record.run_id)
    assert record.run_state is RunState.SUCCESS
    assert row is not None and row["status"] == StoredRunStatus.SUCCESS.value
    assert row["conclusion"] == "the db connection pool is exhausted"
    assert row["intent"] == IntentType.DIAGNOSIS.value
    assert [e["type"] for e in store.trace(record.run_id)] == [
        e.type.value for e in record.trace]
    assert [i["tool"] for i in store.invocations(record.run_id)] == ["logs"]


def test_a_second_turn_on_postgresql_sees_the_first_as_its_previous_turn(
        store: SqlRunStore) -> None:
    first = build(STEPS, store=store).run("why is checkout slow?", "s1")
    second = build(STEPS, store=store)
    second.submit("and now?", "s1", run_id="run-000002")
    second.run_all()
    requests = second.parts.components.model.requests
    assert requests[0].previous_turn is not None
    assert requests[0].previous_turn.run_id == first.run_id


def test_a_token_count_at_the_64_bit_limit_is_stored_on_postgresql_as_anywhere(
        store: SqlRunStore) -> None:
    """Every integer column holds a signed 64-bit value, the one rule of what a store
    holds (an INTEGER column of PostgreSQL holds 32 bits)."""
    usage = TokenUsage(9223372036854775806, 1)
    harness = build([draft(missing_info=["which service"], usage=usage)], store=store,
                    config=HarnessConfig(budget=BudgetLimits(tokens=None)))
    record = harness.run("why is checkout slow?", "s1")
    assert (record.run_state, record.stored_status) == (RunState.SUCCESS,
                                                        StoredRunStatus.SUCCESS)
    row = store.get_run(record.run_id)
    assert row is not None
    assert (row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (
        9223372036854775806, 1, 9223372036854775807)


def test_the_store_really_is_postgresql(store: SqlRunStore) -> None:
    with store.engine.connect() as conn:
        version = conn.execute(text("SELECT version()")).scalar_one()
    assert store.engine.dialect.name == "postgresql"
    assert version.startswith("PostgreSQL")


def test_two_processes_opening_one_fresh_database_at_the_same_moment_both_get_the_store(
        postgres_server: PostgresServer) -> None:
    # PostgreSQL refused the second CREATE TABLE of a name with a unique violation of its
    # catalogue, which the store did not take for a table made meanwhile: every pair failed
    urls = [postgres_server.fresh_database() for _ in range(5)]
    assert opened_in_pairs(urls) == ["opened"] * 10
