"""The span tree derived from a record's trace, as plain values: which events open and
close which span, and what holds for every run of the scenario library."""

from __future__ import annotations

from dataclasses import replace

from harness_lab.otel import plan_run
from harness_lab.runner.results import ResultSet
from harness_lab.states import TraceEventType
from tests.otel.conftest import played


def test_a_call_traced_only_at_its_end_starts_at_the_runs_previous_own_event() -> None:
    # the user cancels at 3 s and a disconnect loses at 4 s while the model call is in flight:
    # the losing termination is traced at 4 s, yet the call began after routing, at 0.2 s
    ((_, record),) = played("late/first-reason-wins.yaml[user-cancel-first]")
    (agent,) = [s for s in plan_run(record).children if s.name == "invoke_agent diagnosis"]
    (chat,) = agent.children
    assert (chat.start, chat.end) == (0.2, 10.2)


def test_a_tool_whose_outcome_was_never_traced_ends_with_the_run_marked_unfinished() -> None:
    ((_, record),) = played("outcomes/conclusion-guards-pass.yaml")
    trace = tuple(e for e in record.trace if not (
        e.type is TraceEventType.TOOL_PROGRESS and e.detail.get("tool") == "metrics"))
    plan = plan_run(replace(record, trace=trace))
    (metrics,) = [s for s in plan.walk() if s.name == "execute_tool metrics"]
    assert (metrics.start, metrics.end) == (4.2, 6.7)
    assert metrics.attributes["harness_lab.unfinished"] is True


def test_every_library_run_nests_each_span_inside_its_parent(library: ResultSet) -> None:
    outside = []
    for result in library:
        for record in (*result.turns, result.record):
            if record is None:
                continue
            for span in plan_run(record).walk():
                outside += [(result.scenario, span.name, child.name) for child in span.children
                            if not span.start <= child.start <= child.end <= span.end]
    assert outside == []


def test_every_library_run_has_a_chat_span_per_model_step_and_a_tool_span_per_invocation(
        library: ResultSet) -> None:
    wrong = []
    for result in library:
        for record in (*result.turns, result.record):
            if record is None:
                continue
            names = [s.name for s in plan_run(record).walk()]
            steps = len(record.events_of(TraceEventType.AGENT_MODEL_STEP))
            tools = len(record.invocations)
            counted = (names.count("chat"), sum(n.startswith("execute_tool ") for n in names))
            if counted != (steps, tools):
                wrong.append((result.scenario, counted, (steps, tools)))
    assert wrong == []


def test_every_library_run_ends_its_root_at_the_runs_finish(library: ResultSet) -> None:
    ends = {(r.scenario, plan_run(r.record).end == r.record.finished_at)
            for r in library if r.record is not None}
    assert {ok for _, ok in ends} == {True}
