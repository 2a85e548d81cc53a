"""Matplotlib views of runs: outcome bars, the run timeline, a heatmap and the load curve.

Every function draws on ``ax`` when given and returns it; otherwise it draws on a new figure
and returns its :class:`~harness_lab.report.figures.PlotAxes` (shown inline in Jupyter, saved
with ``.savefig(path)``). Colours and outcome names come from :mod:`harness_lab.report.palette`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, PercentFormatter

from harness_lab.report.cells import is_missing
from harness_lab.report.figures import PlotAxes, axis_label, figure_png, new_axes
from harness_lab.report.frames import AXIS_DTYPES
from harness_lab.report.palette import (
    EVENT_COLORS,
    MISSING_COLOR,
    NO_OUTCOME,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    PHASE_COLORS,
    RUN_STATE_COLORS,
    outcome_code,
    outcome_label,
    text_color,
)
from harness_lab.report.timeline import MARKERS, run_timeline

if TYPE_CHECKING:
    from harness_lab.explore.explorer import ExplorationResult
    from harness_lab.sweep.load import LoadPoint
    from harness_lab.sweep.result import SweepResult

__all__ = ["MARKERS", "OUTCOME_LABELS", "PHASE_COLORS", "PlotAxes", "exploration_heatmap",
           "figure_png", "load_curve_plot", "outcome_bars", "outcome_heatmap", "outcome_label",
           "run_timeline", "sweep_share"]

_NONE = "(none)"


def _directories(paths: Sequence[Any]) -> list[str | None]:
    """Each path's directory relative to the paths' common root (``.`` for the root)."""
    parents = [None if is_missing(p) else os.path.dirname(os.path.normpath(str(p)))
               for p in paths]
    known = [p for p in parents if p is not None]
    if not known:
        return parents
    root = os.path.commonpath(known) if len(set(known)) > 1 else os.path.dirname(known[0])
    return [None if p is None else os.path.relpath(p, root or ".") for p in parents]


def _results_frame(results: Sequence[Any]) -> pd.DataFrame:
    """A runs frame of scenario results, with their file, directory, tags and case."""
    from harness_lab.report.frames import runs_frame

    ran = [r for r in results if getattr(r, "record", None) is not None]
    df = runs_frame(ran)
    df["file"] = [r.path for r in ran]
    df["directory"] = _directories(df["file"].tolist())
    df["tags"] = [tuple(r.tags) for r in ran]
    df["case"] = [r.case for r in ran]
    return df


def _keyed(df: pd.DataFrame, by: str) -> tuple[pd.DataFrame, str]:
    """``df`` with the grouping column ``by`` ready: a directory derived, tags one per row."""
    if by == "directory" and by not in df.columns:
        source = next((c for c in ("file", "path") if c in df.columns), None)
        if source is None:
            raise KeyError("grouping by directory needs a 'directory', 'file' or 'path' column")
        df = df.assign(directory=_directories(df[source].tolist()))
    if by in ("tag", "tags") and {"tag", "tags"} & set(df.columns):
        column = "tags" if "tags" in df.columns else "tag"
        values = df[column].map(lambda v: list(v) if isinstance(v, (list, tuple)) and v
                                else (None if isinstance(v, (list, tuple)) else v))
        return df.assign(**{column: values}).explode(column), column
    if by not in df.columns:
        raise KeyError(f"no column {by!r} to group by; columns: {', '.join(map(str, df))}")
    return df, by


def _order(values: pd.Series) -> list[Any]:
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.dropna())
        return [c for c in values.dtype.categories if c in present]
    return list(pd.unique(values.dropna()))


def _groups(values: pd.Series) -> list[str]:
    return [str(v) for v in _order(values)] + ([_NONE] if bool(values.isna().any()) else [])


def _fold(counts: pd.DataFrame, max_groups: int) -> pd.DataFrame:
    """At most ``max_groups`` rows: the largest groups, in order, then the rest summed."""
    if len(counts) <= max_groups:
        return counts
    keep = counts.sum(axis=1).nlargest(max_groups - 1, keep="first").index
    kept = counts.loc[[g for g in counts.index if g in set(keep)]]
    rest = counts.drop(index=keep)
    other = pd.DataFrame([rest.sum()], index=[f"({len(rest)} more, {int(rest.sum().sum())} runs)"])
    return pd.concat([kept, other])


def outcome_bars(data: pd.DataFrame | Iterable[Any], by: str | None = None, *,
                 normalize: bool = False, max_groups: int = 40, ax: Axes | None = None,
                 title: str | None = None) -> Axes:
    """Horizontal stacked bars of outcomes, one bar per ``by`` group, counts written on them.

    ``data`` is a runs frame (``release_outcome``, ``fallback_type`` and, when present,
    ``run_state`` name each run's outcome with :func:`outcome_label`) or scenario results
    (a ``ResultSet``), which also give ``file``, ``directory``, ``tags`` and ``case``
    columns. ``by`` is any column (default: ``scenario``, or ``directory`` when there are
    more than ``max_groups`` scenarios); ``directory`` is derived from ``file`` when missing;
    ``tag``/``tags`` counts a run under each of its tags. Groups keep the column's category
    order (or first appearance), the first on top; past ``max_groups`` the largest are kept
    and the rest summed into one last bar. Each observed outcome is one bar container (in
    :data:`OUTCOME_LABELS` order) labelled for the legend, which sits outside the axes;
    ``normalize`` draws each group's shares instead of counts. Each segment wide enough
    shows its count, each bar its total at its end.
    """
    df = data if isinstance(data, pd.DataFrame) else _results_frame(list(data))
    if by is None:
        many = "scenario" in df.columns and df["scenario"].nunique() > max_groups
        by = "directory" if many and {"directory", "file", "path"} & set(df) else "scenario"
    runs = len(df)
    df, column = _keyed(df, by)
    states = df["run_state"] if "run_state" in df.columns else [None] * len(df)
    labels = [outcome_label(o, f, s) for o, f, s in zip(
        df["release_outcome"], df["fallback_type"], states, strict=True)]
    keys = [_NONE if is_missing(v) else str(v) for v in df[column]]
    counts = pd.crosstab(pd.Series(keys, name=by), pd.Series(labels, name="outcome"))
    stacks = [label for label in (*OUTCOME_LABELS, NO_OUTCOME) if label in counts.columns]
    stacks += [label for label in counts.columns if label not in stacks]
    counts = counts.reindex(index=_groups(df[column]), columns=stacks, fill_value=0)
    counts = _fold(counts.astype(float), max(max_groups, 2))
    totals = counts.sum(axis=1)
    if normalize and len(counts):
        counts = counts.div(totals.where(totals > 0, 1.0), axis=0)
    n = len(counts)
    ax = new_axes((9.0, min(max(0.3 * n + 1.6, 2.6), 14.0))) if ax is None else ax
    font = 8.0 if n <= 25 else 6.5
    y = np.arange(n)
    left = np.zeros(n)
    widest = float((counts.sum(axis=1)).max()) if n else 1.0
    for label in stacks:
        widths = counts[label].to_numpy()
        color = OUTCOME_COLORS.get(label, MISSING_COLOR)
        bars = ax.barh(y, widths, left=left, height=0.72, label=label, color=color,
                       edgecolor="white", linewidth=0.6)
        shown = [f"{w:.0%}" if normalize else f"{w:g}" for w in widths]
        texts = [t if w >= (0.013 * len(t) + 0.01) * widest * 1.12 and w < whole else ""
                 for t, w, whole in zip(shown, widths, counts.sum(axis=1), strict=True)]
        ax.bar_label(bars, labels=texts, label_type="center", fontsize=font,
                     color=text_color(color))
        left = left + widths
    for i, total in enumerate(totals):
        ax.text(left[i] + 0.01 * widest, i, f"n={total:g}" if normalize else f"{total:g}",
                va="center", ha="left", fontsize=font, gid=f"total:{counts.index[i]}")
    ax.set_yticks(y, [str(g) for g in counts.index], fontsize=font + 0.5)
    ax.set_ylim(max(n, 1) - 0.5, -0.5)
    ax.set_xlim(0, widest * 1.12 if n else 1.0)
    if normalize:
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("share of runs" if normalize else "runs")
    ax.set_ylabel(axis_label(by))
    ax.grid(axis="x", color="#EEEEEE")
    ax.set_axisbelow(True)
    note = "; a run counts under each of its tags" if column in ("tag", "tags") else ""
    ax.set_title(title or f"release outcome by {by} ({runs} run{'s' if runs != 1 else ''}{note})",
                 loc="left")
    if stacks:
        ax.legend(title="outcome", fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), frameon=False)
    if n == 0:
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center",
                gid="empty")
    return ax


def _mode(values: pd.Series, order: Sequence[Any]) -> Any:
    counts = values.dropna().value_counts()
    if counts.empty:
        return None
    best = counts.max()
    return next(v for v in order if counts.get(v, 0) == best)


_EXTRA_COLORS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377",
                 "#BBBBBB", "#000000")


def category_colors(categories: Sequence[Any]) -> dict[str, str]:
    """A colour per category: the palette's for outcomes and run states, else Tol's bright."""
    out: dict[str, str] = {}
    spare = itertools.cycle(_EXTRA_COLORS)
    for cat in categories:
        key = str(cat)
        known = OUTCOME_COLORS.get(key) or RUN_STATE_COLORS.get(key)
        if key == "FALLBACK" and "FALLBACK:MISSING_REQUIRED_CONTEXT" not in map(str, categories):
            known = "#DDCC77"  # the palette's pale grey would read as an empty cell
        if key == "CRASH":
            known = MISSING_COLOR  # no outcome at all
        out[key] = known or next(spare)
    return out


def category_codes(categories: Sequence[Any]) -> dict[str, str]:
    """A distinct short code per category (:func:`outcome_code`, lengthened on a clash)."""
    codes: dict[str, str] = {}
    for cat in map(str, categories):
        code = outcome_code(cat)
        length = len(code)
        while code in codes.values() and length < len(cat):
            length += 1
            code = cat.split(":")[-1][:length].upper()
        codes[cat] = code if code not in codes.values() else cat
    return codes


def outcome_heatmap(df: pd.DataFrame, rows: str = "fault", cols: str = "point",
                    value: str = "release_outcome", *, ax: Axes | None = None,
                    title: str | None = None) -> Axes:
    """A heatmap of ``value`` per (``rows`` x ``cols``) cell, each cell annotated.

    A categorical ``value`` (such as release_outcome) shows each cell's most common value,
    ties going to the earlier category, in the palette's categorical colours with a legend
    naming every category shown (outside the axes, never a colour bar); string columns
    that name a known axis use its lifecycle order. A numeric ``value`` (such as a violation
    count) shows each cell's sum on a colour bar. Cells without runs stay blank. ``title``
    defaults to ``<value> by <rows> x <cols>``.
    """
    data = df
    if value in AXIS_DTYPES and not isinstance(df[value].dtype, pd.CategoricalDtype):
        data = df.assign(**{value: df[value].astype(AXIS_DTYPES[value])})
    row_keys, col_keys = _order(data[rows]), _order(data[cols])
    if ax is None:
        ax = new_axes((min(max(8.0, 0.22 * len(col_keys) + 5.0), 16.0),
                       min(max(4.5, 0.22 * len(row_keys) + 2.6), 14.0)))
    numeric = pd.api.types.is_numeric_dtype(data[value]) and not isinstance(
        data[value].dtype, pd.CategoricalDtype)
    grid = np.full((len(row_keys), len(col_keys)), np.nan)
    modes: dict[tuple[int, int], str] = {}
    if numeric:
        cats: list[Any] = []
    elif isinstance(data[value].dtype, pd.CategoricalDtype):
        cats = list(data[value].dtype.categories)
    else:
        cats = [v for v in OUTCOME_LABELS if v in set(data[value].dropna().astype(str))]
        cats += sorted(str(v) for v in pd.unique(data[value].dropna()) if str(v) not in cats)
    for (i, rk), (j, ck) in itertools.product(enumerate(row_keys), enumerate(col_keys)):
        cell = data.loc[(data[rows] == rk) & (data[cols] == ck), value]
        if cell.empty:
            continue
        if numeric:
            total = float(cell.sum())
            grid[i, j] = total
            modes[(i, j)] = f"{total:g}"
        else:
            mode = _mode(cell.astype(object), cats)
            if mode is not None:
                grid[i, j] = cats.index(mode)
                modes[(i, j)] = str(mode)
    small = len(col_keys) > 8 or len(row_keys) > 12  # cells then show codes, not labels
    if numeric:
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="Reds", aspect="auto")
        ax.figure.colorbar(image, ax=ax, label=value)
        colors: dict[str, str] = {}
        codes: dict[str, str] = {}
    else:
        colors = category_colors(cats)
        cmap = ListedColormap([colors[str(c)] for c in cats] or ["#ffffff"])
        ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto",
                  vmin=-0.5, vmax=max(len(cats), 1) - 0.5)
        shown = [c for c in cats if str(c) in set(modes.values())]
        codes = category_codes(shown)
        ax.legend(handles=[Patch(facecolor=colors[str(c)], edgecolor="#999999",
                                 label=f"{codes[str(c)]:<3} {c}" if small else str(c))
                           for c in shown], title=value, fontsize="small",
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  prop={"family": "monospace", "size": "small"} if small else None)
    for (i, j), text in modes.items():
        ink = text_color(colors[text]) if text in colors else "#000000"
        shown_text = codes.get(text, text) if small and not numeric else text
        ax.text(j, i, shown_text, ha="center", va="center", color=ink,
                fontsize=7.0 if small else "small")
    ax.set_xticks(range(len(col_keys)), [str(k) for k in col_keys], ha="right",
                  rotation=60 if len(col_keys) > 16 else 35, rotation_mode="anchor",
                  fontsize="small")
    ax.set_yticks(range(len(row_keys)), [str(k) for k in row_keys], fontsize="small")
    ax.set_xticks(np.arange(len(col_keys) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(row_keys) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel(cols)
    ax.set_ylabel(rows)
    ax.set_title(title or f"{value} by {rows} x {cols}", loc="left")
    return ax


def load_curve_plot(points: Sequence[LoadPoint], outcome: str = "TIMED_OUT",
                    column: str = "run_state", *, deadline_s: float | None = None,
                    percentiles: Sequence[float] = (50, 95, 99),
                    axes: tuple[Axes, Axes] | None = None) -> Axes:
    """The load model's curve: the share of ``outcome`` and run latency against arrival rate.

    ``points`` are :func:`~harness_lab.sweep.load.run_load` results, one per arrival rate.
    The upper panel shows the share of runs whose ``column`` is ``outcome`` with its 95%
    Wilson interval; the lower one each latency percentile of the runs' durations (virtual
    seconds) beside the deadline ``deadline_s`` (a dashed line, when given). Draws on the two
    ``axes`` when given, else on a new two-panel figure; returns the upper Axes (the lower
    one shares its x axis and is ``ax.figure.axes[1]`` of a new figure).
    """
    from harness_lab.sweep.result import wilson

    if axes is None:
        top = new_axes((7.0, 6.0))
        fig = top.figure
        top.set_subplotspec(fig.add_gridspec(2, 1, height_ratios=(1, 1))[0])
        bottom: Axes = fig.add_subplot(2, 1, 2, sharex=top, axes_class=PlotAxes)
        main: Axes = top
    else:
        main, bottom = axes
    ordered = sorted(points, key=lambda p: p.arrival_rate)
    rates = [p.arrival_rate for p in ordered]
    shares, lows, highs = [], [], []
    for p in ordered:
        n = len(p.frame)
        k = int((p.frame[column].astype(str) == outcome).sum()) if n else 0
        low, high = wilson(k, n)
        share = k / n if n else float("nan")
        shares.append(share)
        lows.append(share - low)
        highs.append(high - share)
    main.errorbar(rates, shares, yerr=[lows, highs], marker="o", capsize=4,
                  color=OUTCOME_COLORS.get(f"FAILED:{outcome}", "#0077BB"),
                  label=f"{column}={outcome} (95% Wilson interval)")
    main.set_ylim(-0.02, 1.02)
    main.yaxis.set_major_formatter(PercentFormatter(1.0))
    main.set_ylabel(f"share of runs {outcome}")
    main.set_title(f"load curve: {outcome} share and latency by arrival rate", loc="left")
    main.legend(fontsize="small", loc="upper left")
    main.grid(color="#EEEEEE")
    styles = ("-", "--", ":", "-.")
    for k, q in enumerate(percentiles):
        values = [float(p.frame["duration_s"].quantile(q / 100)) if len(p.frame) else np.nan
                  for p in ordered]
        bottom.plot(rates, values, marker="o", linestyle=styles[k % len(styles)],
                    color="#332288", label=f"p{q:g} run duration")
    if deadline_s is not None:
        bottom.axhline(deadline_s, color=EVENT_COLORS["deadline"], linestyle="--",
                       label=f"deadline {deadline_s:g} s")
    bottom.set_ylim(bottom=0)
    bottom.set_ylabel("run duration (virtual s)")
    bottom.set_xlabel("arrival rate (sessions per virtual s)")
    bottom.legend(fontsize="small", loc="upper left")
    bottom.grid(color="#EEEEEE")
    return main


def sweep_share(sweep: SweepResult, param: str, value: str, column: str = "release_outcome",
                *, ax: Axes | None = None) -> Axes:
    """The share of ``column == value`` against swept parameter ``param``, with 95% CIs.

    Every other grid key of the sweep gets one line per combination of its values, so no
    grid point is pooled with another. Numeric grid values are placed by value, any other
    (a distribution, say) at evenly spaced ticks labelled with the value. The y axis is
    in percent of samples, the x axis names ``param``'s unit (``_s``: seconds); the
    title states the 95% Wilson intervals. Without ``ax``, returns the
    :class:`~harness_lab.report.figures.PlotAxes` of a new figure, shown inline in
    Jupyter.
    """
    if ax is None:
        ax = new_axes((7.0, 4.5))
    others = [k for k in sweep.axes if k != param]
    shares = sweep.shares(column, by=[param, *others])
    rows = shares[shares[column].astype(str) == value]
    ticks, numeric = _ticks(shares[param])
    groups = rows.groupby(others, sort=True, dropna=False) if others else [((), rows)]
    for key, group in groups:
        values = key if isinstance(key, tuple) else (key,)
        label = ", ".join([f"{column}={value}",
                           *(f"{k}={v}" for k, v in zip(others, values, strict=True))])
        group = group.assign(_x=group[param].map(ticks)).sort_values("_x")
        share = group["share"]
        ax.errorbar(group["_x"], share, yerr=[share - group["ci_low"], group["ci_high"] - share],
                    marker="o", capsize=4, label=label)
    if not numeric:
        ax.set_xticks(list(ticks.values()), [str(t) for t in ticks], fontsize="small")
    ax.set_xlabel(axis_label(param))
    ax.set_ylabel(f"share of samples with {column}={value}")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(color="#EEEEEE")
    ax.legend(fontsize="small", title="bars: 95% Wilson interval", title_fontsize="small")
    n = int(rows["n"].max()) if len(rows) else 0
    ax.set_title(f"{sweep.scenario}: {value} share by {param}\n"
                 f"({n} samples per point, 95% Wilson intervals)", loc="left")
    return ax


def _ticks(values: pd.Series) -> tuple[dict[Any, float], bool]:
    """Each distinct grid value, where it goes on the x axis, and whether all are numbers."""
    distinct = sorted(values.dropna().unique(), key=lambda v: (isinstance(v, str), v))
    if all(pd.api.types.is_number(v) and not isinstance(v, bool) for v in distinct):
        return {v: float(v) for v in distinct}, True
    return {v: float(i) for i, v in enumerate(distinct)}, False


def exploration_heatmap(exploration: ExplorationResult, ax: Axes | None = None,
                        value: str = "outcome") -> Axes:
    """A fault x point heatmap of ``value`` (see :func:`outcome_heatmap`), titled with
    the base scenario.

    ``value`` is ``outcome`` (default: the outcome label of the palette, such as
    ``FALLBACK:INSUFFICIENT_EVIDENCE`` or ``FAILED:TIMED_OUT``, ``CRASH`` for a crashed
    run), ``flagged`` (the number of flagged variants per cell) or any frame column, such
    as ``release_outcome``, ``run_state`` or ``case``. Categories get the palette's
    colours and a legend; without ``ax`` the figure is sized to the grid.
    """
    df = exploration.frame
    if value == "flagged":
        df = df.assign(flagged=df["flagged"].astype(int))
    elif value == "outcome":
        crashed = df["db_status"].eq("RUNNING") & df["release_outcome"].isna()
        labels = [outcome_label(o, f, s) for o, f, s in zip(
            df["release_outcome"], df["fallback_type"], df["run_state"], strict=True)]
        df = df.assign(outcome=pd.Series(labels, index=df.index).where(~crashed, "CRASH"))
    names = ", ".join(dict.fromkeys(b.scenario.name for b in exploration.bases)) or "exploration"
    return outcome_heatmap(df, rows="fault", cols="point", value=value, ax=ax,
                           title=f"{names}: {value} by fault x point")
