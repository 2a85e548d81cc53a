"""Interception: one set of port adapters hands every call of a run to its interceptor."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from harness_lab.application.components import Components
from harness_lab.application.intercept import (
    compose,
    intercepted,
    intercepted_ledger,
    intercepted_store,
)
from harness_lab.errors import StoreError
from harness_lab.fakes import Evidence, ScriptedTool, draft
from harness_lab.ports import (
    AgentRequest,
    AnswerRequest,
    CallKind,
    GuardRequest,
    RepairRequest,
    RetrievalRequest,
    RouteReply,
    RouteRequest,
    ToolInput,
)
from harness_lab.states import (
    IntentType,
    InvocationStatus,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.store.base import RunCompletion, RunStart
from harness_lab.store.memory import MemoryRunStore
from harness_lab.tools.ledger import InvocationLedger
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent
from tests.conftest import scripted_components


class Log:
    """An interceptor that notes every call it sees under its name, then lets it through."""

    def __init__(self, name: str, seen: list[str], *, writable: bool = False) -> None:
        self.name = name
        self.seen = seen
        self.writable = writable

    def call(self, kind: CallKind, name: str, request: Any,
             proceed: Callable[[Any], Any]) -> Any:
        self.seen.append(f"{self.name}:{kind.value}:{name}")
        return proceed(request)

    def validate(self, tool: str, scope: Mapping[str, Any],
                 proceed: Callable[[Mapping[str, Any]], str | None]) -> str | None:
        self.seen.append(f"{self.name}:validate:{tool}")
        return proceed(scope)

    def read_only(self, tool: str, read_only: bool) -> bool:
        self.seen.append(f"{self.name}:read_only:{tool}:{read_only}")
        return read_only and not self.writable

    def keep(self, stage: str, record: Any, proceed: Callable[[Any], bool]) -> bool:
        self.seen.append(f"{self.name}:{stage}")
        return proceed(record)

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        self.seen.append(f"{self.name}:{operation}")
        return proceed()


class Refuses(Log):
    """Answers every router call itself, refuses every ledger begin and every store
    completion."""

    def call(self, kind: CallKind, name: str, request: Any,
             proceed: Callable[[Any], Any]) -> Any:
        if kind is CallKind.ROUTER:
            self.seen.append(f"{self.name}:answered")
            return RouteReply(IntentType.SYSTEM_CHAT)
        return super().call(kind, name, request, proceed)

    def keep(self, stage: str, record: Any, proceed: Callable[[Any], bool]) -> bool:
        return False if stage == "begin" else proceed(record)

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        if operation == "complete":
            raise StoreError("disk full")
        return super().persist(operation, proceed)


def components() -> Components:
    return scripted_components([draft("x")], repair=[draft("y")], responder="hi",
                               retriever="a page",
                               tools=[ScriptedTool("logs", default=Evidence(({"line": "t"},)))])


def test_every_port_call_reaches_the_interceptor_with_its_kind_and_name() -> None:
    seen: list[str] = []
    c = intercepted(components(), Log("log", seen))
    c.router.route(RouteRequest("why?", (), None))
    c.model.step(AgentRequest("run-1", "why?", 1, (), ("logs",)))
    c.guard.judge(GuardRequest("run-1", "why?", {}, ()))
    c.repair.repair(RepairRequest("run-1", "why?", {}, (), ()))
    c.responder.answer(AnswerRequest(IntentType.SYSTEM_CHAT, "hi", ()))
    c.retriever.retrieve(RetrievalRequest("why?"))
    c.tools["logs"].validate({"service": "checkout"})
    c.tools["logs"].invoke(ToolInput("run-1", "run-1-inv-1", "logs", {"service": "checkout"}))
    assert seen == ["log:read_only:logs:True", "log:router:router", "log:model:model",
                    "log:guard:guard", "log:repair:repair", "log:responder:responder",
                    "log:retriever:retriever", "log:validate:logs", "log:tool:logs"]


def test_a_call_the_interceptor_answers_never_reaches_the_component() -> None:
    seen: list[str] = []
    plain = components()
    reply = intercepted(plain, Refuses("r", seen)).router.route(RouteRequest("hi", (), None))
    assert reply.intent is IntentType.SYSTEM_CHAT
    assert plain.router.requests == []  # type: ignore[attr-defined]


def test_composed_interceptors_see_a_call_outermost_first_and_its_flag_innermost_first() -> None:
    seen: list[str] = []
    both = compose(Log("outer", seen), Log("inner", seen, writable=True))
    assert both is not None
    c = intercepted(components(), both)
    c.router.route(RouteRequest("why?", (), None))
    assert seen == ["inner:read_only:logs:True", "outer:read_only:logs:False",
                    "outer:router:router", "inner:router:router"]
    assert c.tools["logs"].read_only is False


def test_an_outer_interceptor_that_answers_keeps_the_call_from_the_inner_one() -> None:
    seen: list[str] = []
    both = compose(Refuses("outer", seen), Log("inner", seen))
    assert both is not None
    intercepted(components(), both).router.route(RouteRequest("hi", (), None))
    assert seen[-1] == "outer:answered"
    assert not any(s.startswith("inner:router") for s in seen)


def test_the_ledger_keeps_what_every_interceptor_lets_through() -> None:
    seen: list[str] = []
    ledger = InvocationLedger()
    both = compose(Log("outer", seen), Refuses("inner", seen))
    assert both is not None
    kept = intercepted_ledger(ledger, both)
    record = CanonicalInvocation("run-1-inv-1", "run-1", 1, "logs", {}, "{}",
                                 InvocationStatus.PROJECTING, 0.0, None, None, None, 0, 0,
                                 None, None, None)
    assert kept.begin(record) is False
    assert kept.complete(record) is True
    assert seen == ["outer:begin", "outer:complete"]


def test_composing_nothing_is_no_interceptor_and_one_is_itself() -> None:
    only = Log("only", [])
    assert compose() is None
    assert compose(None, None) is None
    assert compose(None, only) is only


STARTED = TraceEvent("run-1", 0, 0.0, TraceEventType.RUN_STARTED, TracePhase.RUN,
                     TraceEventStatus.OK, {})


def completion(run_id: str) -> RunCompletion:
    return RunCompletion(run_id, "SUCCESS", "SUCCESS", None, None, None, None, "SUCCESS", None,
                         1.0, 1, 1, 2, 0, 0, 1.0, (), ())


def test_every_store_operation_of_a_run_reaches_the_interceptor_by_name() -> None:
    seen: list[str] = []
    store = intercepted_store(MemoryRunStore(), Log("log", seen))
    store.read_session("s-1", 5)
    store.insert_running(RunStart("run-1", "s-1", "why?", 0.0), STARTED)
    store.record_intent("run-1", "DIAGNOSIS")
    row = store.complete(completion("run-1"))
    assert store.get_run("run-1") == row
    assert seen == ["log:read_session", "log:insert_running", "log:record_intent",
                    "log:complete", "log:get_run"]


def test_a_store_operation_the_outer_interceptor_refuses_never_reaches_the_inner_or_store(
        ) -> None:
    seen: list[str] = []
    plain = MemoryRunStore()
    both = compose(Refuses("outer", seen), Log("inner", seen))
    assert both is not None
    store = intercepted_store(plain, both)
    store.insert_running(RunStart("run-1", "s-1", "why?", 0.0), STARTED)
    with pytest.raises(StoreError, match="disk full"):
        store.complete(completion("run-1"))
    assert seen == ["outer:insert_running", "inner:insert_running"]
    assert (plain.get_run("run-1") or {}).get("status") == "RUNNING"
