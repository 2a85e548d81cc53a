"""One run's inline SVG timeline: lanes, spans, SSE events, markers and the deadline."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness_lab.record import RunRecord
from harness_lab.report.palette import EVENT_COLORS, PHASE_COLORS
from harness_lab.report.timeline_svg import SSE_LANE, TimelineInput, timeline_svg
from harness_lab.runner import run_paths
from tests.report.test_frames import four_runs

SVG = "{http://www.w3.org/2000/svg}"
LATE = Path(__file__).resolve().parents[2] / "scenarios" / "late" / "first-terminal-wins.yaml"


def svg_of(record: RunRecord) -> ET.Element:
    text = timeline_svg(TimelineInput(record.trace, record.sse_events, record.invocations,
                                      record.started_at, record.finished_at,
                                      record.deadline_at, record.terminations,
                                      record.termination_reason))
    return ET.fromstring(text)


def texts(root: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == cls]


def test_each_phase_of_the_run_has_a_lane_and_the_sse_events_have_the_last() -> None:
    report = four_runs()[1][0]  # routes, two tools, guards, releases
    lanes = texts(svg_of(report), "lane")
    assert lanes == ["ROUTING", "AGENT", "TOOL", "GUARD", "RELEASE", SSE_LANE]


def test_an_instant_event_is_a_thin_tick_in_its_phase_colour() -> None:
    report = four_runs()[1][0]  # the fakes answer at once: guard and release take no time
    guard = [r for r in svg_of(report).iter(f"{SVG}rect")
             if r.get("fill") == PHASE_COLORS["GUARD"]]
    assert guard and all(float(r.get("width") or 0) == 1.5 for r in guard)


def test_tool_calls_are_drawn_from_their_invocations_in_the_tool_colour() -> None:
    report = four_runs()[1][0]
    root = svg_of(report)
    tools = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == PHASE_COLORS["TOOL"]]
    assert len(tools) == len(report.invocations) == 2
    tips = [r.find(f"{SVG}title").text or "" for r in tools]  # type: ignore[union-attr]
    assert [tip.split("  ")[1].split(":")[0] for tip in tips] == [
        f"{i.tool} {i.invocation_id}" for i in report.invocations]


def test_every_sse_event_is_a_diamond_with_its_payload_in_the_tooltip() -> None:
    report = four_runs()[1][0]
    root = svg_of(report)
    diamonds = [p for p in root.iter(f"{SVG}path") if p.get("fill") == EVENT_COLORS["sse"]]
    assert len(diamonds) == len(report.sse_events)
    first = diamonds[0].find(f"{SVG}title")
    assert first is not None and "metadata" in (first.text or "")


def test_a_deadline_within_reach_is_a_dashed_line_and_a_far_one_an_arrow_with_its_time(
        ) -> None:
    timed_out, disconnected = four_runs()[1][2], four_runs()[1][3]
    near = svg_of(timed_out)
    assert [line.get("stroke-dasharray") for line in near.iter(f"{SVG}line")
            if line.get("stroke") == EVENT_COLORS["deadline"]] == ["5 3"]
    far = svg_of(disconnected)  # active 2 s, deadline 5 s after its start
    assert "deadline at 18 s" in texts(far, "mark")
    assert not [line for line in far.iter(f"{SVG}line")
                if line.get("stroke") == EVENT_COLORS["deadline"]]


def test_a_client_disconnect_is_marked_and_named() -> None:
    disconnected = four_runs()[1][3]
    assert "client disconnect" in texts(svg_of(disconnected), "mark")


def _mark_x(root: ET.Element, label: str) -> float:
    [mark] = [t for t in root.iter(f"{SVG}text") if t.get("class") == "mark"
              and t.text == label]
    return float(mark.get("x") or "nan")


def test_when_the_client_left_and_when_the_run_noticed_are_both_marked() -> None:
    [result] = run_paths([Path(__file__).resolve().parents[2] / "scenarios" / "faults"
                          / "client-disconnect-at-s.yaml"])
    assert result.record is not None
    root = svg_of(result.record)
    left, noticed = _mark_x(root, "client disconnect"), _mark_x(root, "disconnect noticed")
    # the client left at 2.5 s; the run noticed it after the tool call in flight, at 4.2 s
    assert [e.t for e in result.record.trace if e.type.value == "RUN_CANCELLED"] == [4.2]
    assert result.record.terminations[0][2] == 2.5
    ticks = {float(t.text): float(t.get("x") or "nan") for t in root.iter(f"{SVG}text")
             if t.get("class") == "tick" and re.fullmatch(r"[\d.]+", t.text or "")}
    per_second = ticks[1.0] - ticks[0.0]
    assert left == pytest.approx(ticks[0.0] + 2.5 * per_second, abs=0.1)
    assert noticed == pytest.approx(ticks[0.0] + 4.2 * per_second, abs=0.1)


def test_labels_of_marks_at_one_instant_do_not_overlap() -> None:
    [result] = run_paths([Path(__file__).resolve().parents[2] / "scenarios" / "faults"
                          / "client-disconnect-at-s.yaml"])
    assert result.record is not None
    root = svg_of(result.record)
    labels = [(float(t.get("x") or 0), float(t.get("y") or 0), t.text or "")
              for t in root.iter(f"{SVG}text") if t.get("class") == "mark"]
    for i, (x1, y1, a) in enumerate(labels):
        for x2, y2, b in labels[i + 1:]:
            apart_x = abs(x1 - x2) >= 3.1 * (len(a) + len(b))
            assert apart_x or abs(y1 - y2) >= 10, (a, b)


def test_the_axis_ticks_are_round_numbers_within_the_run() -> None:
    timed_out = four_runs()[1][2]  # 3 s to 13 s
    ticks = [float(t) for t in texts(svg_of(timed_out), "tick") if re.fullmatch(r"[\d.]+", t)]
    assert ticks == [4.0, 6.0, 8.0, 10.0, 12.0]


def test_a_run_without_trace_has_no_timeline() -> None:
    assert timeline_svg(TimelineInput(())) == ""


def test_a_termination_that_lost_is_marked_on_the_run_lane_with_what_it_tried() -> None:
    # the file's user cancel at 7.0 s loses to the deadline passed at 5.0 s (instant policy)
    [result] = run_paths([f"{LATE}[deadline-first]"])
    assert result.record is not None
    root = svg_of(result.record)
    assert "CANCELLED lost" in texts(root, "mark")
    [mark] = [g for g in root.iter(f"{SVG}g") if g.get("class") == "marker"
              and "TERMINATION_REJECTED" in (g.findtext(f"{SVG}title") or "")]
    assert mark.findtext(f"{SVG}text") == "CANCELLED lost"


def diamonds_x(root: ET.Element) -> dict[str, list[float]]:
    """Each SSE kind's diamonds, by the x of their left corner."""
    found: dict[str, list[float]] = {}
    for p in root.iter(f"{SVG}path"):
        if p.get("fill") == EVENT_COLORS["sse"]:
            kind = (p.findtext(f"{SVG}title") or "").split("  ")[1]
            left = float(re.findall(r"L([\d.]+) ", p.get("d") or "")[-1])
            found.setdefault(kind, []).append(left)
    return found


