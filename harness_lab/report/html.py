"""One self-contained HTML report of a set of runs: tables, crosstabs and embedded plots.

The document references no external resource: styles are inline and plots are PNG data
URIs, so the file can be mailed, archived or opened offline.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes

from harness_lab.record import RunRecord
from harness_lab.report.frames import runs_frame, state_crosstabs
from harness_lab.report.mapping import mapping_table
from harness_lab.report.plots import figure_png, outcome_bars, run_timeline

__all__ = ["html_report", "png_img", "write_html_report"]

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #212121; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
th, td { border: 1px solid #cfd8dc; padding: 0.2em 0.5em; text-align: left; }
th { background: #eceff1; }
img { max-width: 100%; }
""".strip()


def png_img(ax: Axes, alt: str) -> str:
    """An ``<img>`` tag holding the figure of ``ax`` as a base64 PNG data URI."""
    data = base64.b64encode(figure_png(ax)).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _table(df: pd.DataFrame, *, index: bool = False) -> str:
    return str(df.to_html(index=index, na_rep="", escape=True, border=0))


def html_report(records: Iterable[RunRecord], *, labels: Sequence[str | None] | None = None,
                cases: Sequence[str | None] | None = None,
                title: str = "harness_lab report") -> str:
    """The report as one HTML document.

    ``labels`` name each record's scenario (and group the outcome bars; without them the
    bars are per run id); ``cases`` (parallel to ``records``, OUTCOME_TABLE keys or None)
    add the expected-outcome mapping table.
    """
    recs = list(records)
    runs = runs_frame(recs, labels=labels)
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p>{len(recs)} run(s)</p>",
             "<h2>Runs</h2>", _table(runs)]
    if cases is not None:
        if len(cases) != len(recs):
            raise ValueError(f"{len(cases)} cases for {len(recs)} records")
        names = list(runs["scenario"].where(runs["scenario"].notna(), runs["run_id"]))
        mapping = mapping_table(zip(names, cases, recs, strict=True))
        parts += ["<h2>Expected outcomes (SPEC §4)</h2>", _table(mapping)]
    parts.append("<h2>State crosstabs</h2>")
    for name, table in state_crosstabs(runs).items():
        parts += [f"<h3>{html.escape(name)}</h3>", _table(table, index=True)]
    if recs:
        by = "scenario" if labels is not None else "run_id"
        parts += ["<h2>Outcomes</h2>", png_img(outcome_bars(runs, by=by), "outcome bars"),
                  "<h2>Timeline</h2>", png_img(run_timeline(recs), "run timeline")]
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{_STYLE}\n</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def write_html_report(path: str | os.PathLike[str], records: Iterable[RunRecord], *,
                      labels: Sequence[str | None] | None = None,
                      cases: Sequence[str | None] | None = None,
                      title: str = "harness_lab report") -> Path:
    """Write :func:`html_report` to ``path`` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(html_report(records, labels=labels, cases=cases, title=title),
                      encoding="utf-8")
    return target
