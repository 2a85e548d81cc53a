"""Numbers a fake cannot mean are refused where they are given, naming the fake and field."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from harness_lab.fakes import (
    CallbackModel,
    Evidence,
    NoEvidence,
    Oversize,
    ScriptedModel,
    ScriptedRouter,
    ScriptedTool,
    ToolFailure,
    call_tool,
    draft,
    provider_error,
)
from harness_lab.ports import ModelReply, TokenUsage, ToolOutput

BIG = TokenUsage(10 ** 30, 0)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Evidence(size_bytes=-1_000_000),
     "Evidence: size_bytes must be from 0 to 9223372036854775807 (what the run store keeps), "
     "got -1000000"),
    (lambda: NoEvidence(size_bytes=2 ** 63), "NoEvidence: size_bytes must be from 0 to"),
    (lambda: Oversize(size_bytes=-5), "Oversize: size_bytes must be from 0 to"),
    (lambda: ToolFailure(latency_s=math.nan),
     "ToolFailure: latency_s must be a finite number of seconds >= 0, got nan"),
    (lambda: Evidence(latency_s=math.inf), "Evidence: latency_s must be a finite number"),
    (lambda: ScriptedTool("logs", [ToolOutput((), size_bytes=-1)]),
     r"ScriptedTool\(logs\): size_bytes must be from 0 to"),
    (lambda: ScriptedTool("logs", default=NoEvidence(latency_s=-1.0)),
     "NoEvidence: latency_s must be a finite number of seconds >= 0, got -1.0"),
    (lambda: call_tool("logs", usage=BIG),
     "model reply: usage.input_tokens must be from 0 to 9223372036854775807"),
    (lambda: draft("x", latency_s=math.nan), "model reply: latency_s must be a finite number"),
    (lambda: ScriptedModel([ModelReply(payload=None, latency_s=math.inf)]),
     "ScriptedModel: latency_s must be a finite number"),
    (lambda: ScriptedModel([], usage=BIG), "ScriptedModel: usage.input_tokens must be from 0"),
    (lambda: CallbackModel(lambda r: draft("x"), latency_s=math.inf),
     "CallbackModel: latency_s must be a finite number"),
    (lambda: ScriptedRouter("DIAGNOSIS", latency_s=-0.5),
     "ScriptedRouter: latency_s must be a finite number of seconds >= 0, got -0.5"),
    (lambda: provider_error(latency_s=math.inf), "provider_error: latency_s must be a finite"),
])
def test_a_value_a_fake_cannot_mean_is_a_value_error_naming_it(
        make: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(what", r"\(what").replace(
            "keeps)", r"keeps\)")):
        make()


def test_values_at_the_edges_are_accepted() -> None:
    assert Evidence(size_bytes=2 ** 63 - 1, latency_s=0.0).size_bytes == 2 ** 63 - 1
    assert call_tool("logs", usage=TokenUsage(2 ** 63 - 1, 0), latency_s=1e9).latency_s == 1e9
    assert ScriptedModel([draft("x")], latency_s=0, usage=TokenUsage(0, 0)).latency_s == 0
