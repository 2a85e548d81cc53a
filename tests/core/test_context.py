"""RunContext.provider_call: what every provider call shares, around RunContext.call."""

from __future__ import annotations

from typing import Any

import pytest
import simpy

from harness_lab.config import HarnessConfig
from harness_lab.core.context import RunContext
from harness_lab.errors import ProviderError
from harness_lab.ports import AnswerReply, CallKind, TokenUsage
from harness_lab.states import TraceEventStatus, TraceEventType


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
