"""Per-sample randomness: distributions, seeded streams and sampled faults."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness_lab.errors import ProviderError, ToolExecutionError
from harness_lab.ports import CallKind, ToolOutput
from harness_lab.sweep.spec import Distribution, StochasticFaults
from harness_lab.sweep.stochastic import (
    SampleLatency,
    SampleStream,
    compile_distribution,
    sample_rng,
    sampled_faults,
)


def test_a_fixed_distribution_always_draws_its_value() -> None:
    draw = compile_distribution(Distribution(fixed=1.5))
    assert {draw(sample_rng(0, 0, i)) for i in range(20)} == {1.5}


def test_a_uniform_distribution_stays_within_its_bounds() -> None:
    draw = compile_distribution(Distribution(uniform=(2.0, 3.0)))
    values = [draw(sample_rng(1, 0, i)) for i in range(200)]
    assert min(values) >= 2.0 and max(values) <= 3.0
    assert max(values) - min(values) > 0.5


def test_an_empirical_distribution_draws_only_its_values() -> None:
    draw = compile_distribution(Distribution(empirical=[0.1, 0.2, 0.4]))
    assert {draw(sample_rng(2, 0, i)) for i in range(200)} == {0.1, 0.2, 0.4}


def test_a_lognormal_distribution_has_its_median() -> None:
    draw = compile_distribution(Distribution.model_validate(
        {"lognormal": {"median": 2.0, "sigma": 0.5}}))
    values = sorted(draw(sample_rng(3, 0, i)) for i in range(2001))
    assert 1.85 < values[1000] < 2.15


def test_the_same_seed_grid_point_and_sample_give_the_same_stream() -> None:
    assert sample_rng(7, 1, 42).random() == sample_rng(7, 1, 42).random()
    assert sample_rng(7, 1, 42).random() != sample_rng(7, 1, 43).random()
    assert sample_rng(7, 1, 42).random() != sample_rng(7, 2, 42).random()


def test_the_sample_latency_prefers_a_distribution_then_the_reply_then_the_default() -> None:
    latency = SampleLatency(SampleStream(0, 0, 0),
                            {CallKind.TOOL: compile_distribution(Distribution(fixed=9.0))},
                            {CallKind.MODEL: 1.0})
    assert latency.latency(CallKind.TOOL, "logs", 0.2) == 9.0
    assert latency.latency(CallKind.MODEL, "diagnosis", 0.3) == 0.3
    assert latency.latency(CallKind.MODEL, "diagnosis", None) == 1.0
    assert latency.latency(CallKind.GUARD, "semantic_guard", None) == 0.0


def test_a_stream_draws_exactly_what_the_seeded_generator_of_its_sample_draws() -> None:
    stream, reference = SampleStream(5, 2, 9), sample_rng(5, 2, 9)
    drawn = [stream.random(), stream.uniform(1.0, 2.0), stream.lognormvariate(0.0, 1.0)]
    assert drawn == [reference.random(), reference.uniform(1.0, 2.0),
                     reference.lognormvariate(0.0, 1.0)]


def test_a_stream_is_seeded_only_when_something_draws_from_it() -> None:
    stream = SampleStream(0, 0, 0)
    latency = SampleLatency(stream, {CallKind.TOOL: compile_distribution(Distribution(fixed=2.0))},
                            {CallKind.MODEL: 1.0})
    assert latency.latency(CallKind.TOOL, "logs", None) == 2.0
    assert latency.latency(CallKind.MODEL, "diagnosis", None) == 1.0
    assert not stream.seeded
    stream.random()
    assert stream.seeded


def test_a_restarted_stream_draws_what_the_generator_of_its_new_sample_draws() -> None:
    stream = SampleStream(4, 2, 0)
    stream.random()
    stream.restart(9)
    assert not stream.seeded
    reference = sample_rng(4, 2, 9)
    assert [stream.random(), stream.random()] == [reference.random(), reference.random()]


def test_a_wrapping_stream_draws_from_the_generator_it_was_given() -> None:
    stream = SampleStream.wrapping(random.Random(3))
    assert stream.seeded
    assert stream.random() == random.Random(3).random()


def _tool_call(request: Any) -> ToolOutput:
    return ToolOutput(({"line": "t"},), size_bytes=10)


def test_no_sampled_fault_to_draw_is_no_interceptor() -> None:
    assert sampled_faults(StochasticFaults(), SampleStream(0, 0, 0)) is None
    assert sampled_faults(StochasticFaults(provider_error_p={"guard": 0.0}),
                          SampleStream(0, 0, 0)) is None


def test_a_certain_provider_error_fails_its_kind_and_draws_for_no_other() -> None:
    stream = SampleStream(0, 0, 0)
    sampled = sampled_faults(StochasticFaults(provider_error_p={"guard": 1.0}), stream)
    assert sampled is not None
    assert sampled.call(CallKind.ROUTER, "router", "request", lambda r: "routed") == "routed"
    assert not stream.seeded  # the router has no probability: nothing was drawn
    with pytest.raises(ProviderError, match="guard provider error"):
        sampled.call(CallKind.GUARD, "guard", "request", lambda r: "judged")


def test_a_certain_no_gain_empties_a_tool_result_and_a_certain_tool_error_fails_it() -> None:
    empty = sampled_faults(StochasticFaults(no_gain_p=1.0), SampleStream(0, 0, 0))
    failing = sampled_faults(StochasticFaults(tool_error_p=1.0), SampleStream(0, 0, 0))
    assert empty is not None and failing is not None
    output = empty.call(CallKind.TOOL, "logs", "request", _tool_call)
    assert (output.items, output.size_bytes) == ((), 0)
    with pytest.raises(ToolExecutionError, match="tool backend error"):
        failing.call(CallKind.TOOL, "logs", "request", _tool_call)
