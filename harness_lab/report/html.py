"""One self-contained HTML report of scenario results or bare run records: the viewer page.

The document references no external resource (see :mod:`harness_lab.report.viewer`), so
the file can be mailed, archived or opened offline. Scenario results come from
:func:`harness_lab.scenarios.run_paths` (a ``ResultSet``); bare :class:`RunRecord` objects
are shown as results judged by the lifecycle invariants and, when a ``case`` names their
row of the outcome table, by that row.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness_lab.atomic import write_atomically
from harness_lab.record import RunRecord
from harness_lab.report.viewer import ReportContext, viewer_html

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from harness_lab.logs.reader import Log
    from harness_lab.report.compare import Comparison
    from harness_lab.runner.run import ScenarioResult

__all__ = ["html_report", "png_img", "results_of_records", "summary_figures",
           "write_html_report"]

TIMELINE_ROWS = 40
"""At most this many runs go into the timeline image of the runs that did not hold."""


def png_img(ax: Axes, alt: str) -> str:
    """An ``<img>`` tag holding the figure of ``ax`` as a base64 PNG data URI."""
    from harness_lab.report.plots import figure_png

    data = base64.b64encode(figure_png(ax)).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def summary_figures(results: Sequence[ScenarioResult]) -> list[tuple[str, str]]:
    """The matplotlib figures of a report, as (caption, ``<img>``) pairs: the outcomes by
    directory and by tag, and the timeline of the runs that did not hold (the first
    :data:`TIMELINE_ROWS` of them). Rendering them costs about a second per figure."""
    from harness_lab.report.plots import outcome_bars, run_timeline

    with_runs = [r for r in results if r.record is not None]
    if not with_runs:
        return []
    figures = [("release outcome of each run, by directory",
                png_img(outcome_bars(results, by="directory"), "outcomes by directory")),
               ("release outcome of each run, by tag (a run counts under each of its tags)",
                png_img(outcome_bars(results, by="tag"), "outcomes by tag"))]
    failed = [r for r in with_runs if not r.ok][:TIMELINE_ROWS]
    if failed:
        figures.append(("timeline of the runs that did not hold",
                        png_img(run_timeline(failed), "timeline of the failed runs")))
    return figures


def results_of_records(records: Iterable[RunRecord], *,
                       labels: Sequence[str | None] | None = None,
                       cases: Sequence[str | None] | None = None) -> list[ScenarioResult]:
    """Bare records as scenario results: named by ``labels`` (or their run id), judged by the
    invariants and by their outcome-table ``cases`` (both parallel to ``records``)."""
    from harness_lab.logs.codec import record_result
    from harness_lab.report.mapping import expected_axes, observed_axes
    from harness_lab.runner.expect import Mismatch

    recs = list(records)
    for name, values in (("labels", labels), ("cases", cases)):
        if values is not None and len(values) != len(recs):
            raise ValueError(f"{len(values)} {name} for {len(recs)} records")
    results = []
    for record, label, case in zip(recs, labels or [None] * len(recs),
                                   cases or [None] * len(recs), strict=True):
        mismatches: list[Mismatch] = []
        if case is not None:
            seen, want = observed_axes(record), expected_axes(case)
            mismatches = [Mismatch(axis, want[axis], seen[axis]) for axis in want
                          if want[axis] != seen[axis]]
        results.append(record_result(label or record.run_id, None, record, case=case,
                                     mismatches=tuple(mismatches)))
    return results


def html_report(items: Iterable[ScenarioResult | RunRecord], *,
                labels: Sequence[str | None] | None = None,
                cases: Sequence[str | None] | None = None,
                title: str = "harness_lab report",
                context: ReportContext | None = None, plots: bool = False,
                compare: Comparison | Log | str | os.PathLike[str] | None = None) -> str:
    """The report viewer of scenario results (or of bare records) as one HTML document.

    ``labels`` and ``cases`` apply when ``items`` are records (see
    :func:`results_of_records`); ``context`` fills the header (command, paths, timing);
    ``plots`` adds the matplotlib figures of :func:`summary_figures`. ``compare`` adds the
    "compared with" view: a :class:`~harness_lab.report.compare.Comparison`, or an earlier
    run log (a ``Log`` or its path) that the items are compared with as a fresh run (raise
    LogError when the path is not a readable log).
    """
    listed = list(items)
    if listed and all(isinstance(item, RunRecord) for item in listed):
        results = results_of_records(listed, labels=labels, cases=cases)  # type: ignore[arg-type]
    elif any(isinstance(item, RunRecord) for item in listed):
        raise TypeError("pass scenario results or run records, not both")
    else:
        if labels is not None or cases is not None:
            raise TypeError("labels and cases apply to run records only; scenario results "
                            "carry their own")
        results = listed  # type: ignore[assignment]
    from harness_lab.report.compare import Comparison, compare_with

    if compare is not None and not isinstance(compare, Comparison):
        compare = compare_with(compare, results)
    figures = summary_figures(results) if plots else []
    return viewer_html(results, title=title, context=context, figures=figures,
                       comparison=compare)


def write_html_report(path: str | os.PathLike[str], items: Iterable[ScenarioResult | RunRecord],
                      *, labels: Sequence[str | None] | None = None,
                      cases: Sequence[str | None] | None = None,
                      title: str = "harness_lab report",
                      context: ReportContext | None = None, plots: bool = False,
                      compare: Comparison | Log | str | os.PathLike[str] | None = None
                      ) -> Path:
    """Write :func:`html_report` to ``path`` (UTF-8) and return the path.

    The page is built completely, written to a temporary file beside ``path`` and then
    renamed over it, so a failure while building or writing (an OSError, which propagates)
    leaves an existing file as it was and no partial page behind.
    """
    text = html_report(items, labels=labels, cases=cases, title=title, context=context,
                       plots=plots, compare=compare)
    write_atomically(path, text)
    return Path(path)
