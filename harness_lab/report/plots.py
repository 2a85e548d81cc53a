"""Matplotlib views of runs: outcome bars, a virtual-time Gantt, and a fault x point heatmap.

Every function draws on ``ax`` when given, otherwise on a new
:class:`matplotlib.figure.Figure` (never pyplot's global state, so it is safe under Agg, in
threads and in notebooks), and returns the Axes. :func:`figure_png` renders PNG bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure, SubFigure
from matplotlib.patches import Patch

from harness_lab.record import RunRecord
from harness_lab.report.frames import AXIS_DTYPES
from harness_lab.states import (
    FallbackType,
    ReleaseOutcome,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)

__all__ = [
    "MARKERS",
    "OUTCOME_LABELS",
    "PHASE_COLORS",
    "figure_png",
    "outcome_bars",
    "outcome_heatmap",
    "outcome_label",
    "run_timeline",
]

OUTCOME_LABELS: tuple[str, ...] = (
    ReleaseOutcome.SUCCESS.value,
    *(f"{ReleaseOutcome.FALLBACK.value}:{f.value}" for f in FallbackType),
    ReleaseOutcome.FALLBACK.value,  # a FALLBACK without a FallbackType
    ReleaseOutcome.FAILED.value,
    ReleaseOutcome.CANCELLED.value,
)
"""Stack labels of :func:`outcome_bars`, in stacking order."""

_OUTCOME_COLORS = dict(zip(OUTCOME_LABELS, (
    "#2e7d32", "#fdd835", "#ffb300", "#fb8c00", "#8e24aa", "#5e35b1", "#bdbdbd",
    "#c62828", "#546e7a",
), strict=True))

PHASE_COLORS: dict[str, str] = dict(zip((p.value for p in TracePhase), (
    "#9e9e9e", "#42a5f5", "#26c6da", "#7e57c2", "#ffa726", "#8d6e63", "#66bb6a", "#ec407a",
), strict=True))
"""The colour of each TracePhase's spans in :func:`run_timeline`."""

MARKERS: dict[str, dict[str, Any]] = {
    TraceEventType.RUN_CANCELLED.value: {"marker": "X", "color": "#b71c1c", "s": 70},
    TraceEventStatus.DISCARDED.value: {"marker": "x", "color": "#000000", "s": 50},
    TraceEventType.BUDGET_EXHAUSTED.value: {"marker": "v", "color": "#e65100", "s": 60},
    TraceEventType.COLLECTION_STOP.value: {"marker": "s", "color": "#4e342e", "s": 40},
}
"""Marker styles of :func:`run_timeline`, by label (trace event type, or DISCARDED status)."""

_NONE = "(none)"


def _axes(ax: Axes | None, figsize: tuple[float, float] = (8.0, 4.5)) -> Axes:
    if ax is not None:
        return ax
    return Figure(figsize=figsize, layout="constrained").add_subplot()


def outcome_label(release_outcome: Any, fallback_type: Any) -> str:
    """``FALLBACK:<FallbackType>`` for typed fallbacks, else the ReleaseOutcome's value."""
    outcome = str(release_outcome)
    if outcome == ReleaseOutcome.FALLBACK.value and not _missing(fallback_type):
        return f"{outcome}:{fallback_type}"
    return outcome


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _groups(values: pd.Series) -> list[str]:
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.dropna())
        cats = [str(c) for c in values.dtype.categories if c in present]
    else:
        cats = [str(v) for v in pd.unique(values.dropna())]
    return cats + ([_NONE] if bool(values.isna().any()) else [])


