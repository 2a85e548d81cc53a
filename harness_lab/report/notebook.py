"""Notebook views (``_repr_html_``) of a run record, scenario results and a sweep result.

They share the report viewer's look: the same verdict and outcome colours (from
:mod:`harness_lab.report.palette`), the same state axes and timeline, with a record's SSE
events and trace collapsed under it. Styles are one ``<style>`` block whose selectors all
start with ``hl-``, so nothing else of the notebook changes; colours are inline, so they
stay where a renderer strips styles. No missing value reads as ``None`` or ``nan``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from harness_lab.record import RunRecord
from harness_lab.report.cells import MISSING, cell, is_missing, text
from harness_lab.report.palette import (
    OUTCOME_LABELS,
    VERDICTS,
    outcome_color,
    outcome_label,
    verdict_color,
)
from harness_lab.report.run_html import (
    badge,
    kv_grid,
    label_badge,
    outcome_badge,
    record_sections,
    result_outcome,
    result_problems,
    result_sections,
    run_duration,
    scenario_name_html,
    table,
    verdict_badge,
)

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult
    from harness_lab.sweep.result import SweepResult

__all__ = ["record_html", "result_html", "results_html", "sweep_html"]


@cache
def _style() -> str:
    from harness_lab.report.viewer import asset_text

    return f"<style>{asset_text('base.css')}</style>"


def _frame(title: str, body: str) -> str:
    return (f'{_style()}<div class="hl-view" style="font-family:system-ui,sans-serif;'
            f'font-size:13px;line-height:1.4">'
            f'<div style="font-size:14px;margin-bottom:4px">{title}</div>{body}</div>')


def record_html(record: RunRecord) -> str:
    """A run record: its outcome, state axes and timeline, then its SSE events, trace,
    tool invocations and stored row, each collapsed."""
    title = (f"<b>RunRecord {cell(record.run_id)}</b> {outcome_badge(record)} "
             f"<span style='color:#56626e'>{cell(record.query)}</span>")
    return _frame(title, record_sections(record, open_events=False))


def result_html(result: ScenarioResult) -> str:
    """One scenario result: its verdict, name and outcome, what did not hold, then the run."""
    title = (f"{verdict_badge(result.verdict)} {scenario_name_html(result.scenario)} "
             f"{label_badge(result_outcome(result))}")
    return _frame(title, result_sections(result, open_events=False))


def _rank(result: ScenarioResult) -> int:
    return {"FAILED": 0, "ERROR": 1}.get(result.verdict, 2)


def results_html(results: Sequence[ScenarioResult]) -> str:
    """Many results as one table, failures and errors first, with the totals above it."""
    counts = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    totals = " ".join(badge(f"{counts[v]} {v}", verdict_color(v)) for v in VERDICTS)
    rows, backgrounds = [], []
    for result in sorted(results, key=_rank):
        rec = result.record
        problems = "<br>".join(html.escape(p) for p in result_problems(result))
        background = ("transparent" if result.ok
                      else verdict_color(result.verdict, background=True))
        backgrounds.append(f' style="background:{background}"')
        rows.append([verdict_badge(result.verdict), scenario_name_html(result.scenario),
                     label_badge(result_outcome(result)), cell(rec.run_state if rec else None),
                     run_duration(rec) if rec else MISSING,
                     f'<span style="color:#8a1f00">{problems}</span>'])
    grid = table(("verdict", "scenario", "outcome", "RunState", "virtual time",
                  "what did not hold"), rows, row_attrs=backgrounds)
    title = f"<b>{len(results)} scenario result(s)</b> {totals}"
    note = ("<div style='color:#56626e;font-size:12px'>show one result (<code>results[i]</code>)"
            " for its run, or write them all with <code>harness-lab report</code></div>")
    return _frame(title, grid + (note if rows else ""))


def _share_cell(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return MISSING
    return f"{value:.1%}" if isinstance(value, float) else cell(value)


def sweep_html(sweep: SweepResult) -> str:
    """A sweep's headline figures and its outcome shares with 95% Wilson intervals, each
    outcome named and coloured as the plots do (the palette's ``outcome_label``: a timeout
    is ``FAILED:TIMED_OUT``, a fallback ``FALLBACK:<FallbackType>``)."""
    summary = sweep.summary()
    facts = kv_grid((str(k), cell(v)) for k, v in summary.items() if k != "scenario")
    shares = _labelled(sweep).shares(OUTCOME, by=list(sweep.axes) or None)
    head = [c for c in shares.columns
            if c not in ("count", "n", "share", "ci_low", "ci_high", OUTCOME)]
    rows = []
    for record in shares.to_dict("records"):
        if not record["count"]:
            continue
        label = text(record[OUTCOME])
        rows.append([*(cell(record[k]) for k in head), badge(label, outcome_color(label)),
                     f"{record['count']} of {record['n']}", _share_cell(record["share"]),
                     f"{_share_cell(record['ci_low'])} – {_share_cell(record['ci_high'])}"])
    grid = table((*head, "outcome", "runs", "share", "95% Wilson interval"), rows)
    title = f"<b>sweep of {cell(summary.get('scenario'))}</b>"
    return _frame(title, facts + grid)


OUTCOME = "outcome"
"""The column of a sweep's outcome labels, which :func:`sweep_html` tabulates."""


def _labelled(sweep: SweepResult) -> SweepResult:
    """``sweep`` with an ``outcome`` column: each sample's outcome label, in the palette's
    order (an errored sample's stays missing, which the sweep counts as ``ERROR``)."""
    import dataclasses

    import pandas as pd

    frame = sweep.frame
    labels = [None if is_missing(o) else outcome_label(o, f, s) for o, f, s in zip(
        frame["release_outcome"], frame["fallback_type"], frame["run_state"], strict=True)]
    order = list(dict.fromkeys([*OUTCOME_LABELS, *(v for v in labels if v is not None)]))
    column = pd.Series(labels, index=frame.index, dtype=object).astype(
        pd.CategoricalDtype(order, ordered=True))
    return dataclasses.replace(sweep, frame=frame.assign(**{OUTCOME: column}))
