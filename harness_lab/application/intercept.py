"""One way to inject: an :class:`Interceptor` sees every port call of a run and may change it.

A run's parts (:class:`~harness_lab.application.parts.RunParts`) may carry an interceptor; the
run then calls its components, ledger and run store through the thin adapters of this module,
each of which hands the call to the interceptor with ``proceed``, the call it stands for. A fault
plan, sampled faults and whatever else changes what a run's providers answer are
interceptors; :func:`compose` stacks several. Without one the run calls its components
directly: nothing here costs a run that injects nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from harness_lab.application.components import Components
from harness_lab.ports import (
    AgentRequest,
    AnswerReply,
    AnswerRequest,
    CallKind,
    GuardReply,
    GuardRequest,
    ModelReply,
    RepairRequest,
    RetrievalReply,
    RetrievalRequest,
    RouteReply,
    RouteRequest,
    Tool,
    ToolInput,
    ToolOutput,
)
from harness_lab.store.base import RunCompletion, RunStart, RunStore, SessionContext
from harness_lab.tools.ledger import Ledger
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

__all__ = ["Interceptor", "Proceed", "compose", "intercepted", "intercepted_ledger",
           "intercepted_store"]

Proceed = Callable[[Any], Any]
"""The intercepted call itself: give it the request, it returns the reply (or raises)."""


class Interceptor(Protocol):
    """Sees every port call of a run: provider and tool calls, tool checks, the ledger, the
    run store.

    Each method is given the call's ``proceed``; it returns what the call returns, by calling
    ``proceed`` (with the request, or another one) or not at all (an injected reply or
    error). A method that changes nothing returns ``proceed(request)``.
    """

    def call(self, kind: CallKind, name: str, request: Any, proceed: Proceed) -> Any:
        """A provider call (``name`` is ``kind``'s value) or a tool's ``invoke`` (the tool's
        name): the reply."""
        ...

    def validate(self, tool: str, scope: Mapping[str, Any],
                 proceed: Callable[[Mapping[str, Any]], str | None]) -> str | None:
        """The tool's check of a requested scope: why it is refused, or None."""
        ...

    def read_only(self, tool: str, read_only: bool) -> bool:
        """The tool's read-only flag as the run sees it (asked once, when the run is bound)."""
        ...

    def keep(self, stage: str, record: CanonicalInvocation,
             proceed: Callable[[CanonicalInvocation], bool]) -> bool:
        """The ledger keeping a record at ``stage`` (``begin`` or ``complete``): False when
        it refuses."""
        ...

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        """The run store's ``operation`` (``read_session``, ``insert_running``,
        ``record_intent``, ``complete``, ``get_run``), which ``proceed`` makes: what it
        returns (a refusal raises :class:`~harness_lab.errors.StoreError`)."""
        ...


class _Composed:
    """Two interceptors, ``outer`` seeing each call first and ``inner`` next to the port."""

    __slots__ = ("outer", "inner")

    def __init__(self, outer: Interceptor, inner: Interceptor) -> None:
        self.outer = outer
        self.inner = inner

    def call(self, kind: CallKind, name: str, request: Any, proceed: Proceed) -> Any:
        """The outer's call, whose ``proceed`` is the inner's."""
        inner = self.inner
        return self.outer.call(kind, name, request,
                               lambda r: inner.call(kind, name, r, proceed))

    def validate(self, tool: str, scope: Mapping[str, Any],
                 proceed: Callable[[Mapping[str, Any]], str | None]) -> str | None:
        """The outer's check, whose ``proceed`` is the inner's."""
        inner = self.inner
        return self.outer.validate(tool, scope, lambda s: inner.validate(tool, s, proceed))

    def read_only(self, tool: str, read_only: bool) -> bool:
        """The flag as the inner sees it, then as the outer sees that."""
        return self.outer.read_only(tool, self.inner.read_only(tool, read_only))

    def keep(self, stage: str, record: CanonicalInvocation,
             proceed: Callable[[CanonicalInvocation], bool]) -> bool:
        """The outer's keep, whose ``proceed`` is the inner's."""
        inner = self.inner
        return self.outer.keep(stage, record, lambda r: inner.keep(stage, r, proceed))

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        """The outer's store operation, whose ``proceed`` is the inner's."""
        inner = self.inner
        return self.outer.persist(operation, lambda: inner.persist(operation, proceed))


def compose(*interceptors: Interceptor | None) -> Interceptor | None:
    """The given interceptors as one, the first outermost (None when none is given)."""
    present = [i for i in interceptors if i is not None]
    if not present:
        return None
    composed = present[-1]
    for outer in reversed(present[:-1]):
        composed = _Composed(outer, composed)
    return composed


# -- the adapters: one per port, each a call handed to the interceptor ------------------------


class _Adapter:
    __slots__ = ("inner", "via")

    def __init__(self, inner: Any, via: Interceptor) -> None:
        self.inner = inner
        self.via = via


class _Router(_Adapter):
    def route(self, request: RouteRequest) -> RouteReply:
        return self.via.call(CallKind.ROUTER, "router", request, self.inner.route)


class _Model(_Adapter):
    def step(self, request: AgentRequest) -> ModelReply:
        return self.via.call(CallKind.MODEL, "model", request, self.inner.step)


class _Guard(_Adapter):
    def judge(self, request: GuardRequest) -> GuardReply:
        return self.via.call(CallKind.GUARD, "guard", request, self.inner.judge)


class _Repair(_Adapter):
    def repair(self, request: RepairRequest) -> ModelReply:
        return self.via.call(CallKind.REPAIR, "repair", request, self.inner.repair)


class _Responder(_Adapter):
    def answer(self, request: AnswerRequest) -> AnswerReply:
        return self.via.call(CallKind.RESPONDER, "responder", request, self.inner.answer)


class _Retriever(_Adapter):
    def retrieve(self, request: RetrievalRequest) -> RetrievalReply:
        return self.via.call(CallKind.RETRIEVER, "retriever", request, self.inner.retrieve)


class _Tool(_Adapter):
    __slots__ = ("name", "read_only", "evidence")

    def __init__(self, inner: Tool, via: Interceptor) -> None:
        super().__init__(inner, via)
        self.name: str = inner.name
        self.evidence: bool = inner.evidence
        self.read_only: bool = via.read_only(inner.name, inner.read_only)

    def validate(self, scope: Mapping[str, Any]) -> str | None:
        return self.via.validate(self.name, scope, self.inner.validate)

    def invoke(self, request: ToolInput) -> ToolOutput:
        return self.via.call(CallKind.TOOL, self.name, request, self.inner.invoke)


class _Ledger(_Adapter):
    def begin(self, record: CanonicalInvocation) -> bool:
        return self.via.keep("begin", record, self.inner.begin)

    def complete(self, record: CanonicalInvocation) -> bool:
        return self.via.keep("complete", record, self.inner.complete)


class _Store(_Adapter):
    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        inner = self.inner
        return self.via.persist("read_session",
                                lambda: inner.read_session(session_id, history_limit))

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        inner = self.inner
        self.via.persist("insert_running", lambda: inner.insert_running(start, started))

    def record_intent(self, run_id: str, intent: str) -> None:
        inner = self.inner
        self.via.persist("record_intent", lambda: inner.record_intent(run_id, intent))

    def complete(self, completion: RunCompletion) -> Mapping[str, Any]:
        inner = self.inner
        return self.via.persist("complete", lambda: inner.complete(completion))

    def get_run(self, run_id: str) -> Mapping[str, Any] | None:
        inner = self.inner
        return self.via.persist("get_run", lambda: inner.get_run(run_id))


def intercepted(c: Components, via: Interceptor) -> Components:
    """``c`` with every port call handed to ``via`` (each tool's read-only flag asked now)."""
    return Components(router=_Router(c.router, via), model=_Model(c.model, via),
                      guard=_Guard(c.guard, via), repair=_Repair(c.repair, via),
                      responder=_Responder(c.responder, via),
                      retriever=_Retriever(c.retriever, via),
                      tools={name: _Tool(t, via) for name, t in c.tools.items()})


def intercepted_ledger(ledger: Ledger, via: Interceptor) -> Ledger:
    """``ledger`` with every begin and completion handed to ``via``."""
    return _Ledger(ledger, via)


def intercepted_store(store: RunStore, via: Interceptor) -> RunStore:
    """``store`` with every operation a run makes handed to ``via``."""
    return _Store(store, via)
