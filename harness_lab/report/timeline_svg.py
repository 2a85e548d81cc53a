"""One run's timeline as a small inline SVG: a lane per phase, SSE events, instants marked.

Drawn from the record alone, in microseconds, so a report of hundreds of runs can show every
run's timeline without rendering an image per run. A wait between two trace events is a span
on the lane of the later event's phase (the one that closes it); tool calls are drawn from
their canonical invocations, so calls that overlap stay apart. What the marks are:
docs/report.md, "The drill-down"; every mark has a ``<title>`` for a hover tooltip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from harness_lab.report.cells import detail_text, json_text
from harness_lab.report.palette import EVENT_COLORS, MISSING_COLOR, PHASE_COLORS
from harness_lab.sse import SseEvent
from harness_lab.states import (
    CancellationReason,
    RunState,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)
from harness_lab.tools.records import CanonicalInvocation
from harness_lab.trace import TraceEvent

__all__ = ["SSE_LANE", "TimelineInput", "timeline_svg"]

SSE_LANE: Final = "SSE"
"""The name of the lane that holds the public SSE events."""

# the drawing in pixels: its width, the margins left and right, the space above the first
# lane, a lane's height and the time axis's
_WIDTH, _LEFT, _RIGHT, _TOP, _LANE, _AXIS = 960, 96, 24, 22, 20, 30
_SSE_LANE_HEIGHT: Final = 34  # diamonds above, their labels below
_DODGE: Final = 12.0  # a cross at the instant of an earlier one in its lane: this far right
_SSE_DODGE: Final = 9.0  # each further SSE event sent at one instant: this far right
_FAR: Final = 1.5  # a deadline beyond this many times the activity's end is drawn as an arrow
_INSTANT_COLORS: Final = {
    "client disconnect": EVENT_COLORS["client_disconnect"],
    "disconnect noticed": EVENT_COLORS["client_disconnect"],
    "user cancel": EVENT_COLORS["user_cancel"], "cancel noticed": EVENT_COLORS["user_cancel"],
    "budget exhausted": EVENT_COLORS["budget_exhausted"],
    "discarded": EVENT_COLORS["discarded"], "lost": EVENT_COLORS["lost_termination"],
}


def _disconnect(reason: str, termination_reason: str | None) -> bool:
    """Whether a termination's (or a RUN_CANCELLED event's) reason text names a client
    disconnect rather than a user's cancel."""
    return ("disconnect" in reason.lower()
            or termination_reason == CancellationReason.CLIENT_DISCONNECTED.value)


def instants(terminations: Sequence[tuple[str, str, float]], termination_reason: str | None,
             trace: Sequence[TraceEvent]) -> Iterator[tuple[str, float, TraceEvent | None, str]]:
    """``(kind, t, event, reason)`` of each instant both timelines mark: the terminations'
    (``event`` None) cancels and timeouts, then the trace's noticed cancels, exhausted budgets,
    discarded late results and ``lost`` attempts to end the run (when attempted)."""
    for state, reason, at in terminations:
        if state == RunState.CANCELLED.value:
            kind = ("client disconnect" if _disconnect(reason, termination_reason)
                    else "user cancel")
            yield kind, float(at), None, reason
        elif state == RunState.TIMED_OUT.value:
            yield "timed out", float(at), None, reason
    for e in trace:
        if e.type is TraceEventType.RUN_CANCELLED:
            noticed = _disconnect(str(e.detail.get("reason", "")), None)
            yield ("disconnect noticed" if noticed else "cancel noticed"), float(e.t), e, ""
        elif e.type is TraceEventType.BUDGET_EXHAUSTED:
            yield "budget exhausted", float(e.t), e, ""
        elif e.status is TraceEventStatus.DISCARDED:
            yield "discarded", float(e.t), e, ""
        elif e.type is TraceEventType.TERMINATION_REJECTED:
            yield "lost", float(e.detail.get("at", e.t)), e, ""