def outcome_bars(df: pd.DataFrame, by: str = "scenario", *, normalize: bool = False,
                 ax: Axes | None = None) -> Axes:
    """Stacked bars of outcomes, one bar per ``by`` group, one stack per observed outcome.

    Stacks are :data:`OUTCOME_LABELS` that occur at least once, in that order; each is one
    bar container labelled for the legend. Groups follow the column's category order (or
    first appearance); a missing group value is shown as ``(none)``. ``normalize`` draws
    shares of each group's runs instead of counts.
    """
    ax = _axes(ax)
    labels = [outcome_label(o, f) for o, f in zip(df["release_outcome"], df["fallback_type"],
                                                   strict=True)]
    groups = _groups(df[by])
    keys = [_NONE if _missing(v) else str(v) for v in df[by]]
    counts = pd.crosstab(pd.Series(keys, name=by), pd.Series(labels, name="outcome"))
    stacks = [label for label in OUTCOME_LABELS if label in counts.columns]
    stacks += [label for label in counts.columns if label not in OUTCOME_LABELS]
    counts = counts.reindex(index=groups, columns=stacks, fill_value=0).astype(float)
    if normalize and len(counts):
        counts = counts.div(counts.sum(axis=1), axis=0)
    x = np.arange(len(groups))
    bottom = np.zeros(len(groups))
    for label in stacks:
        heights = counts[label].to_numpy()
        ax.bar(x, heights, bottom=bottom, label=label,
               color=_OUTCOME_COLORS.get(label, "#90a4ae"), edgecolor="white")
        bottom = bottom + heights
    ax.set_xticks(x, groups, rotation=30, ha="right")
    ax.set_xlabel(by)
    ax.set_ylabel("share of runs" if normalize else "runs")
    ax.set_title("release outcome by " + by)
    if stacks:
        ax.legend(title="outcome", fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    return ax


def _spans(record: RunRecord) -> dict[str, list[tuple[float, float]]]:
    """Phase -> (start, width) spans: each event closes the wait that led up to it."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for before, after in zip(record.trace, record.trace[1:], strict=False):
        width = float(after.t) - float(before.t)
        if width > 0:
            spans.setdefault(after.phase.value, []).append((float(before.t), width))
    return spans


def _marker_label(event: Any) -> str | None:
    if event.status is TraceEventStatus.DISCARDED:
        return TraceEventStatus.DISCARDED.value
    return event.type.value if event.type.value in MARKERS else None


def run_timeline(records: Iterable[RunRecord], *, ax: Axes | None = None) -> Axes:
    """A Gantt chart of runs on virtual time, one row per run (the first on top).

    Between two consecutive trace events a bar is drawn in the phase colour of the later
    event, the one that closes the wait (a tool span ends in TOOL_PROGRESS, a model call in
    AGENT_MODEL_STEP); instants draw nothing. A thin grey line with end ticks spans each run
    from ``started_at`` to ``finished_at``, so instant runs stay visible. Markers show
    RUN_CANCELLED and BUDGET_EXHAUSTED events, COLLECTION_STOP and every DISCARDED late
    result, each kind one labelled scatter collection. Every run's deadline
    (``deadline_at``) is always drawn, as a dashed vertical line across its row, so the
    x-range extends to the latest deadline (narrow it with ``ax.set_xlim`` if wanted).
    Y tick labels are the run ids. Artists carry gids: ``<run_id>:<PHASE>`` on a run's
    phase bars, ``deadline:<run_id>`` on its deadline line.
    """
    recs = list(records)
    ax = _axes(ax, (9.0, max(2.5, 0.5 * len(recs) + 1.5)))
    phases_seen: set[str] = set()
    points: dict[str, tuple[list[float], list[float]]] = {}
    for y, record in enumerate(recs):
        ax.plot([record.started_at, record.finished_at], [y, y], color="#616161",
                marker="|", markersize=14, linewidth=0.8, zorder=2.5,
                label="run start/finish" if y == 0 else "_nolegend_")
        for phase, spans in _spans(record).items():
            ax.broken_barh(spans, (y - 0.3, 0.6), facecolors=PHASE_COLORS[phase], zorder=2,
                           gid=f"{record.run_id}:{phase}")
            phases_seen.add(phase)
        for event in record.trace:
            label = _marker_label(event)
            if label is not None:
                xs, ys = points.setdefault(label, ([], []))
                xs.append(float(event.t))
                ys.append(float(y))
        ax.plot([record.deadline_at, record.deadline_at], [y - 0.45, y + 0.45],
                color="#d32f2f", linestyle="--", linewidth=1.2, gid=f"deadline:{record.run_id}",
                label="deadline" if y == 0 else "_nolegend_")
    handles: list[Any] = [Patch(facecolor=PHASE_COLORS[p.value], label=p.value)
                          for p in TracePhase if p.value in phases_seen]
    for label, style in MARKERS.items():
        if label in points:
            xs, ys = points[label]
            handles.append(ax.scatter(xs, ys, label=label, zorder=3, **style))
    handles.extend(line for line in ax.lines if not str(line.get_label()).startswith("_"))
    ax.set_yticks(range(len(recs)), [r.run_id for r in recs])
    ax.set_ylim(len(recs) - 0.5, -0.5)
    ax.set_xlabel("virtual time (s)")
    ax.set_title("run timeline")
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    return ax


def _order(values: pd.Series) -> list[Any]:
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.dropna())
        return [c for c in values.dtype.categories if c in present]
    return list(pd.unique(values.dropna()))


def _mode(values: pd.Series, order: Sequence[Any]) -> Any:
    counts = values.dropna().value_counts()
    if counts.empty:
        return None
    best = counts.max()
    return next(v for v in order if counts.get(v, 0) == best)


def outcome_heatmap(df: pd.DataFrame, rows: str = "fault", cols: str = "point",
                    value: str = "release_outcome", *, ax: Axes | None = None) -> Axes:
    """A heatmap of ``value`` per (``rows`` x ``cols``) cell, each cell annotated.

    A categorical ``value`` (such as release_outcome) shows each cell's most common value,
    ties going to the earlier category, coloured by category with a colorbar naming them;
    string columns that name a known axis use its lifecycle order. A numeric ``value``
    (such as a violation count) shows each cell's sum. Cells without runs stay blank.
    """
    ax = _axes(ax)
    data = df
    if value in AXIS_DTYPES and not isinstance(df[value].dtype, pd.CategoricalDtype):
        data = df.assign(**{value: df[value].astype(AXIS_DTYPES[value])})
    row_keys, col_keys = _order(data[rows]), _order(data[cols])
    numeric = pd.api.types.is_numeric_dtype(data[value]) and not isinstance(
        data[value].dtype, pd.CategoricalDtype)
    grid = np.full((len(row_keys), len(col_keys)), np.nan)
    texts: dict[tuple[int, int], str] = {}
    if numeric:
        cats: list[Any] = []
    elif isinstance(data[value].dtype, pd.CategoricalDtype):
        cats = list(data[value].dtype.categories)
    else:
        cats = sorted(str(v) for v in pd.unique(data[value].dropna()))
    for (i, rk), (j, ck) in ((a, b) for a in enumerate(row_keys) for b in enumerate(col_keys)):
        cell = data.loc[(data[rows] == rk) & (data[cols] == ck), value]
        if cell.empty:
            continue
        if numeric:
            total = float(cell.sum())
            grid[i, j] = total
            texts[(i, j)] = f"{total:g}"
        else:
            mode = _mode(cell.astype(object), cats)
            if mode is not None:
                grid[i, j] = cats.index(mode)
                texts[(i, j)] = str(mode)
    if numeric:
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="Reds", aspect="auto")
        ax.figure.colorbar(image, ax=ax, label=value)
    else:
        colors = {**_OUTCOME_COLORS, ReleaseOutcome.FALLBACK.value: "#ffb300"}
        cmap = ListedColormap([colors.get(str(c), f"C{k % 10}")
                               for k, c in enumerate(cats)] or ["#ffffff"])
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto",
                          vmin=-0.5, vmax=max(len(cats), 1) - 0.5)
        bar = ax.figure.colorbar(image, ax=ax, ticks=range(len(cats)))
        bar.ax.set_yticklabels([str(c) for c in cats])
        bar.set_label(value)
    for (i, j), text in texts.items():
        ax.text(j, i, text, ha="center", va="center", fontsize="small")
    ax.set_xticks(range(len(col_keys)), [str(k) for k in col_keys], rotation=30, ha="right")
    ax.set_yticks(range(len(row_keys)), [str(k) for k in row_keys])
    ax.set_xlabel(cols)
    ax.set_ylabel(rows)
    ax.set_title(f"{value} by {rows} x {cols}")
    return ax


def figure_png(ax_or_fig: Axes | Figure | SubFigure, *, dpi: int = 100) -> bytes:
    """The whole figure holding ``ax_or_fig`` rendered as PNG bytes (no pyplot involved)."""
    fig: Any = ax_or_fig.figure
    while not isinstance(fig, Figure):
        fig = fig.figure
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()