def test_sse_events_sent_at_one_instant_sit_side_by_side_under_one_label() -> None:
    timed_out = four_runs()[1][2]  # failure, then done, at 13 s
    root = svg_of(timed_out)
    found = diamonds_x(root)
    [failure], [done] = found["failure"], found["done"]
    assert done - failure >= 8
    assert "failure + done" in texts(root, "mark")


def test_a_cross_at_the_instant_of_another_in_its_lane_is_drawn_beside_it() -> None:
    from harness_lab.states import TraceEventStatus, TraceEventType, TracePhase
    from harness_lab.trace import TraceEvent

    def event(seq: int, t: float, type_: TraceEventType, status: TraceEventStatus,
              phase: TracePhase = TracePhase.TOOL) -> TraceEvent:
        return TraceEvent("run-1", seq, t, type_, phase, status, {})

    started = TraceEventStatus.STARTED
    trace = [event(0, 0.0, TraceEventType.RUN_STARTED, TraceEventStatus.OK, TracePhase.RUN),
             event(1, 1.0, TraceEventType.TOOL_INVOCATION, started),
             event(2, 4.0, TraceEventType.TOOL_PROGRESS, TraceEventStatus.DISCARDED),
             event(3, 4.0, TraceEventType.TOOL_PROGRESS, TraceEventStatus.DISCARDED)]
    root = ET.fromstring(timeline_svg(TimelineInput(trace, finished_at=4.0)))
    lefts = [float(re.match(r"M([\d.]+)", g.find(f"{SVG}path").get("d")).group(1))  # type: ignore
             for g in root.iter(f"{SVG}g") if g.get("class") == "marker"]
    assert len(lefts) == 2
    assert lefts[1] - lefts[0] >= 10, "two crosses of one instant would cover each other"