@dataclass(frozen=True, slots=True)
class TimelineInput:
    """What a timeline is drawn from: a record's (or a crashed run's partial) events."""

    trace: Sequence[TraceEvent]
    sse: Sequence[SseEvent] = ()
    invocations: Sequence[CanonicalInvocation] = ()
    started_at: float = 0.0
    finished_at: float | None = None
    deadline_at: float | None = None
    terminations: Sequence[tuple[str, str, float]] = ()
    termination_reason: str | None = None


_TEXT_W = 6.2
"""The width of a label's character in the SVG, in pixels (an estimate, for spacing)."""


def _nice_step(span: float) -> float:
    raw = span / 6 if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


class _Canvas:
    """Scales virtual time to x and collects SVG elements."""

    def __init__(self, start: float, end: float, lanes: Sequence[str]) -> None:
        self.start, self.end = start, max(end, start + 1e-9)
        self.lanes = {name: i for i, name in enumerate(lanes)}
        self.parts: list[str] = []
        self.height = _TOP + _LANE * (len(lanes) - 1) + _SSE_LANE_HEIGHT + _AXIS

    def x(self, t: float) -> float:
        share = (t - self.start) / (self.end - self.start)
        return round(_LEFT + share * (_WIDTH - _LEFT - _RIGHT), 1)

    def y(self, lane: str) -> float:
        return _TOP + _LANE * self.lanes[lane]

    def add(self, element: str) -> None:
        self.parts.append(element)


def _phase_spans(trace: Sequence[TraceEvent], skip_tools: bool
                 ) -> list[tuple[str, float, float, str]]:
    spans = []
    for before, after in zip(trace, trace[1:], strict=False):
        phase = after.phase.value
        if phase == TracePhase.RUN.value or (skip_tools and phase == TracePhase.TOOL.value):
            continue
        title = f"{after.type.value} {after.status.value}  {detail_text(after.detail)}"
        start = float(before.t) if after.t > before.t else float(after.t)  # or an instant
        spans.append((phase, start, float(after.t), title))
    return spans


def _tool_spans(invocations: Sequence[CanonicalInvocation], end: float
                ) -> list[tuple[str, float, float, str]]:
    spans = []
    for inv in invocations:
        stop = inv.finished_at if inv.finished_at is not None else end
        status = inv.status.value + (f" {inv.error_code.value}" if inv.error_code else "")
        spans.append((TracePhase.TOOL.value, float(inv.started_at), float(stop),
                      f"{inv.tool} {inv.invocation_id}: {status}"))
    return spans


def _instants(run: TimelineInput) -> list[tuple[str, float, str, str, str]]:
    """(lane, t, label, colour, tooltip) of each marked instant: a cancel when it happened
    (the client left, the user asked) and when the run noticed it, both."""
    marks = []
    for kind, t, e, reason in instants(run.terminations, run.termination_reason, run.trace):
        if e is None:
            if kind != "timed out":
                marks.append((SSE_LANE, t, kind, _INSTANT_COLORS[kind],
                              f"t={t:.3f}  {kind}: the run's termination ({reason})"))
            continue
        label = f"{e.detail.get('state', 'end')} lost" if kind == "lost" else kind
        tip = f"t={float(e.t):.3f}  {e.type.value} {e.status.value}  {detail_text(e.detail)}"
        marks.append((e.phase.value, t, label, _INSTANT_COLORS[kind], tip))
    return marks


