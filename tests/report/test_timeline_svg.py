"""One run's inline SVG timeline: lanes, spans, SSE events, markers and the deadline."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

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
                                      record.deadline_at))
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
