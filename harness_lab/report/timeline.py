"""The run timeline (:func:`run_timeline`): one row per run on virtual time, its calls as
spans coloured by kind, its instants as markers, its outcome on the right.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from harness_lab.invariants import TIMES, time_contradictions
from harness_lab.messages import CallKind
from harness_lab.record import RunRecord
from harness_lab.report.figures import new_axes
from harness_lab.report.palette import (
    CALL_KIND_COLORS,
    EVENT_COLORS,
    outcome_color,
    outcome_label,
    text_color,
)
from harness_lab.report.timeline_svg import instants
from harness_lab.states import (
    SseEventKind,
    TraceEventStatus,
    TraceEventType,
)

__all__ = ["MARKERS", "OTHER_WAIT", "SSE_MARKERS", "call_spans", "run_timeline"]

OTHER_WAIT = "other"
"""The span kind of a wait that no call reports (drawn grey)."""

_T = TraceEventType
_KIND_OF_EVENT: dict[TraceEventType, str] = {
    _T.ROUTING_ATTEMPT: CallKind.ROUTER.value, _T.ROUTING_DECISION: CallKind.ROUTER.value,
    _T.SYSTEM_RESPONSE: CallKind.RESPONDER.value, _T.KNOWLEDGE_ANSWER: CallKind.RESPONDER.value,
    _T.KNOWLEDGE_RETRIEVAL: CallKind.RETRIEVER.value,
    _T.AGENT_MODEL_STEP: CallKind.MODEL.value,
    _T.TOOL_INVOCATION: CallKind.TOOL.value, _T.TOOL_PROGRESS: CallKind.TOOL.value,
    _T.EVIDENCE_REPAIR: CallKind.REPAIR.value,
    _T.SEMANTIC_GUARD_ATTEMPT: CallKind.GUARD.value,
    _T.SEMANTIC_GUARD_DECISION: CallKind.GUARD.value,
}

MARKERS: dict[str, dict[str, Any]] = {
    "client disconnect": {"marker": "X", "color": EVENT_COLORS["client_disconnect"], "s": 90},
    "user cancel": {"marker": "P", "color": EVENT_COLORS["user_cancel"], "s": 90},
    "disconnect noticed": {"marker": "1", "color": EVENT_COLORS["client_disconnect"], "s": 90,
                           "linewidths": 1.8},
    "cancel noticed": {"marker": "1", "color": EVENT_COLORS["user_cancel"], "s": 90,
                       "linewidths": 1.8},
    "timed out": {"marker": "D", "color": EVENT_COLORS["deadline"], "s": 45},
    "budget exhausted": {"marker": "v", "color": EVENT_COLORS["budget_exhausted"], "s": 70},
    "discarded late result": {"marker": "x", "color": EVENT_COLORS["discarded"], "s": 60,
                              "linewidths": 2.0},
    "termination that lost": {"marker": "o", "facecolors": "none", "s": 80,
                              "edgecolors": EVENT_COLORS["lost_termination"],
                              "linewidths": 1.6},
}
"""Marker styles of the instants on a run's row, by legend label."""

_ABOVE = frozenset({"disconnect noticed", "cancel noticed"})
"""Instants drawn above their row, pointing down at it, so that one at the instant of
another (a late result discarded as the run noticed its cancel) is not hidden by it."""

SSE_MARKERS: dict[str, str] = {
    SseEventKind.METADATA.value: "o", SseEventKind.STATUS.value: "|",
    SseEventKind.CONTENT.value: "D", SseEventKind.FAILURE.value: "X",
    SseEventKind.DONE.value: "s",
}
"""The marker of each public SSE event kind, drawn under the run's spans."""

_MARKER_OF = {"discarded": "discarded late result", "lost": "termination that lost"}
"""The legend label of each kind of instant whose label is not the kind itself."""

_SPAN_HALF = 0.24
_MIN_SPAN_S = 1.0  # the shortest time axis drawn, in virtual seconds
_SSE_OFFSET = 0.36
_FAR = 1.25  # a deadline past this multiple of the activity's end is an arrow at the edge


_SAME_INSTANT = 0.006  # marks closer than this share of the time axis are at one instant
_DODGE_PT = 9.0  # how far each further mark at one instant is drawn to the right, in points