def timeline_svg(run: TimelineInput, *, title: str = "run timeline") -> str:
    """The inline ``<svg>`` of one run's timeline (empty text when there is no trace)."""
    trace = list(run.trace)
    if not trace:
        return ""
    times = [float(e.t) for e in trace] + [float(e.t) for e in run.sse]
    times += [float(i.finished_at) for i in run.invocations if i.finished_at is not None]
    start = min([float(run.started_at), *times])
    active_end = max([*times, float(run.finished_at or start)])
    deadline = run.deadline_at
    far = deadline is not None and deadline - start > _FAR * max(active_end - start, 1e-9)
    end = active_end if far or deadline is None else max(active_end, deadline)
    end = end + 0.04 * max(end - start, 1.0)
    tools = list(run.invocations)
    spans = _phase_spans(trace, skip_tools=bool(tools)) + _tool_spans(tools, active_end)
    marks = _instants(run)
    present = {s[0] for s in spans} | {m[0] for m in marks}
    lanes: list[str] = [p.value for p in TracePhase if p.value in present and p.value != "RUN"]
    lanes += [p for p in sorted(present - set(lanes)) if p not in (SSE_LANE, "RUN")]
    if "RUN" in present:
        lanes.append("RUN")
    lanes.append(SSE_LANE)
    canvas = _Canvas(start, end, lanes)
    _draw_axis(canvas)
    for lane in lanes:
        y = canvas.y(lane)
        canvas.add(f'<text class="lane" x="{_LEFT - 6}" y="{y + 13}" text-anchor="end">'
                   f"{html.escape(lane)}</text>")
    for lane, t0, t1, tip in spans:
        x0, x1 = canvas.x(t0), canvas.x(t1)
        color = PHASE_COLORS.get(lane, MISSING_COLOR)
        canvas.add(f'<rect x="{x0}" y="{canvas.y(lane) + 3}" width="{max(x1 - x0, 1.5)}" '
                   f'height="{_LANE - 6}" rx="2" fill="{color}"><title>'
                   f"{html.escape(f'{t0:.3f}–{t1:.3f} s  {tip}')}</title></rect>")
    _draw_sse(canvas, run.sse)
    # labels already drawn, as (left, right, baseline): a far deadline's, then each mark's
    taken: list[tuple[float, float, float]] = []
    if deadline is not None and far:
        text = f"deadline at {deadline:g} s"
        taken.append((_WIDTH - _RIGHT - 20 - _TEXT_W * len(text), _WIDTH - _RIGHT, _TOP + 6))
    crosses: list[tuple[str, float]] = []  # (lane, x) of each cross drawn
    for lane, t, label, color, tip in sorted(marks, key=lambda m: m[1]):
        x = canvas.x(t)
        x += _DODGE * sum(1 for ln, cx in crosses if ln == lane and abs(cx - x) < _DODGE)
        crosses.append((lane, x))
        base = canvas.y(lane) + _LANE / 2 - 8
        half = _TEXT_W * len(label) / 2
        raise_by = 0.0
        while raise_by < 40 and any(left < x + half and x - half < right
                                    and abs(base - raise_by - y) < 10
                                    for left, right, y in taken):
            raise_by += 10
        _draw_mark(canvas, lane, x, label, color, tip, raise_by=raise_by)
        taken.append((x - half, x + half, base - raise_by))
    if deadline is not None:
        _draw_deadline(canvas, float(deadline), far)
    body = "".join(canvas.parts)
    return (f'<svg class="timeline" role="img" viewBox="0 0 {_WIDTH} {canvas.height}" '
            f'width="{_WIDTH}" height="{canvas.height}" xmlns="http://www.w3.org/2000/svg">'
            f"<title>{html.escape(title)}</title>{body}</svg>")


def _draw_axis(canvas: _Canvas) -> None:
    bottom = canvas.height - _AXIS + 4
    canvas.add(f'<line x1="{_LEFT}" y1="{bottom}" x2="{_WIDTH - _RIGHT}" y2="{bottom}" '
               'class="axis"/>')
    step = _nice_step(canvas.end - canvas.start)
    tick = math.ceil(canvas.start / step) * step
    while tick <= canvas.end + 1e-12:
        x = canvas.x(tick)
        canvas.add(f'<line x1="{x}" y1="{_TOP - 4}" x2="{x}" y2="{bottom + 4}" class="grid"/>'
                   f'<text class="tick" x="{x}" y="{bottom + 16}" text-anchor="middle">'
                   f"{tick:g}</text>")
        tick = round(tick + step, 9)
    canvas.add(f'<text class="tick" x="{_LEFT - 6}" y="{bottom + 16}" text-anchor="end">'
               "virtual s</text>")


