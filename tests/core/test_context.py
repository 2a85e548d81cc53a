"""RunContext.provider_call: what every provider call shares, around RunContext.call."""

from __future__ import annotations

from typing import Any

import pytest
import simpy

from harness_lab.config import HarnessConfig
from harness_lab.core.clocked import ClockedEnvironment
from harness_lab.core.context import RunContext
from harness_lab.errors import ProviderError, RunAborted
from harness_lab.ports import AnswerReply, CallKind, TokenUsage
from harness_lab.states import CancellationReason, RunState, TraceEventStatus, TraceEventType


def play(ctx: RunContext, fn: Any, ok: Any, **kw: Any) -> Any:
    env = ctx.env
    return env.run(until=env.process(ctx.provider_call(
        CallKind.RESPONDER, "responder", fn, TraceEventType.SYSTEM_RESPONSE, ok, **kw)))


def context() -> RunContext:
    return RunContext("run-1", "session-1", simpy.Environment(), HarnessConfig())


def answered() -> AnswerReply:
    return AnswerReply("hello", usage=TokenUsage(7, 3), latency_s=1.5)


def traced(ctx: RunContext) -> list[tuple[TraceEventStatus, dict[str, Any]]]:
    return [(e.status, dict(e.detail)) for e in ctx.tracer.events
            if e.type is TraceEventType.SYSTEM_RESPONSE]


def test_a_reply_has_its_tokens_charged_and_its_success_traced() -> None:
    ctx = context()
    reply = play(ctx, answered, lambda r: {"chars": len(r.text)})
    assert reply.text == "hello"
    usage = ctx.budget.usage()
    assert (usage.input_tokens, usage.output_tokens, usage.tokens) == (7, 3, 10)
    assert traced(ctx) == [(TraceEventStatus.OK, {"chars": 5})]
    assert ctx.now == 1.5  # the call took its latency


def test_a_provider_error_is_traced_failed_with_its_fields_and_raised_uncharged() -> None:
    ctx = context()

    def fails() -> AnswerReply:
        raise ProviderError("responder down", latency_s=0.5)

    with pytest.raises(ProviderError, match="responder down"):
        play(ctx, fails, lambda r: {"chars": 0}, failed={"step": 4})
    assert traced(ctx) == [(TraceEventStatus.FAILED, {"step": 4, "error": "responder down"})]
    assert ctx.budget.usage().tokens == 0


def test_without_ok_the_caller_traces_the_outcome_and_the_tokens_are_still_charged() -> None:
    ctx = context()
    play(ctx, answered, None)
    assert traced(ctx) == []
    assert ctx.budget.usage().tokens == 10


def _during_a_call_past_the_deadline(detection: str, cancel_at: float) -> RunContext:
    """A call from t=1 to t=11, deadline 5, a client disconnect at ``cancel_at``."""
    env = simpy.Environment()
    config = HarnessConfig(deadline_s=5.0).with_(policy={"deadline_detection": detection})
    ctx = RunContext("run-1", "session-1", env, config)

    def slow() -> AnswerReply:
        return AnswerReply("late", usage=TokenUsage(0, 0), latency_s=10.0)

    def run() -> Any:
        yield env.timeout(1.0)
        with pytest.raises(RunAborted):
            yield from ctx.provider_call(CallKind.RESPONDER, "responder", slow,
                                         TraceEventType.SYSTEM_RESPONSE, None)

    def disconnect() -> Any:
        yield env.timeout(cancel_at)
        ctx.cancel(CancellationReason.CLIENT_DISCONNECTED, "client disconnected")

    env.process(disconnect())
    env.run(until=env.process(run()))
    return ctx


@pytest.mark.parametrize("cancel_at", [5.0, 7.0])
def test_by_default_a_cancel_before_any_boundary_found_the_deadline_ends_the_run_cancelled(
        cancel_at: float) -> None:
    ctx = _during_a_call_past_the_deadline("boundary", cancel_at)
    assert ctx.state is RunState.CANCELLED
    assert ctx.cancellation.ended_by is CancellationReason.CLIENT_DISCONNECTED
    assert ctx.lifecycle.termination is not None and ctx.lifecycle.termination.at == cancel_at


@pytest.mark.parametrize("cancel_at", [5.0, 7.0])
def test_with_instant_detection_a_cancel_past_the_deadline_loses_to_timed_out(
        cancel_at: float) -> None:
    ctx = _during_a_call_past_the_deadline("instant", cancel_at)
    assert ctx.state is RunState.TIMED_OUT
    lost = [dict(e.detail) for e in ctx.tracer.events
            if e.type is TraceEventType.TERMINATION_REJECTED]
    assert lost == [{"state": "CANCELLED", "reason": "CLIENT_DISCONNECTED", "at": cancel_at,
                     "lost_to": "TIMED_OUT", "lost_to_reason": "DEADLINE_EXCEEDED",
                     "lost_to_at": 5.0}]
    assert ctx.lifecycle.termination is not None and ctx.lifecycle.termination.at == 5.0


def test_a_cancel_before_the_deadline_wins_under_either_detection() -> None:
    for detection in ("boundary", "instant"):
        ctx = _during_a_call_past_the_deadline(detection, 3.0)
        assert ctx.state is RunState.CANCELLED, detection