def _level(placed: list[tuple[float, float]], t: float, y: float, near: float) -> int:
    """How many marks already ``placed`` on the height ``y`` of a row lie at the instant
    ``t``; the mark is then placed too."""
    level = sum(1 for pt, py in placed if py == y and abs(pt - t) <= near)
    placed.append((t, y))
    return level


def _dodged(ax: Axes, marks: Sequence[tuple[float, float, int]], step_pt: float, *,
            label: str, **style: Any) -> Any:
    """Scatter ``(t, y, level)`` marks, each ``level`` drawn ``step_pt`` points further right
    than the last (past the axes' right edge if need be), so that marks at one instant sit
    side by side, in the order they happened, the first at its time; return the artist that
    names them in the legend (each level's artist is labelled, its gid ``<label>:<level>``)."""
    first = None
    for level in sorted({m[2] for m in marks}):
        shift = ScaledTranslation(level * step_pt / 72, 0, ax.figure.dpi_scale_trans)
        xs = [t for t, _, lv in marks if lv == level]
        ys = [y for _, y, lv in marks if lv == level]
        artist = ax.scatter(xs, ys, transform=ax.transData + shift, clip_on=level == 0,
                            label=label, gid=f"{label}:{level}", **style)
        first = artist if first is None else first
    return first


class _Fitted(Text):
    """A text drawn in an axes, shortened with an ellipsis where it would pass the axes'
    right edge, as laid out when it is drawn (``harness-lab explain`` and the audit give
    the whole text)."""

    def __init__(self, x: float, y: float, text: str, **kwargs: Any) -> None:
        super().__init__(x, y, text, **kwargs)
        self.full = text

    def draw(self, renderer: Any) -> None:
        """Shorten the text to the room its axes leave it, then draw it."""
        self.set_text(self.full)
        if self.axes is not None:
            room = self.axes.get_window_extent(renderer).x1
            keep = len(self.full)
            while keep > 1 and self.get_window_extent(renderer).x1 > room:
                box = self.get_window_extent(renderer)
                keep = min(keep - 1, int(keep * (room - box.x0) / max(box.width, 1.0)))
                self.set_text(self.full[:max(keep, 1)].rstrip() + "…")
        super().draw(renderer)


def call_spans(record: RunRecord) -> dict[str, list[tuple[float, float]]]:
    """Call kind -> ``(start, width)`` spans of one run.

    The wait between two consecutive trace events is the call the later event reports
    (its ``detail['call']`` for a discarded late result); a wait no call reports is
    :data:`OTHER_WAIT`. Instants make no span.
    """
    spans: dict[str, list[tuple[float, float]]] = {}
    for before, after in zip(record.trace, record.trace[1:], strict=False):
        width = float(after.t) - float(before.t)
        if width <= 0:
            continue
        kind = after.detail.get("call") if after.status is TraceEventStatus.DISCARDED else None
        kind = str(kind) if kind else _KIND_OF_EVENT.get(after.type, OTHER_WAIT)
        spans.setdefault(kind, []).append((float(before.t), width))
    return spans


def _activity_end(record: RunRecord) -> float:
    times = [float(record.started_at), float(record.finished_at)]
    times += [float(e.t) for e in record.trace] + [float(e.t) for e in record.sse_events]
    times += [float(at) for _, _, at in record.terminations]
    return max(times)


def _rows(runs: Iterable[Any] | Mapping[str, RunRecord],
          labels: Sequence[str] | None) -> tuple[list[str], list[RunRecord]]:
    """Row labels and their records: the labels given, the scenario's name, or the run id."""
    items: Iterable[tuple[str | None, Any]] = (
        runs.items() if isinstance(runs, Mapping)
        else ((getattr(r, "scenario", None), r) for r in runs))
    names: list[str] = []
    records: list[RunRecord] = []
    for name, item in items:
        record = item if isinstance(item, RunRecord) else getattr(item, "record", None)
        if not isinstance(record, RunRecord):
            continue  # a scenario that never produced a record has nothing to draw
        records.append(record)
        names.append(str(name) if name else record.run_id)
    if labels is not None:
        if len(labels) != len(records):
            raise ValueError(f"{len(labels)} labels for {len(records)} runs")
        names = [str(label) for label in labels]
    seen: Counter[str] = Counter()
    for i, label in enumerate(names):  # two runs both called run-000001 stay apart
        seen[label] += 1
        if seen[label] > 1:
            names[i] = f"{label} #{seen[label]}"
    return names, records


