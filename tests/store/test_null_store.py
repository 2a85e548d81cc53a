"""The null store keeps nothing but answers like a store for a fresh session."""

from __future__ import annotations

from harness_lab.store.base import RUN_COLUMNS, RunCompletion, RunStart
from harness_lab.store.null import NullRunStore
from tests.store.test_run_store import run_started

STARTED = run_started("r1")


def completion() -> RunCompletion:
    return RunCompletion(
        run_id="r1", status="SUCCESS", release_outcome="FALLBACK",
        fallback_type="MISSING_REQUIRED_CONTEXT", answer_json="{}", conclusion=None,
        published_result=None, termination_state="SUCCESS", termination_reason="completed",
        duration_ms=1500.0, input_tokens=3, output_tokens=4, total_tokens=7, agent_steps=1,
        tool_calls=0, finished_at=1.5, invocations=(), trace=())


def test_a_fresh_session_has_no_history_and_no_previous_turn() -> None:
    ctx = NullRunStore().read_session("s1", 6)
    assert (ctx.history, ctx.previous_turn) == ((), None)


def test_a_run_in_flight_reads_as_running_and_is_forgotten_once_completed() -> None:
    store = NullRunStore()
    store.insert_running(RunStart("r1", "s1", "why?", 0.0), STARTED)
    store.record_intent("r1", "DIAGNOSIS")
    running = store.get_run("r1")
    assert running is not None and running["status"] == "RUNNING"
    row = store.complete(completion())
    assert list(row) == list(RUN_COLUMNS)
    assert (row["status"], row["intent"], row["fallback_type"]) == (
        "SUCCESS", "DIAGNOSIS", "MISSING_REQUIRED_CONTEXT")
    assert store.get_run("r1") is None


def test_every_completed_column_comes_from_the_start_or_the_completion_by_its_name() -> None:
    store = NullRunStore()
    store.insert_running(RunStart("r9", "s9", "why so slow?", 2.25), STARTED)
    store.record_intent("r9", "DIAGNOSIS")
    done = RunCompletion(
        run_id="r9", status="SUCCESS", release_outcome="SUCCESS", fallback_type="ft",
        answer_json='{"a": 1}', conclusion="the pool", published_result='{"p": 2}',
        termination_state="SUCCESS", termination_reason="completed", duration_ms=1250.0,
        input_tokens=11, output_tokens=13, total_tokens=24, agent_steps=5, tool_calls=4,
        finished_at=3.5, invocations=(), trace=())
    row = store.complete(done)
    started = {"run_id": "r9", "session_id": "s9", "query": "why so slow?",
               "intent": "DIAGNOSIS", "created_at": 2.25}
    assert row == {name: started[name] if name in started else getattr(done, name)
                   for name in RUN_COLUMNS}
    assert list(row) == list(RUN_COLUMNS)


def test_text_no_store_could_write_is_refused_as_the_sql_store_refuses_it() -> None:
    import pytest

    from harness_lab.store.errors import StoreError
    from harness_lab.store.sql import SqlRunStore

    start = RunStart("r1", "s1", "why \ud83d?", 0.0)
    messages = []
    for store in (NullRunStore(), SqlRunStore()):
        with pytest.raises(StoreError) as caught:
            store.insert_running(start, STARTED)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == (
        "run 'r1': query holds '\\ud83d' at character 4, which is not valid Unicode text "
        "(a lone surrogate)")
    store = NullRunStore()
    store.insert_running(RunStart("r1", "s1", "pourquoi ce délai ?", 0.0), STARTED)
    assert store.get_run("r1") is not None