def aborted_late_answer(ctx: RunContext) -> Any:
    """A process making a responder call that answers after 10 s, which the run aborts."""
    def slow() -> AnswerReply:
        return AnswerReply("late", usage=TokenUsage(0, 0), latency_s=10.0)

    with pytest.raises(RunAborted):
        yield from ctx.provider_call(CallKind.RESPONDER, "responder", slow,
                                     TraceEventType.SYSTEM_RESPONSE, None)


def test_without_a_cancel_the_boundary_after_the_call_finds_the_deadline() -> None:
    env = simpy.Environment()
    ctx = RunContext("run-1", "session-1", env, HarnessConfig(deadline_s=5.0))

    env.run(until=env.process(aborted_late_answer(ctx)))
    assert ctx.state is RunState.TIMED_OUT
    assert ctx.lifecycle.termination is not None and ctx.lifecycle.termination.at == 10.0


def _slow_call(config: HarnessConfig, latency_s: float, start: float = 1.0,
               capacity: dict[CallKind, simpy.Resource] | None = None,
               env: simpy.Environment | None = None
               ) -> tuple[RunContext, list[tuple[float, RunState]]]:
    """A call of ``latency_s`` from ``start``; the run's state read at every whole second."""
    env = env if env is not None else simpy.Environment()
    ctx = RunContext("run-1", "session-1", env, config, capacity=capacity)
    seen: list[tuple[float, RunState]] = []

    def reply() -> AnswerReply:
        return AnswerReply("late", usage=TokenUsage(0, 0), latency_s=latency_s)

    def run() -> Any:
        yield env.timeout(start)
        try:
            yield from ctx.provider_call(CallKind.RESPONDER, "responder", reply,
                                         TraceEventType.SYSTEM_RESPONSE, None)
        except RunAborted:
            pass

    def watch() -> Any:
        for t in range(1, 12):
            yield env.timeout(t - env.now)
            seen.append((float(t), ctx.state))

    env.process(watch())
    env.process(run())
    env.run()
    return ctx, seen


INSTANT = HarnessConfig(deadline_s=5.0).with_(policy={"deadline_detection": "instant"})


def test_with_instant_detection_the_deadline_fires_at_its_instant_during_the_call() -> None:
    ctx, seen = _slow_call(INSTANT, 10.0)
    assert ctx.lifecycle.termination is not None
    assert (ctx.lifecycle.termination.state, ctx.lifecycle.termination.at) == (
        RunState.TIMED_OUT, 5.0)
    assert [t for t, state in seen if state is RunState.TIMED_OUT] == [
        5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    assert len(ctx.lifecycle.history) == 1


def test_the_call_in_flight_at_the_deadline_runs_to_its_end_and_its_result_is_discarded(
        ) -> None:
    ctx, _ = _slow_call(INSTANT, 10.0)
    assert ctx.discarded == [(CallKind.RESPONDER, "responder", 11.0)]
    assert [(e.t, e.status) for e in ctx.tracer.events
            if e.type is TraceEventType.SYSTEM_RESPONSE] == [(11.0, TraceEventStatus.DISCARDED)]


def test_by_default_the_state_stays_running_until_the_boundary_after_the_call() -> None:
    ctx, seen = _slow_call(HarnessConfig(deadline_s=5.0), 10.0)
    assert [t for t, state in seen if state is RunState.TIMED_OUT] == [11.0]
    assert ctx.lifecycle.termination is not None and ctx.lifecycle.termination.at == 11.0


def test_a_call_that_ends_before_the_deadline_leaves_no_timer_behind() -> None:
    env = simpy.Environment()
    ctx = RunContext("run-1", "session-1", env, INSTANT)

    def run() -> Any:
        yield from ctx.provider_call(CallKind.RESPONDER, "responder", answered,
                                     TraceEventType.SYSTEM_RESPONSE, None)

    env.process(run())
    env.run()
    assert env.now == 1.5  # nothing was left scheduled at the deadline
    assert ctx.state is RunState.RUNNING


def test_with_instant_detection_a_deadline_passed_waiting_for_capacity_is_dated_at_it(
        ) -> None:
    env = simpy.Environment()
    busy = simpy.Resource(env, 1)

    def hold() -> Any:
        with busy.request() as req:
            yield req
            yield env.timeout(8.0)

    env.process(hold())
    ctx, seen = _slow_call(INSTANT, 1.0, start=0.5, env=env,
                           capacity={CallKind.RESPONDER: busy})
    assert ctx.lifecycle.termination is not None
    assert (ctx.lifecycle.termination.state, ctx.lifecycle.termination.at) == (
        RunState.TIMED_OUT, 5.0)
    assert ctx.discarded == [(CallKind.RESPONDER, "responder", 9.0)]


def test_on_an_environment_on_another_clock_the_deadline_fires_when_the_clock_gets_there(
        ) -> None:
    clock = [0.0]
    env = ClockedEnvironment(lambda: clock[0])  # the live server's kind, on a hand-set clock
    ctx = RunContext("run-1", "session-1", env, INSTANT)
    seen: list[tuple[float, RunState]] = []

    env.process(aborted_late_answer(ctx))
    while env.peek() != float("inf"):
        clock[0] = env.peek()  # as the wall clock reaches each event
        env.step()
        seen.append((clock[0], ctx.state))
    assert dict(seen) == {0.0: RunState.RUNNING, 5.0: RunState.TIMED_OUT,
                          10.0: RunState.TIMED_OUT}
    assert ctx.lifecycle.termination is not None and ctx.lifecycle.termination.at == 5.0
    assert ctx.discarded == [(CallKind.RESPONDER, "responder", 10.0)]
