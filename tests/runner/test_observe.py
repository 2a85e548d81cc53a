"""The observation's new parts: the timeline's one order, SSE states, termination reasons."""

from __future__ import annotations

from dataclasses import replace

from harness_lab.record import RunRecord
from harness_lab.runner import run_scenario
from harness_lab.runner.observe import observe
from harness_lab.scenarios import load_text
from tests.scenarios import TWO_TOOL_DIAGNOSIS as BASE


def _record(text: str = BASE) -> RunRecord:
    [loaded] = load_text(text, "s.yaml")
    result = run_scenario(loaded)
    assert result.record is not None
    return result.record


def test_the_timeline_holds_every_trace_and_sse_event_once_each_list_in_its_order() -> None:
    record = _record()
    timeline = observe(record)["timeline"]
    assert [e["event"] for e in timeline if e["source"] == "trace"] == record.trace_types()
    assert [e["event"] for e in timeline if e["source"] == "sse"] == record.sse_kinds()


def test_an_sse_event_follows_the_trace_events_recorded_before_it_was_sent() -> None:
    events = [e["event"] for e in observe(_record())["timeline"]]
    assert events[:3] == ["RUN_STARTED", "metadata", "status"]
    assert events[-3:] == ["RUN_FINISHED", "content", "done"]


def test_a_record_written_before_the_marks_were_kept_has_no_timeline_nor_causes() -> None:
    record = replace(_record(), sse_trace_marks=(), termination_causes=())
    seen = observe(record)
    assert seen["timeline"] == []
    assert [t["reason"] for t in seen["terminations"]] == [None]


def test_the_sse_states_begin_new_and_each_termination_names_its_reason() -> None:
    seen = observe(_record(BASE + "faults: [{kind: user_cancel, at_s: 1.0}]\n"))
    assert [s["state"] for s in seen["sse_states"]] == ["NEW", "OPEN", "TERMINAL"]
    assert [(t["state"], t["reason"]) for t in seen["terminations"]] == [
        ("CANCELLED", "USER_REQUESTED")]
