"""ChatApplication: the use case that takes one query through the whole harness (doc §2, §5).

Order (doc §2): read history and PreviousTurn -> create the RunContext -> persist RUNNING and
trace RUN_STARTED in one transaction -> publish metadata with the exact session and run id ->
route -> SYSTEM_CHAT | KNOWLEDGE_QUERY | DIAGNOSIS -> release -> terminate (SUCCESS, except the
budget fallback) -> RUN_FINISHED and the completion in one transaction -> SSE content or
failure, then done.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import simpy

from harness_lab.application.components import Components
from harness_lab.application.live import LiveRun, cancel_once
from harness_lab.application.parts import RunParts
from harness_lab.config import UserCancelNotice
from harness_lab.core.budget import Usage
from harness_lab.core.context import RunContext
from harness_lab.defects import Defect, stored_status_of_run_state
from harness_lab.diagnosis.agent import DiagnosisAgent
from harness_lab.diagnosis.collection import CollectionController
from harness_lab.errors import (
    DraftContractError,
    HarnessError,
    ModelFailure,
    ProviderError,
    ReleaseFailed,
    RouterUnavailable,
    RunAborted,
    StoreError,
)
from harness_lab.frozen import value_class
from harness_lab.json_text import json_writer
from harness_lab.ports import (
    AnswerReply,
    AnswerRequest,
    CallKind,
    Responder,
    RetrievalReply,
    RetrievalRequest,
    Router,
    RouteReply,
    RouteRequest,
)
from harness_lab.record import RunRecord
from harness_lab.release.pipeline import ReleaseDecision, ReleasePipeline
from harness_lab.states import (
    CancellationReason,
    ChatApplicationStatus,
    IntentType,
    ReleaseOutcome,
    RunState,
    StoredRunStatus,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.store.base import RunCompletion, RunStart, RunStore, SessionContext
from harness_lab.store.errors import storable_int, unstorable
from harness_lab.tools.boundary import ToolBoundary
from harness_lab.tools.ledger import Ledger

__all__ = ["ChatApplication", "Published"]

_ANSWER_JSON = json_writer(sort_keys=True)  # json.dumps(body, sort_keys=True)
_RELEASED: Final = (ReleaseOutcome.SUCCESS, ReleaseOutcome.FALLBACK)
"""The outcomes that publish a result (content, then done)."""
_NO_SESSION = SessionContext((), None)


@dataclass(frozen=True, slots=True, init=False)
class Published:
    """What the run ends with publicly: an outcome and its content or failure body."""

    outcome: ReleaseOutcome
    content: Mapping[str, Any] | None = None
    failure: Mapping[str, Any] | None = None
    decision: ReleaseDecision | None = None

    def __init__(self,
                 outcome: ReleaseOutcome, content: Mapping[str, Any] | None = None,
                 failure: Mapping[str, Any] | None = None,
                 decision: ReleaseDecision | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "failure", failure)
        object.__setattr__(self, "decision", decision)


value_class(Published)  # see frozen.py


class ChatApplication:
    """Handles chat requests; one instance serves every run of a harness.

    The runs share its store and provider capacity; everything else a run reads is its own
    :class:`~harness_lab.application.parts.RunParts`, given with the run.
    """

    def __init__(self, store: RunStore, *,
                 capacity: dict[CallKind, simpy.Resource] | None = None) -> None:
        self.store = store
        self.capacity = capacity

    # -- the run --------------------------------------------------------------------------------

    def handle(self, live: LiveRun, env: simpy.Environment, parts: RunParts
               ) -> Generator[simpy.Event, Any, RunRecord]:
        """Take ``live``'s query through the harness with the run's bound ``parts``
        (:meth:`RunParts.bound`); ``yield from`` it in a simpy process."""
        refused: StoreError | None = None
        config = parts.config
        try:
            session = self.store.read_session(live.session_id, config.history_limit)
        except StoreError as exc:  # the run cannot see its history: it may not start either
            session, refused = _NO_SESSION, exc
        ctx = RunContext(live.run_id, live.session_id, env, config, probe=parts.probe,
                         latency=parts.latency, capacity=self.capacity)
        live.ctx = ctx
        live.sse.trace = ctx.tracer.events
        started = ctx.tracer.emit(TraceEventType.RUN_STARTED, TraceEventStatus.OK,
                                  {"session_id": live.session_id, "query": live.query})
        if refused is None:
            try:
                self.store.insert_running(RunStart(live.run_id, live.session_id, live.query,
                                                   ctx.now), started)
            except StoreError as exc:  # no RUNNING row, so the run may not start (doc §12.1)
                refused = exc
        if refused is not None:
            live.error = f"StoreError: {refused}"
            return self._finish(live, ctx, self._failed(live, ctx, "STORE_FAILURE",
                                                        str(refused)), stored=False)
        requested = live.requested  # not the run itself: its session holds this callback

        def disconnected() -> None:
            cancel_once(requested, ctx, CancellationReason.CLIENT_DISCONNECTED,
                        "client disconnected")

        live.sse.on_disconnect = disconnected
        if live.pending_cancel is not None:
            ctx.cancel(live.pending_cancel, "before start")
        live.sse.open(live.session_id, live.run_id)
        try:
            published = yield from self._execute(live, ctx, session, parts)
        except RunAborted:
            published = self._aborted(live, ctx, parts.components)
        except (RouterUnavailable, ModelFailure, ReleaseFailed) as exc:
            published = self._failed(live, ctx, type(exc).__name__, str(exc))
        except HarnessError as exc:
            live.error = f"{type(exc).__name__}: {exc}"
            published = self._failed(live, ctx, type(exc).__name__, str(exc))
        except Exception as exc:  # a component's bug is an internal failure, never lost
            live.error = f"{type(exc).__name__}: {exc}"
            published = self._failed(live, ctx, "INTERNAL_FAILURE", live.error)
        return self._finish(live, ctx, published)

    def _execute(self, live: LiveRun, ctx: RunContext, session: SessionContext,
                 parts: RunParts) -> Generator[simpy.Event, Any, Published]:
        components = parts.components
        intent = yield from self._route(live, ctx, session, components.router)
        if intent is IntentType.SYSTEM_CHAT:
            return (yield from self._system_chat(live, ctx, session, components.responder))
        if intent is IntentType.DIAGNOSIS:
            return (yield from self._diagnosis(live, ctx, session, components, parts.ledger))
        return (yield from self._knowledge(live, ctx, session, components))

    def _status(self, live: LiveRun, status: ChatApplicationStatus) -> None:
        live.statuses.append(status)
        live.sse.status(status.value)

    def _route(self, live: LiveRun, ctx: RunContext, session: SessionContext, router: Router
               ) -> Generator[simpy.Event, Any, IntentType]:
        self._status(live, ChatApplicationStatus.ROUTING)
        # the bounded history (doc §2): the store reads the last ``history_limit`` turns
        history = session.history
        request = RouteRequest(live.query, history, session.previous_turn)
        ctx.tracer.emit(TraceEventType.ROUTING_ATTEMPT, TraceEventStatus.STARTED,
                        {"history": len(history)})
        try:
            reply: RouteReply = yield from ctx.provider_call(
                CallKind.ROUTER, "router", lambda: router.route(request),
                TraceEventType.ROUTING_DECISION, lambda r: {"intent": r.intent.value})
        except ProviderError as exc:
            raise RouterUnavailable(f"router unavailable: {exc}") from exc
        intent = reply.intent
        live.intent = intent
        self.store.record_intent(live.run_id, intent.value)
        return intent

    def _answer(self, ctx: RunContext, request: AnswerRequest, trace: TraceEventType,
                responder: Responder) -> Generator[simpy.Event, Any, AnswerReply]:
        try:
            reply: AnswerReply = yield from ctx.provider_call(
                CallKind.RESPONDER, "responder", lambda: responder.answer(request), trace,
                lambda r: {"chars": len(r.text)})
        except ProviderError as exc:
            raise ModelFailure(f"answer model failed: {exc}") from exc
        return reply

    def _system_chat(self, live: LiveRun, ctx: RunContext, session: SessionContext,
                     responder: Responder) -> Generator[simpy.Event, Any, Published]:
        self._status(live, ChatApplicationStatus.SYSTEM_RESPONDING)
        request = AnswerRequest(IntentType.SYSTEM_CHAT, live.query, session.history)
        reply = yield from self._answer(ctx, request, TraceEventType.SYSTEM_RESPONSE,
                                        responder)
        return Published(ReleaseOutcome.SUCCESS,
                         content={"contentType": "system_answer", "text": reply.text})

    def _knowledge(self, live: LiveRun, ctx: RunContext, session: SessionContext,
                   components: Components) -> Generator[simpy.Event, Any, Published]:
        self._status(live, ChatApplicationStatus.KNOWLEDGE_SEARCHING)
        retriever = components.retriever
        request = RetrievalRequest(live.query)
        try:
            found: RetrievalReply = yield from ctx.provider_call(
                CallKind.RETRIEVER, "retriever", lambda: retriever.retrieve(request),
                TraceEventType.KNOWLEDGE_RETRIEVAL, lambda r: {"passages": len(r.passages)})
        except ProviderError as exc:
            raise ModelFailure(f"retrieval failed: {exc}") from exc
        self._status(live, ChatApplicationStatus.KNOWLEDGE_ANSWERING)
        answer = AnswerRequest(IntentType.KNOWLEDGE_QUERY, live.query, session.history,
                               tuple(found.passages))
        reply = yield from self._answer(ctx, answer, TraceEventType.KNOWLEDGE_ANSWER,
                                        components.responder)
        return Published(ReleaseOutcome.SUCCESS,
                         content={"contentType": "knowledge_answer", "text": reply.text,
                                  "sources": len(found.passages)})

    def _diagnosis(self, live: LiveRun, ctx: RunContext, session: SessionContext,
                   comps: Components, ledger: Ledger) -> Generator[simpy.Event, Any, Published]:
        self._status(live, ChatApplicationStatus.DIAGNOSIS_RUNNING)
        cfg = ctx.config
        collection = CollectionController(cfg.no_gain_threshold, cfg.protocol_violation_threshold)
        boundary = ToolBoundary(ctx, comps.tools, ledger, collection)
        agent = DiagnosisAgent(ctx, comps.model, boundary, collection, live.query,
                               session.previous_turn)
        live.collection, live.boundary, live.agent = collection, boundary, agent
        pipeline = ReleasePipeline(ctx, boundary, comps.repair, comps.guard, live.query)
        live.release = pipeline
        try:
            execution = yield from agent.run()
        except DraftContractError as exc:
            # an invalid draft is discarded; only verified progress may still be released
            live.draft_error = f"{exc.kind}: {exc}"
            # the status may see the client go: check after it
            self._status(live, ChatApplicationStatus.SAFETY_VALIDATING)
            ctx.check_active("release")
            # the snapshot now, the refused step's own progress in it (the error's snapshot)
            decision = pipeline.snapshot_fallback(agent.snapshot())
            live.decision = decision
            return Published(decision.outcome, content=decision.content, decision=decision)
        live.execution = execution
        if not pipeline.may_release(execution):
            raise RunAborted(ctx.run_id, ctx.state, "after the agent loop")
        self._status(live, ChatApplicationStatus.SAFETY_VALIDATING)
        decision = yield from pipeline.release(execution)
        live.decision = decision
        return Published(decision.outcome, content=decision.content, decision=decision)

    # -- endings --------------------------------------------------------------------------------

    def _aborted(self, live: LiveRun, ctx: RunContext, components: Components) -> Published:
        """The run ended under the application (RunAborted): a TIMED_OUT run may still release
        its verified progress (SPEC 5.1); any other fails (``_finish`` makes a cancelled run's
        result CANCELLED, as it does every result of a cancelled run)."""
        state = ctx.state
        if (state is RunState.TIMED_OUT and ctx.config.policy.timeout_progress_fallback
                and live.agent is not None and live.boundary is not None):
            pipeline = ReleasePipeline(ctx, live.boundary, components.repair, components.guard,
                                       live.query)
            try:
                decision = pipeline.timeout_fallback(live.agent.snapshot())
            except ReleaseFailed:
                pass
            else:
                live.decision = decision
                return Published(decision.outcome, content=decision.content, decision=decision)
        return Published(ReleaseOutcome.FAILED,
                         failure={"code": state.value, "reason": _reason(ctx)})

    def _failed(self, live: LiveRun, ctx: RunContext, code: str, message: str) -> Published:
        if ctx.lifecycle.is_active:
            ctx.cancellation.cancel(CancellationReason.INTERNAL_FAILURE, message)
        return Published(ReleaseOutcome.FAILED, failure={"code": code, "message": message})

    def _finish(self, live: LiveRun, ctx: RunContext, published: Published, *,
                stored: bool = True) -> RunRecord:
        """End the run: terminal state, RUN_FINISHED, the completion, then SSE (doc §2).

        ``stored=False``: the RUNNING row could not be written, so no completion is either.
        """
        usage = ctx.budget.usage()
        problem = _unstorable(usage, published)
        if problem is not None:  # what no store can hold ends the run FAILED, whatever store
            live.error = f"StoreError: run {live.run_id}: {problem}"
            published = self._failed(live, ctx, "STORE_FAILURE", live.error)
        if published.outcome in _RELEASED:
            # completeSuccess (doc §2), except for the budget or timeout fallback, which keeps
            # the BUDGET_EXHAUSTED or TIMED_OUT the run already has; a run that ended before
            # (a cancel first) rejects the attempt, traced
            decision = published.decision
            if decision is None or decision.run_state is RunState.SUCCESS:
                ctx.lifecycle.finish(RunState.SUCCESS, "completed", ctx.now)
        term = ctx.lifecycle.termination
        assert term is not None
        if term.state is RunState.CANCELLED:
            # a cancel is the run's first terminal: whatever it came to is discarded (doc §4)
            published = Published(ReleaseOutcome.CANCELLED,
                                  failure={"code": "CANCELLED", "reason": _reason(ctx)})
            ctx.tracer.emit(TraceEventType.RUN_CANCELLED, TraceEventStatus.OK,
                            {"reason": _reason(ctx)})
        outcome = published.outcome
        decision = published.decision
        fallback = decision.fallback_type if decision is not None else None
        released = outcome in _RELEASED
        ctx.tracer.emit(TraceEventType.RUN_FINISHED,
                        TraceEventStatus.OK if released else TraceEventStatus.FAILED,
                        {"outcome": outcome.value, "run_state": term.state.value,
                         "fallback_type": fallback.value if fallback else None,
                         "model_calls": usage.model_calls, "tool_calls": usage.tool_calls,
                         # a count no store holds is traced empty, as its column is stored
                         "tokens": storable_int(usage.tokens), "bytes": usage.bytes})
        row = self._persist(live, ctx, published, usage) if stored else None
        if row is None and released:
            # the completion was not stored: the result is not released as if it were
            published = Published(ReleaseOutcome.FAILED,
                                  failure={"code": "STORE_FAILURE", "message": live.error})
        self._publish(live, ctx, published)
        return self._record(live, ctx, published, row, usage)

    def _persist(self, live: LiveRun, ctx: RunContext, published: Published, usage: Usage
                 ) -> Mapping[str, Any] | None:
        """Write the completion; None (and ``live.error``) when the store refuses it."""
        term = ctx.lifecycle.termination
        assert term is not None
        outcome = published.outcome
        body = published.content if published.content is not None else published.failure
        decision = published.decision
        publish = live.intent is IntentType.DIAGNOSIS and (
            outcome is ReleaseOutcome.SUCCESS
            or (Defect.FALLBACK_AS_PREVIOUS_TURN in ctx.config.defects
                and outcome is ReleaseOutcome.FALLBACK))
        records = live.boundary.records if live.boundary is not None else []
        answer = None if body is None else _ANSWER_JSON(body)
        # a count no store holds (the run failed for it) leaves its column empty
        tokens = (storable_int(usage.input_tokens), storable_int(usage.output_tokens),
                  storable_int(usage.tokens))
        completion = RunCompletion(
            run_id=live.run_id, status=(
                stored_status_of_run_state(term.state)  # seeded: the RunState's status
                if Defect.STORED_STATUS_FROM_RUN_STATE in ctx.config.defects
                else StoredRunStatus.for_outcome(outcome)).value,
            release_outcome=outcome.value,
            fallback_type=(decision.fallback_type.value
                           if decision is not None and decision.fallback_type else None),
            answer_json=answer,
            conclusion=decision.conclusion if decision is not None else None,
            # the published result is the content, which is then the answer body itself
            published_result=answer if publish and published.content is not None else None,
            termination_state=term.state.value, termination_reason=_reason(ctx),
            duration_ms=(ctx.now - ctx.started_at) * 1000.0,
            input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=tokens[2],
            agent_steps=_agent_steps(live),
            tool_calls=len(records), finished_at=ctx.now, invocations=tuple(records),
            trace=tuple(ctx.tracer.events[1:]))
        try:
            return self.store.complete(completion)
        except StoreError as exc:  # never escapes the run: the record says it was not stored
            error = f"StoreError: {exc}"
            live.error = error if live.error is None else f"{live.error}; {error}"
            return None

    def _publish(self, live: LiveRun, ctx: RunContext, published: Published) -> None:
        sse = live.sse
        outcome = published.outcome
        if outcome is ReleaseOutcome.CANCELLED:
            # a client that left has no stream open; one still there was cancelled by the user
            # or by the server shutting down: the server always says why, a user cancel as the
            # policy says (SPEC 5.2, 5.9)
            if sse.is_open:
                if (ctx.cancellation.reason is not CancellationReason.USER_REQUESTED
                        or ctx.config.policy.user_cancel_notice is UserCancelNotice.FAILURE):
                    sse.failure(live.session_id, live.run_id, published.failure or {})
                sse.close()
            return
        if published.content is not None:
            if Defect.SECOND_CONTENT_EVENT in ctx.config.defects:  # the session allows it
                sse.content(live.session_id, live.run_id, published.content)
            if sse.content(live.session_id, live.run_id, published.content):
                sse.done(outcome)
        elif sse.failure(live.session_id, live.run_id, published.failure or {}):
            sse.done(ReleaseOutcome.FAILED)

    def _record(self, live: LiveRun, ctx: RunContext, published: Published,
                row: Mapping[str, Any] | None, usage: Usage) -> RunRecord:
        term = ctx.lifecycle.termination
        assert term is not None
        decision = published.decision
        boundary = live.boundary
        collection = live.collection
        release = live.release
        stored = row.get("status") if row is not None else None
        return RunRecord(
            run_id=live.run_id, session_id=live.session_id, query=live.query,
            intent=live.intent, run_state=term.state, termination_reason=_reason(ctx),
            release_outcome=published.outcome,
            fallback_type=decision.fallback_type if decision is not None else None,
            stored_status=_stored_status(stored),
            sse_state=live.sse.state,
            collection_state=collection.state if collection is not None else None,
            stop_reason=collection.stop_reason if collection is not None else None,
            semantic_verdict=decision.verdict if decision is not None else None,
            statuses=tuple(live.statuses), usage=usage,
            headroom=ctx.budget.headroom(), started_at=ctx.started_at, finished_at=ctx.now,
            agent_steps=_agent_steps(live),
            content=published.content, failure=published.failure,
            sse_events=tuple(live.sse.events), sse_refused=tuple(live.sse.refused),
            trace=tuple(ctx.tracer.events),
            invocations=tuple(boundary.records) if boundary is not None else (),
            rejections=tuple(boundary.rejections) if boundary is not None else (),
            gains=tuple(collection.gains) if collection is not None else (),
            stop_required_delivered=(collection.stop_required_delivered
                                     if collection is not None else False),
            evidence_repaired=decision.repaired if decision is not None else False,
            deadline_at=ctx.deadline_at,
            discarded=tuple((k.value, n, t) for k, n, t in ctx.discarded),
            stored_row=row, error=live.error, draft_error=live.draft_error,
            terminations=tuple((t.state.value, t.reason, t.at)
                               for t in ctx.lifecycle.history),
            extra=dict(live.extra),
            termination_causes=tuple(c or "completed" for c in ctx.lifecycle.causes),
            sse_history=tuple(live.sse.history), sse_trace_marks=tuple(live.sse.trace_marks),
            guard_requests=tuple(release.guard_requests) if release is not None else (),
            repair_requests=tuple(release.repair_requests) if release is not None else ())


def _agent_steps(live: LiveRun) -> int:
    """The run's diagnosis-model steps (none without a diagnosis)."""
    agent = live.agent
    return agent.steps if agent is not None else 0


_STORED_STATUS: Final[dict[str, StoredRunStatus]] = {s.value: s for s in StoredRunStatus}


def _stored_status(value: Any) -> StoredRunStatus | None:
    """The StoredRunStatus of a stored value (None for none), without the enum's call; the
    row is the completion this run wrote, so its status is always one."""
    return _STORED_STATUS[value] if value else None


def _unstorable(usage: Usage, published: Published) -> str | None:
    """Why the run's completion could not be stored (see ``store.errors.unstorable``)."""
    decision = published.decision
    conclusion = decision.conclusion if decision is not None else None
    return unstorable({"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                       "total_tokens": usage.tokens, "conclusion": conclusion})


def _reason(ctx: RunContext) -> str | None:
    reason = ctx.cancellation.ended_by
    if reason is not None:
        return reason.value
    term = ctx.lifecycle.termination
    return term.reason if term is not None else None
