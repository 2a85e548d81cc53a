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
table.text td { white-space: pre-wrap; }
img { max-width: 100%; }
""".strip()


def png_img(ax: Axes, alt: str) -> str:
    """An ``<img>`` tag holding the figure of ``ax`` as a base64 PNG data URI."""
    data = base64.b64encode(figure_png(ax)).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _table(df: pd.DataFrame, *, index: bool = False, text: bool = False) -> str:
    """``df`` as an HTML table; with ``text``, multi-line strings keep their line breaks."""
    if not text:
        return str(df.to_html(index=index, na_rep="", escape=True, border=0))
    formatters = {c: _text_cell for c in df.columns if pd.api.types.is_string_dtype(df[c])}
    return str(df.to_html(index=index, na_rep="", escape=True, border=0, classes="text",
                          formatters=formatters))


def _text_cell(value: object) -> str:
    return "" if not isinstance(value, str) and pd.isna(value) else str(value)


def _parallel(name: str, values: Sequence[object] | None, recs: Sequence[RunRecord]) -> None:
    if values is not None and len(values) != len(recs):
        raise ValueError(f"{len(values)} {name} for {len(recs)} records")


def _scenario_sections(outcomes: pd.DataFrame | None, unrun: pd.DataFrame | None) -> list[str]:
    parts: list[str] = []
    if outcomes is not None:
        counts = outcomes["verdict"].value_counts()
        summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("ok", "FAILED", "ERROR"))
        parts += [f"<h2>Scenarios</h2>\n<p>{len(outcomes)} scenario(s): {summary}</p>",
                  _table(outcomes, text=True)]
    if unrun is not None and len(unrun):
        parts += ["<h2>Files that could not be loaded or run</h2>", _table(unrun, text=True)]
    return parts


def _mapping(runs: pd.DataFrame, cases: Sequence[str | None], recs: Sequence[RunRecord],
             expected: Sequence[str] | None) -> pd.DataFrame:
    names = list(runs["scenario"].where(runs["scenario"].notna(), runs["run_id"]))
    mapping = mapping_table(zip(names, cases, recs, strict=True))
    mapping = mapping.rename(columns={"matched": "case_matched"})
    if expected is not None:
        mapping["expected"] = list(expected)
    return mapping


def html_report(records: Iterable[RunRecord], *, labels: Sequence[str | None] | None = None,
                cases: Sequence[str | None] | None = None,
                title: str = "harness_lab report",
                expected: Sequence[str] | None = None,
                outcomes: pd.DataFrame | None = None,
                unrun: pd.DataFrame | None = None) -> str:
    """The report as one HTML document.

    ``labels`` name each record's scenario (and group the outcome bars; without them the
    bars are per run id); ``cases`` (parallel to ``records``, OUTCOME_TABLE keys or None)
    add the expected-outcome mapping table, whose ``case_matched`` column compares the run
    with its case only. ``expected`` (parallel to ``records``) is each run's result against
    its scenario's own expectations (``ok`` or the mismatches), shown beside the run.
    ``outcomes`` (a ``ResultSet.outcomes()`` frame) lists every scenario's verdict, records
    or not, and ``unrun`` (``ResultSet.unrun()``) the files that could not be loaded or run.
    """
    recs = list(records)
    _parallel("cases", cases, recs)
    _parallel("expected", expected, recs)
    runs = runs_frame(recs, labels=labels)
    shown = runs.assign(expected=list(expected)) if expected is not None else runs
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p>{len(recs)} run(s)</p>",
             *_scenario_sections(outcomes, unrun), "<h2>Runs</h2>", _table(shown, text=True)]
    if cases is not None:
        parts += ["<h2>Expected outcomes (SPEC §4)</h2>",
                  _table(_mapping(runs, cases, recs, expected), text=True)]
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
                      title: str = "harness_lab report",
                      expected: Sequence[str] | None = None,
                      outcomes: pd.DataFrame | None = None,
                      unrun: pd.DataFrame | None = None) -> Path:
    """Write :func:`html_report` to ``path`` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(html_report(records, labels=labels, cases=cases, title=title,
                                  expected=expected, outcomes=outcomes, unrun=unrun),
                      encoding="utf-8")
    return target