def run_timeline(runs: Iterable[Any] | Mapping[str, RunRecord], *,
                 labels: Sequence[str] | None = None, ax: Axes | None = None,
                 title: str = "run timeline") -> Axes:
    """A Gantt chart of runs on virtual time, one row per run (the first on top).

    ``runs`` holds run records, scenario results (their ``scenario`` names the row; one
    without a record is skipped) or a mapping of row label to record; ``labels`` overrides
    the row labels (default: the scenario, else the run id; a repeated label gets ``#2``...).
    Each call is a span coloured by its kind (``CALL_KIND_COLORS`` of the palette), a thin
    grey line runs from start to finish, the run's outcome is a coloured badge right of the
    axes. Markers (:data:`MARKERS`) show the client disconnect, a user cancel, the moment
    the run timed out, an exhausted budget and each discarded late result; the public SSE
    events sit under the spans (:data:`SSE_MARKERS`). A deadline within reach of the activity
    is a red dashed line across its row; one far beyond it is an arrow at the right edge, its
    time given in the legend (the most common one) or beside the arrow (any other). Without
    ``ax`` the figure is sized to the rows, its height bounded (at most 16 inches, the labels
    shrinking to fit). A run whose times contradict each other (the ``times_consistent``
    invariant: a clock bug, a tampered copy) is not drawn and does not set the axis: its row
    says what contradicts what. Artists carry gids: ``<label>:<kind>`` on a row's
    spans, ``deadline:<label>`` on its deadline, ``outcome:<label>`` on its badge,
    ``contradiction:<label>`` on the text of a run not drawn (shortened to the axes).
    """
    names, records = _rows(runs, labels)
    contradictions = [time_contradictions(r) for r in records]
    drawn = [r for r, found in zip(records, contradictions, strict=True) if not found]
    n = len(records)
    own = ax is None
    height = min(0.3 * n + 2.4, 16.0)
    ax = new_axes((10.0, height)) if ax is None else ax
    pitch_pt = (height - 2.4 if own else ax.bbox.height / ax.figure.dpi) * 72 / max(n, 1)
    font = min(9.0, max(4.0, 0.7 * pitch_pt))
    scale = min(1.0, (pitch_pt / 20.0) ** 2)  # markers shrink with the rows
    ends = [_activity_end(r) for r in drawn] or [1.0]
    # a run that ended at its start (refused before any call) still gets a readable axis
    activity = max(max(ends), _MIN_SPAN_S)
    near = [float(r.deadline_at) for r in drawn if float(r.deadline_at) <= _FAR * activity]
    xmax = max([activity, *near]) * 1.04 or 1.0
    edge = blended_transform_factory(ax.transAxes, ax.transData)
    kinds_seen: set[str] = set()
    points: dict[str, list[tuple[float, float, int]]] = {}
    sse: dict[str, list[tuple[float, float, int]]] = {}
    one_instant = _SAME_INSTANT * xmax
    far = [float(r.deadline_at) for r in drawn if float(r.deadline_at) > xmax]
    usual = max(set(far), key=far.count) if far else None  # said once, in the legend
    near_deadline = False
    for y, (label, record, found) in enumerate(zip(names, records, contradictions,
                                                   strict=True)):
        outcome = outcome_label(record.release_outcome, record.fallback_type, record.run_state)
        color = outcome_color(outcome)
        ax.annotate(outcome, (1.0, y), xycoords=edge, xytext=(4.4 * font, 0),
                    textcoords="offset points", ha="left", va="center", fontsize=font,
                    color=text_color(color), annotation_clip=False, gid=f"outcome:{label}",
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": color, "edgecolor": "none"})
        if found:  # times that contradict each other have no place on a time axis
            more = f" ({len(found)} findings)" if len(found) > 1 else ""
            ax.add_artist(_Fitted(0.01, y, f"not drawn, {TIMES}{more}: {found[0]}",
                                  transform=edge, ha="left", va="center", fontsize=font,
                                  color=EVENT_COLORS["deadline"], clip_on=True,
                                  gid=f"contradiction:{label}"))
            continue
        ax.plot([record.started_at, record.finished_at], [y, y], color="#777777",
                marker="|", markersize=min(10.0, 0.9 * pitch_pt), linewidth=0.8, zorder=2.5,
                gid=f"extent:{label}")
        for kind, spans in call_spans(record).items():
            ax.broken_barh(spans, (y - _SPAN_HALF, 2 * _SPAN_HALF),
                           facecolors=CALL_KIND_COLORS.get(kind, "#BBBBBB"), zorder=2,
                           gid=f"{label}:{kind}")
            kinds_seen.add(kind)
        placed: list[tuple[float, float]] = []
        for kind, t, _, _ in instants(record.terminations, record.termination_reason,
                                      record.trace):
            name = _MARKER_OF.get(kind, kind)
            at = float(y) - (_SSE_OFFSET if name in _ABOVE else 0.0)
            points.setdefault(name, []).append((t, at, _level(placed, t, at, one_instant)))
        sent: list[tuple[float, float]] = []
        for event in record.sse_events:
            t, at = float(event.t), y + _SSE_OFFSET
            sse.setdefault(event.kind.value, []).append((t, at, _level(sent, t, at, one_instant)))
        deadline = float(record.deadline_at)
        if deadline <= xmax:
            near_deadline = True
            ax.plot([deadline, deadline], [y - 0.45, y + 0.45], color=EVENT_COLORS["deadline"],
                    linestyle="--", linewidth=1.2, gid=f"deadline:{label}", zorder=2.2)
        else:
            ax.plot([1.0], [y], marker=">", color=EVENT_COLORS["deadline"], transform=edge,
                    clip_on=False, markersize=min(7.0, 0.6 * pitch_pt), linestyle="none",
                    gid=f"deadline:{label}")
            if deadline != usual:
                ax.annotate(f"{deadline:g} s", (1.0, y), xycoords=edge,
                            xytext=(0.5 * font, 0), textcoords="offset points", ha="left",
                            va="center", fontsize=font * 0.9, color=EVENT_COLORS["deadline"],
                            annotation_clip=False, gid=f"deadline-text:{label}")
    handles: list[Any] = [Patch(facecolor=CALL_KIND_COLORS.get(k, "#BBBBBB"), label=k)
                          for k in [*CALL_KIND_COLORS, OTHER_WAIT] if k in kinds_seen]
    step = _DODGE_PT * scale ** 0.5
    for name, style in MARKERS.items():
        if name in points:
            style = {**style, "s": style["s"] * scale}
            handles.append(_dodged(ax, points[name], step, label=name, zorder=4, **style))
    for kind, marker in SSE_MARKERS.items():
        if kind in sse:
            color = EVENT_COLORS["user_cancel"] if kind == SseEventKind.FAILURE.value else (
                EVENT_COLORS["sse"])
            handles.append(_dodged(ax, sse[kind], step / 2, marker=marker, s=16 * scale,
                                   color=color, zorder=3, label=f"SSE {kind}"))
    handles.append(Line2D([], [], color="#777777", marker="|", linewidth=0.8,
                          label="run start to finish"))
    if near_deadline:
        handles.append(Line2D([], [], color=EVENT_COLORS["deadline"], linestyle="--",
                              label="deadline"))
    if usual is not None:
        others = " unless written" if len(set(far)) > 1 else ""
        handles.append(Line2D([], [], color=EVENT_COLORS["deadline"], marker=">",
                              linestyle="none",
                              label=f"deadline past the axis: {usual:g} s{others}"))
    ax.set_yticks(range(n), names, fontsize=font)
    ax.set_ylim(max(n, 1) - 0.5, -0.5)
    if n == 0:
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center",
                gid="empty")
    ax.set_xlim(-0.015 * xmax, xmax)  # a marker at 0 shows whole
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("virtual time (s)")
    ax.grid(axis="x", color="#EEEEEE", zorder=0)
    ax.set_axisbelow(True)
    ax.set_title(f"{title} ({n} run{'s' if n != 1 else ''})", loc="left")
    ax.legend(handles=handles, fontsize="small", loc="upper center",
              bbox_to_anchor=(0.5, -0.01), ncols=min(5, len(handles)), frameon=False)
    return ax
