"""Faults that hold from a run's start, and the configuration they amount to."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from harness_lab.scenarios.faults import Fault, from_start, start_configuration

FAULTS = TypeAdapter(list[Fault])


def faults(*data: dict[str, Any]) -> list[Any]:
    return FAULTS.validate_python(list(data))


def test_a_deadline_in_seconds_a_budget_from_the_start_and_tool_properties_hold_from_it() -> None:
    held = faults({"kind": "deadline", "at_s": 2.0},
                  {"kind": "budget_exhausted", "budget": "tokens"},
                  {"kind": "tool_rejection", "reason": "AUTH", "tool": "logs"},
                  {"kind": "tool_rejection", "reason": "READ_ONLY", "tool": "logs"})
    events = faults({"kind": "deadline", "at": {"call": "model", "n": 2}},
                    {"kind": "budget_exhausted", "budget": "tokens",
                     "at": {"call": "tool", "n": 1}},
                    {"kind": "tool_rejection", "reason": "REQUEST", "tool": "logs"},
                    {"kind": "user_cancel", "at_s": 1.0})
    assert [from_start(f) for f in held] == [True] * 4
    assert [from_start(f) for f in events] == [False] * 4


def test_the_start_configuration_sets_what_each_of_those_faults_changes() -> None:
    start = start_configuration(faults(
        {"kind": "user_cancel", "at_s": 1.0},
        {"kind": "deadline", "at_s": 2.0},
        {"kind": "budget_exhausted", "budget": "bytes"},
        {"kind": "tool_rejection", "reason": "AUTH", "tool": "metrics"},
        {"kind": "tool_rejection", "reason": "READ_ONLY", "tool": "logs"},
    ), ["logs", "metrics", "traces"])
    assert (start.deadline_s, start.exhausted) == (2.0, ("bytes",))
    assert (start.unauthorized, start.writable) == ({"metrics"}, {"logs"})
    assert start.applied == (1, 2, 3, 4)
    assert start.authorized(None, ["logs", "metrics", "traces"]) == ["logs", "traces"]
    assert start.authorized(["metrics", "traces"], ["logs"]) == ["traces"]


def test_a_read_only_rejection_of_a_tool_the_run_lacks_changes_nothing() -> None:
    start = start_configuration(faults(
        {"kind": "tool_rejection", "reason": "READ_ONLY", "tool": "nowhere"}), ["logs"])
    assert (start.writable, start.applied) == (frozenset(), ())
