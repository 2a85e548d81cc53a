"""The RunStore contract, run against the SQL store and the in-memory store alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness_lab.ports import PreviousTurn, Turn
from harness_lab.states import (
    EvidenceStatus,
    IntentType,
    InvocationStatus,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.store import (
    RUN_COLUMNS,
    GroupCommitStore,
    MemoryRunStore,
    RunCompletion,
    RunStart,
    SqlRunStore,
    StoreError,
)
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

Store = SqlRunStore | MemoryRunStore | GroupCommitStore

STARTED_ROW = {"run_id": "r1", "seq": 0, "t": 0.0, "type": "RUN_STARTED", "phase": "RUN",
               "status": "OK", "detail": {}}


@pytest.fixture(params=["sql", "memory", "group-commit"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """A fresh store of each kind (a group of two runs for the group-commit store)."""
    if request.param == "sql":
        sql = SqlRunStore()
        yield sql
        sql.close()
    elif request.param == "group-commit":
        group = GroupCommitStore(SqlRunStore(), every=2)
        yield group
        group.close()
    else:
        yield MemoryRunStore()


def event(run_id: str, seq: int, t: float = 1.0, detail: dict[str, Any] | None = None,
          type_: TraceEventType = TraceEventType.ROUTING_DECISION) -> TraceEvent:
    """A ROUTING-phase trace event of ``run_id`` at ``seq``."""
    return TraceEvent(run_id, seq, t, type_, TracePhase.ROUTING, TraceEventStatus.OK,
                      detail if detail is not None else {})


def invocation(run_id: str, invocation_id: str, seq: int = 0) -> CanonicalInvocation:
    """A READY, evidence-found invocation of the ``logs`` tool."""
    return CanonicalInvocation(
        invocation_id, run_id, seq, "logs", {"service": "checkout"}, "logs|service=checkout",
        InvocationStatus.READY, 0.5, evidence_status=EvidenceStatus.EVIDENCE_FOUND, items=3,
        size_bytes=120, finished_at=0.8, call_id="call-1",
    )


def run_started(run_id: str, at: float = 0.0) -> TraceEvent:
    """The RUN_STARTED event of ``run_id``, the first of its trace."""
    return TraceEvent(run_id, 0, at, TraceEventType.RUN_STARTED, TracePhase.RUN,
                      TraceEventStatus.OK, {})


def start(store: Store, run_id: str, *, session: str = "s1",
          query: str = "why is checkout slow?", at: float = 0.0) -> None:
    """Insert the RUNNING row of ``run_id`` and its RUN_STARTED event."""
    store.insert_running(RunStart(run_id, session, query, at), run_started(run_id, at))


def completion(run_id: str, **overrides: Any) -> RunCompletion:
    """A SUCCESS completion of ``run_id`` with ``overrides`` applied."""
    fields: dict[str, Any] = {
        "run_id": run_id, "status": "SUCCESS", "release_outcome": "SUCCESS",
        "fallback_type": None, "answer_json": '{"text": "ok"}', "conclusion": None,
        "published_result": None, "termination_state": "SUCCESS", "termination_reason": None,
        "duration_ms": 1500.0, "input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
        "agent_steps": 2, "tool_calls": 1, "finished_at": 1.5, "invocations": (), "trace": (),
    }
    fields.update(overrides)
    return RunCompletion(**fields)


def turn(store: Store, run_id: str, intent: IntentType | None, *, session: str = "s1",
         query: str = "why is checkout slow?", at: float = 0.0, **overrides: Any) -> None:
    """A whole run: its start, its routed intent (if any) and its completion."""
    start(store, run_id, session=session, query=query, at=at)
    if intent is not None:
        store.record_intent(run_id, intent.value)
    store.complete(completion(run_id, **overrides))


def published(store: Store, run_id: str, *, session: str = "s1", at: float = 0.0,
              query: str = "why is checkout slow?") -> None:
    """A DIAGNOSIS run released as SUCCESS with a published result."""
    turn(store, run_id, IntentType.DIAGNOSIS, session=session, query=query, at=at,
         conclusion=f"conclusion of {run_id}", published_result=f'{{"run": "{run_id}"}}')


def fallback(store: Store, run_id: str, *, session: str = "s1", at: float = 0.0,
             **overrides: Any) -> None:
    """A DIAGNOSIS run released as an INSUFFICIENT_EVIDENCE fallback."""
    fields: dict[str, Any] = {"release_outcome": "FALLBACK",
                              "fallback_type": "INSUFFICIENT_EVIDENCE",
                              "answer_json": '{"fallback": "INSUFFICIENT_EVIDENCE"}'}
    fields.update(overrides)
    turn(store, run_id, IntentType.DIAGNOSIS, session=session, at=at, **fields)


# -- the RUNNING row ------------------------------------------------------------------------


def test_the_running_row_is_readable_right_after_insert_running(store: Store) -> None:
    start(store, "r1", session="s1", query="why is checkout slow?", at=4.0)
    assert store.get_run("r1") == {
        "run_id": "r1", "session_id": "s1", "query": "why is checkout slow?", "intent": None,
        "status": "RUNNING", "release_outcome": None, "fallback_type": None,
        "answer_json": None, "conclusion": None, "published_result": None,
        "termination_state": None, "termination_reason": None, "duration_ms": None,
        "input_tokens": None, "output_tokens": None, "total_tokens": None,
        "agent_steps": None, "tool_calls": None, "created_at": 4.0, "finished_at": None,
    }


def test_a_run_that_never_completes_leaves_one_running_row_and_only_its_start_event(
        store: Store) -> None:
    start(store, "r1")
    assert [row["status"] for row in store.runs()] == ["RUNNING"]
    assert store.trace() == [STARTED_ROW]
    assert store.invocations() == []


def test_get_run_returns_exactly_the_run_columns_in_order(store: Store) -> None:
    start(store, "r1")
    row = store.get_run("r1")
    assert row is not None
    assert tuple(row) == RUN_COLUMNS


def test_an_unknown_run_reads_as_none(store: Store) -> None:
    assert store.get_run("ghost") is None


def test_record_intent_sets_the_intent_of_the_running_row(store: Store) -> None:
    start(store, "r1")
    store.record_intent("r1", "DIAGNOSIS")
    row = store.get_run("r1")
    assert row is not None
    assert (row["intent"], row["status"]) == ("DIAGNOSIS", "RUNNING")


def test_inserting_the_same_run_twice_raises_store_error_naming_it(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r1"):
        start(store, "r1")


# -- completion -----------------------------------------------------------------------------


def test_completion_writes_every_field(store: Store) -> None:
    start(store, "r1", query="why is checkout slow?", at=2.0)
    store.record_intent("r1", "DIAGNOSIS")
    store.complete(completion(
        "r1", status="SUCCESS", release_outcome="FALLBACK",
        fallback_type="INSUFFICIENT_EVIDENCE", answer_json='{"fallback": "x"}',
        conclusion=None, published_result=None, termination_state="SUCCESS",
        termination_reason="INFORMATION_SATURATED", duration_ms=2500.5, input_tokens=300,
        output_tokens=40, total_tokens=340, agent_steps=3, tool_calls=2, finished_at=4.5,
    ))
    assert store.get_run("r1") == {
        "run_id": "r1", "session_id": "s1", "query": "why is checkout slow?",
        "intent": "DIAGNOSIS", "status": "SUCCESS", "release_outcome": "FALLBACK",
        "fallback_type": "INSUFFICIENT_EVIDENCE", "answer_json": '{"fallback": "x"}',
        "conclusion": None, "published_result": None, "termination_state": "SUCCESS",
        "termination_reason": "INFORMATION_SATURATED", "duration_ms": 2500.5,
        "input_tokens": 300, "output_tokens": 40, "total_tokens": 340, "agent_steps": 3,
        "tool_calls": 2, "created_at": 2.0, "finished_at": 4.5,
    }


def test_whole_number_times_read_back_as_floats(store: Store) -> None:
    start(store, "r1", at=3)
    store.complete(completion("r1", duration_ms=2000, finished_at=5,
                              trace=[event("r1", 1, t=4)]))
    row = store.get_run("r1")
    assert row is not None
    assert [repr(row[name]) for name in ("created_at", "duration_ms", "finished_at")] == [
        "3.0", "2000.0", "5.0"]
    assert [repr(ev["t"]) for ev in store.trace("r1")] == ["3.0", "4.0"]


def test_complete_returns_the_stored_row(store: Store) -> None:
    start(store, "r1")
    returned = store.complete(completion("r1"))
    assert returned == store.get_run("r1")


@pytest.mark.parametrize(("status", "outcome"), [
    ("SUCCESS", "SUCCESS"), ("SUCCESS", "FALLBACK"), ("FAILED", "FAILED"),
    ("CANCELLED", "CANCELLED"),
])
def test_the_status_column_holds_the_completed_status(store: Store, status: str,
                                                      outcome: str) -> None:
    start(store, "r1")
    store.complete(completion("r1", status=status, release_outcome=outcome))
    row = store.get_run("r1")
    assert row is not None
    assert (row["status"], row["release_outcome"]) == (status, outcome)


def test_a_completion_with_status_running_is_refused(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r1"):
        store.complete(completion("r1", status="RUNNING"))


@pytest.mark.parametrize("published", ['{"b": 1,  "a": [2]}', None],
                         ids=["a JSON object", "none"])
def test_published_result_is_stored_exactly_as_given(store: Store,
                                                     published: str | None) -> None:
    start(store, "r1")
    store.complete(completion("r1", published_result=published))
    row = store.get_run("r1")
    assert row is not None
    assert row["published_result"] == published


def test_a_published_result_that_is_not_a_json_object_is_refused(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r1"):
        store.complete(completion("r1", published_result="not json"))


def test_invocations_and_trace_are_written_with_the_completion(store: Store) -> None:
    start(store, "r1")
    store.complete(completion("r1", invocations=[invocation("r1", "inv-1")],
                              trace=[event("r1", 1, t=0.25, detail={"intent": "DIAGNOSIS"})]))
    assert store.invocations("r1") == [{
        "invocation_id": "inv-1", "run_id": "r1", "seq": 0, "tool": "logs",
        "scope": {"service": "checkout"}, "normalized_scope": "logs|service=checkout",
        "status": "READY", "evidence_status": "EVIDENCE_FOUND", "error_code": None,
        "error": None, "items": 3, "size_bytes": 120, "information_gain": None,
        "started_at": 0.5, "finished_at": 0.8, "call_id": "call-1",
    }]
    assert store.trace("r1") == [STARTED_ROW, {
        "run_id": "r1", "seq": 1, "t": 0.25, "type": "ROUTING_DECISION", "phase": "ROUTING",
        "status": "OK", "detail": {"intent": "DIAGNOSIS"},
    }]


def test_the_read_helpers_filter_by_run(store: Store) -> None:
    start(store, "r1")
    start(store, "r2", at=1.0)
    store.complete(completion("r2", invocations=[invocation("r2", "inv-2")]))
    assert [row["invocation_id"] for row in store.invocations("r1")] == []
    assert [row["invocation_id"] for row in store.invocations("r2")] == ["inv-2"]
    assert [(row["run_id"], row["seq"]) for row in store.trace("r2")] == [("r2", 0)]


# -- refused writes -------------------------------------------------------------------------


def test_completing_an_unknown_run_raises_store_error_naming_it(store: Store) -> None:
    with pytest.raises(StoreError, match="ghost"):
        store.complete(completion("ghost"))


def test_completing_twice_raises_store_error_and_keeps_the_first_completion(
        store: Store) -> None:
    start(store, "r1")
    store.complete(completion("r1", conclusion="first"))
    with pytest.raises(StoreError, match="r1"):
        store.complete(completion("r1", conclusion="second"))
    row = store.get_run("r1")
    assert row is not None
    assert row["conclusion"] == "first"


def test_record_intent_on_an_unknown_run_raises_store_error_naming_it(store: Store) -> None:
    with pytest.raises(StoreError, match="ghost"):
        store.record_intent("ghost", "DIAGNOSIS")


def test_record_intent_with_an_unknown_intent_is_refused(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="SMALL_TALK"):
        store.record_intent("r1", "SMALL_TALK")


def test_a_failed_completion_leaves_nothing_half_written(store: Store) -> None:
    start(store, "r1")
    bad = completion("r1", invocations=[invocation("r1", "inv-1")],
                     trace=[event("r1", 1), event("r1", 1)])
    with pytest.raises(StoreError, match="r1"):
        store.complete(bad)
    row = store.get_run("r1")
    assert row is not None
    assert (row["status"], row["finished_at"]) == ("RUNNING", None)
    assert store.invocations() == []
    assert store.trace() == [STARTED_ROW]


def test_a_trace_event_reusing_the_start_seq_refuses_the_whole_completion(
        store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r1"):
        store.complete(completion("r1", trace=[event("r1", 0)]))
    row = store.get_run("r1")
    assert row is not None
    assert row["status"] == "RUNNING"
    assert store.trace() == [STARTED_ROW]


def test_an_invocation_id_already_stored_refuses_the_whole_completion(store: Store) -> None:
    turn(store, "r1", None, invocations=[invocation("r1", "inv-1")])
    start(store, "r2", at=1.0)
    with pytest.raises(StoreError, match="r2"):
        store.complete(completion("r2", invocations=[invocation("r2", "inv-1")],
                                  trace=[event("r2", 1)]))
    assert [row["run_id"] for row in store.invocations()] == ["r1"]
    assert [(row["run_id"], row["seq"]) for row in store.trace("r2")] == [("r2", 0)]


def test_an_invocation_of_another_run_is_refused(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r9"):
        store.complete(completion("r1", invocations=[invocation("r9", "inv-1")]))


def test_a_trace_detail_that_is_not_json_is_refused(store: Store) -> None:
    start(store, "r1")
    with pytest.raises(StoreError, match="r1"):
        store.complete(completion("r1", trace=[event("r1", 1, detail={"at": object()})]))
    assert store.trace() == [STARTED_ROW]


def test_a_start_event_of_another_run_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="r2"):
        store.insert_running(RunStart("r1", "s1", "q", 0.0), run_started("r2"))
    assert store.runs() == []


def test_get_run_returns_a_copy_the_caller_cannot_change_the_store_through(
        store: Store) -> None:
    start(store, "r1")
    row = store.get_run("r1")
    assert row is not None
    row["status"] = "SUCCESS"
    again = store.get_run("r1")
    assert again is not None
    assert again["status"] == "RUNNING"


# -- read_session: PreviousTurn -------------------------------------------------------------


def test_previous_turn_is_read_from_a_published_diagnosis_success(store: Store) -> None:
    published(store, "r1", query="why is checkout slow?")
    assert store.read_session("s1", 5).previous_turn == PreviousTurn(
        "r1", "why is checkout slow?", "conclusion of r1", {"run": "r1"})


@pytest.mark.parametrize(("later", "previous_run"), [(published, "r2"), (fallback, "r1")],
                         ids=["a later diagnosis", "a later fallback"])
def test_previous_turn_is_the_latest_published_diagnosis_never_a_fallback(
        store: Store, later: Any, previous_run: str) -> None:
    published(store, "r1", at=1.0)
    later(store, "r2", at=2.0)
    previous = store.read_session("s1", 5).previous_turn
    assert previous is not None
    assert previous.run_id == previous_run


def test_a_session_with_only_a_fallback_has_no_previous_turn(store: Store) -> None:
    fallback(store, "r1")
    assert store.read_session("s1", 5).previous_turn is None


def test_a_fallback_carrying_a_published_result_is_still_not_a_previous_turn(
        store: Store) -> None:
    fallback(store, "r1", published_result='{"leaked": true}')
    assert store.read_session("s1", 5).previous_turn is None


def test_a_published_result_under_another_intent_is_not_a_previous_turn(store: Store) -> None:
    turn(store, "r1", IntentType.KNOWLEDGE_QUERY, published_result='{"run": "r1"}')
    assert store.read_session("s1", 5).previous_turn is None


def test_a_diagnosis_success_without_published_result_is_not_a_previous_turn(
        store: Store) -> None:
    turn(store, "r1", IntentType.DIAGNOSIS, conclusion="the pool is exhausted")
    assert store.read_session("s1", 5).previous_turn is None


def test_previous_turn_comes_from_the_same_session_only(store: Store) -> None:
    published(store, "r1", session="other")
    assert store.read_session("s1", 5).previous_turn is None


def test_previous_turn_does_not_depend_on_the_history_limit(store: Store) -> None:
    published(store, "r1", at=1.0)
    turn(store, "r2", IntentType.SYSTEM_CHAT, at=2.0)
    assert store.read_session("s1", 1).history[0].run_id == "r2"
    previous = store.read_session("s1", 1).previous_turn
    assert previous is not None
    assert previous.run_id == "r1"


# -- read_session: history ------------------------------------------------------------------


def test_history_is_bounded_to_the_last_turns_in_chronological_order(store: Store) -> None:
    for i, at in enumerate([1.0, 2.0, 3.0, 4.0], start=1):
        turn(store, f"r{i}", IntentType.SYSTEM_CHAT, at=at)
    history = store.read_session("s1", 2).history
    assert [t.run_id for t in history] == ["r3", "r4"]


def test_history_orders_by_created_at_not_by_insertion(store: Store) -> None:
    turn(store, "late", IntentType.SYSTEM_CHAT, at=5.0)
    turn(store, "early", IntentType.SYSTEM_CHAT, at=3.0)
    assert [t.run_id for t in store.read_session("s1", 5).history] == ["early", "late"]


def test_history_orders_runs_created_at_the_same_instant_by_insertion(store: Store) -> None:
    turn(store, "rb", IntentType.SYSTEM_CHAT, at=1.0)
    turn(store, "ra", IntentType.SYSTEM_CHAT, at=1.0)
    assert [t.run_id for t in store.read_session("s1", 5).history] == ["rb", "ra"]


def test_history_leaves_out_running_runs(store: Store) -> None:
    turn(store, "r1", IntentType.SYSTEM_CHAT, at=1.0)
    start(store, "r2", at=2.0)
    assert [t.run_id for t in store.read_session("s1", 5).history] == ["r1"]


def test_history_keeps_failed_and_cancelled_runs(store: Store) -> None:
    turn(store, "r1", None, at=1.0, status="FAILED", release_outcome="FAILED",
         answer_json=None)
    turn(store, "r2", IntentType.DIAGNOSIS, at=2.0, status="CANCELLED",
         release_outcome="CANCELLED", answer_json=None)
    assert store.read_session("s1", 5).history == (
        Turn("r1", "why is checkout slow?", None, None),
        Turn("r2", "why is checkout slow?", IntentType.DIAGNOSIS, None),
    )


def test_history_comes_from_the_same_session_only(store: Store) -> None:
    turn(store, "r1", IntentType.SYSTEM_CHAT, session="other")
    assert store.read_session("s1", 5).history == ()


def test_a_turn_answer_is_the_conclusion_when_set_else_the_answer_json(store: Store) -> None:
    turn(store, "r1", IntentType.DIAGNOSIS, query="q1", at=1.0, conclusion="pool exhausted",
         answer_json='{"report": 1}')
    turn(store, "r2", IntentType.SYSTEM_CHAT, query="q2", at=2.0, conclusion=None,
         answer_json='{"text": "hello"}')
    assert store.read_session("s1", 5).history == (
        Turn("r1", "q1", IntentType.DIAGNOSIS, "pool exhausted"),
        Turn("r2", "q2", IntentType.SYSTEM_CHAT, '{"text": "hello"}'),
    )


def test_a_zero_history_limit_reads_no_history(store: Store) -> None:
    turn(store, "r1", IntentType.SYSTEM_CHAT)
    assert store.read_session("s1", 0).history == ()


def test_an_unknown_session_reads_empty(store: Store) -> None:
    context = store.read_session("nobody", 5)
    assert (context.history, context.previous_turn) == ((), None)


def test_runs_lists_every_row_oldest_first(store: Store) -> None:
    turn(store, "r2", IntentType.SYSTEM_CHAT, at=2.0)
    start(store, "r1", at=1.0)
    assert [(row["run_id"], row["status"]) for row in store.runs()] == [
        ("r1", "RUNNING"), ("r2", "SUCCESS")]