def _draw_sse(canvas: _Canvas, events: Sequence[SseEvent]) -> None:
    """A diamond per event; events sent at one instant side by side, in the order sent,
    under one label naming them all (``failure + done``)."""
    y = canvas.y(SSE_LANE) + 8
    free_from = -math.inf  # where the next label may start without overlapping the last
    for group in _same_instant(events, canvas):
        x0 = canvas.x(float(group[0].t))
        for i, e in enumerate(group):
            x = x0 + i * _SSE_DODGE
            tip = f"t={float(e.t):.3f}  {e.kind.value}  {json_text(dict(e.data))}"
            canvas.add(f'<path d="M{x} {y - 5}L{x + 5} {y}L{x} {y + 5}L{x - 5} {y}Z" '
                       f'fill="{EVENT_COLORS["sse"]}" stroke="#fff" stroke-width="0.8"><title>'
                       f"{html.escape(tip)}</title></path>")
        label = " + ".join(e.kind.value for e in group)
        left = min(x0 - 2, _WIDTH - 2 - _TEXT_W * len(label))  # ends inside the picture
        if left >= free_from:
            canvas.add(f'<text class="mark" x="{left}" y="{y + 17}">'
                       f"{html.escape(label)}</text>")
            free_from = left + _TEXT_W * len(label) + 6


def _same_instant(events: Sequence[SseEvent], canvas: _Canvas) -> list[list[SseEvent]]:
    """The events in order, those whose diamonds would fall on one another in one group."""
    groups: list[list[SseEvent]] = []
    for e in events:
        if groups and canvas.x(float(e.t)) - canvas.x(float(groups[-1][0].t)) < 1.0:
            groups[-1].append(e)
        else:
            groups.append([e])
    return groups


def _draw_mark(canvas: _Canvas, lane: str, x: float, label: str, color: str, tip: str, *,
               raise_by: float = 0.0) -> None:
    """A cross at ``x`` in ``lane`` with its label above it, ``raise_by`` pixels higher when
    another label of the lane is close (marks at one instant do not hide each other: a
    later cross at the instant of an earlier one is drawn :data:`_DODGE` pixels right of
    it)."""
    y = canvas.y(lane) + _LANE / 2
    canvas.add(f'<g class="marker"><path d="M{x - 5} {y - 5}L{x + 5} {y + 5}M{x + 5} {y - 5}'
               f'L{x - 5} {y + 5}" stroke="{color}" stroke-width="2.5"/>'
               f'<text class="mark" x="{x}" y="{y - 8 - raise_by}" text-anchor="middle" '
               f'fill="{color}">{html.escape(label)}</text><title>{html.escape(tip)}</title></g>')


def _draw_deadline(canvas: _Canvas, deadline: float, far: bool) -> None:
    color = EVENT_COLORS["deadline"]
    top, bottom = _TOP - 4, canvas.height - _AXIS + 4
    if far:
        x: float = _WIDTH - _RIGHT
        y = _TOP + 2
        canvas.add(f'<g class="deadline"><path d="M{x - 16} {y}L{x} {y}M{x - 5} {y - 4}L{x} {y}'
                   f'L{x - 5} {y + 4}" stroke="{color}" stroke-width="1.5" fill="none"/>'
                   f'<text class="mark" x="{x - 20}" y="{y + 4}" text-anchor="end" '
                   f'fill="{color}">deadline at {deadline:g} s</text>'
                   f"<title>deadline at t={deadline:.3f}, beyond the activity</title></g>")
        return
    x = canvas.x(deadline)
    canvas.add(f'<g class="deadline"><line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" '
               f'stroke="{color}" stroke-width="1.5" stroke-dasharray="5 3"/>'
               f'<text class="mark" x="{x - 3}" y="{top + 2}" text-anchor="end" fill="{color}">'
               f"deadline</text><title>deadline at t={deadline:.3f}</title></g>")
