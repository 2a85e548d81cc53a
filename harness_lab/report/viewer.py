"""The report viewer: one self-contained HTML page of a set of scenario results.

Its styles and script (vanilla JavaScript, from ``assets/``) are inline and each run's
timeline is an inline SVG, so the file opens offline; docs/report.md describes what the page
shows. It is built from the results alone, without pandas or matplotlib, so writing it costs
a few milliseconds per scenario.
"""

from __future__ import annotations

import functools
import html
import os
import stat
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

from harness_lab.logs.writer import git_commit
from harness_lab.report.cells import MISSING, cell
from harness_lab.report.compare import CHANGE_LABELS, change_badge, change_filter
from harness_lab.report.compare_html import (
    change_select,
    compared_header,
    compared_section,
    removed_section,
)
from harness_lab.report.mapping import OUTCOME_TABLE, case_matched, observed_axes
from harness_lab.report.palette import (
    OUTCOME_LABELS,
    VERDICTS,
    outcome_color,
    outcome_label,
    text_color,
    verdict_color,
)
from harness_lab.report.run_html import (
    CRASHED,
    badge,
    label_badge,
    result_outcome,
    result_problems,
    result_sections,
    run_duration,
    scenario_name_html,
    table,
    verdict_badge,
)
from harness_lab.states import FallbackType, ReleaseOutcome, RunState

if TYPE_CHECKING:
    from harness_lab.logs.diff import ScenarioChange
    from harness_lab.report.compare import Comparison
    from harness_lab.runner.run import ScenarioResult

__all__ = ["SOURCE_LIMIT", "ReportContext", "asset_text", "git_commit", "viewer_html"]

_VERDICT_RANK: Final = {"FAILED": 0, "ERROR": 1, "ok": 2}
SOURCE_LIMIT: Final = 32_768
"""At most this many bytes of a scenario file are shown in its drill-down."""
_SEP: Final = "\u241f"  # separates the tags of a row's data-tags attribute


def asset_text(name: str) -> str:
    """The text of a file of ``harness_lab/report/assets`` (a stylesheet or script)."""
    assets = resources.files("harness_lab.report").joinpath("assets")
    return assets.joinpath(name).read_text("utf-8")


@dataclass(frozen=True, slots=True)
class ReportContext:
    """What the header says about the run that made the report."""

    command: str | None = None
    """The command line that made it (``harness-lab report scenarios --out r.html``)."""
    paths: tuple[str, ...] = ()
    """The scenario files or directories it ran."""
    elapsed_s: float | None = None
    """Wall-clock seconds the scenarios took to load and run (for a report of run logs, what
    the logs recorded, from each one's start to its footer)."""
    commit: str | None = None
    """The git commit of the work tree it ran in, where there is one."""
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    """When the report was made."""


@dataclass(frozen=True, slots=True)
class _Row:
    """One scenario result as the main table shows it."""

    rid: str
    result: ScenarioResult
    directory: str
    outcome: str
    change: ScenarioChange | None
    run_state: str
    release: str
    fallback: str


def _directories(results: Sequence[ScenarioResult]) -> list[str]:
    """Each result's directory, relative to the directory all of them share."""
    parents = [str(Path(r.path).parent) if r.path else "" for r in results]
    known = [p for p in parents if p]
    if not known:
        return parents
    try:
        root = os.path.commonpath(known)
    except ValueError:  # absolute and relative paths mixed
        return parents
    labels = []
    for parent in parents:
        rel = os.path.relpath(parent, root) if parent else ""
        labels.append(parent if rel == "." else rel)
    return labels


def _read_source(path: str) -> str | None:
    """A regular file's first bytes as text; None for anything else (a FIFO would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as stream:
            data = stream.read(SOURCE_LIMIT + 1)
    except OSError:
        return None
    text = data[:SOURCE_LIMIT].decode("utf-8", errors="replace")
    if len(data) > SOURCE_LIMIT:
        text += f"\n… (the file goes on; the first {SOURCE_LIMIT:,} bytes are shown)"
    return text


def _rows(results: Sequence[ScenarioResult], comparison: Comparison | None) -> list[_Row]:
    rows = []
    for i, (r, directory) in enumerate(zip(results, _directories(results), strict=True)):
        axes = observed_axes(r.record) if r.record is not None else {}
        rows.append(_Row(f"run-{i + 1}", r, directory, result_outcome(r),
                         comparison.change_of(r.scenario) if comparison is not None else None,
                         axes.get("run_state") or "", axes.get("release_outcome") or "",
                         axes.get("fallback_type") or ""))
    return sorted(rows, key=lambda row: _VERDICT_RANK[row.result.verdict])  # stable


def _outcome_key(label: str) -> str:
    """A sort key that orders outcomes as the lifecycle does (SUCCESS first), then others."""
    order = (*OUTCOME_LABELS, CRASHED)
    return f"{order.index(label):02d}" if label in order else f"99 {label}"


def _main_row(row: _Row, source: str | None, comparison: Comparison | None) -> str:
    r = row.result
    rec = r.record
    problems = result_problems(r)
    tags = "".join(f'<span class="hl-tag">{html.escape(t)}</span>' for t in r.tags)
    describe = (f'<div class="desc">{html.escape(r.description)}</div>'
                if r.description else "")
    where = f'<span class="where">{html.escape(row.directory)}/</span>' if row.directory else ""
    subs = []
    if rec is not None:
        subs.append(f"{html.escape(rec.run_state.value)} · stored {cell(rec.stored_status)}")
    elif r.stored_row:
        subs.append(f"stored {cell(r.stored_row.get('status'))}")
    if r.case:
        subs.append(f"§10 case {html.escape(r.case)}")
    state = "".join(f'<div class="sub">{line}</div>' for line in subs)
    moved = (comparison.outcome_change(row.change, r)
             if comparison is not None and row.change is not None else None)
    if moved:
        state += f'<div class="sub changed-outcome">{html.escape(moved)}</div>'
    marks = change_filter(row.change)
    listed = "".join(f"<li>{html.escape(p)}</li>" for p in problems[:4])
    more = (f'<li class="more">and {len(problems) - 4} more</li>' if len(problems) > 4 else "")
    virtual = MISSING
    if rec is not None:
        virtual = (f"{run_duration(rec)}<div class='sub calls'>"
                   f"{rec.usage.model_calls} model · {rec.tool_calls} tool</div>")
    search = " ".join([r.scenario, r.description, " ".join(r.tags), r.path or "",
                       row.outcome, row.run_state, r.case or "", *problems,
                       rec.run_id if rec is not None else "", rec.query if rec else "",
                       CHANGE_LABELS[row.change.change] if row.change else "", moved or ""])
    attrs = {
        "id": row.rid, "data-verdict": r.verdict, "data-dir": row.directory,
        "data-tags": _SEP + _SEP.join(r.tags) + _SEP, "data-outcome": row.outcome,
        "data-run-state": row.run_state, "data-release": row.release,
        "data-fallback": row.fallback, "data-search": search.lower(),
        "data-change": _SEP + _SEP.join(marks) + _SEP if marks else "",
        "data-k-verdict": str(_VERDICT_RANK[r.verdict]), "data-k-name": r.scenario.lower(),
        "data-k-outcome": _outcome_key(row.outcome), "data-k-case": r.case or "",
        "data-k-time": f"{rec.duration_s:.6f}" if rec is not None else "-1",
        "data-k-calls": str(rec.usage.model_calls + rec.tool_calls) if rec else "-1",
        "data-k-problems": str(len(problems)),
    }
    attr_text = " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items())
    style = (f' style="background:{verdict_color(r.verdict, background=True)}"'
             if r.verdict != "ok" else "")
    return (f'<tr class="run" tabindex="0" aria-expanded="false" {attr_text}{style}>'
            '<td class="c-toggle"><span class="caret">▸</span></td>'
            f'<td class="c-verdict">{verdict_badge(r.verdict)}{change_badge(row.change)}</td>'
            f'<td class="c-scenario">{scenario_name_html(r.scenario)}{describe}'
            f'<div class="tags">{where}{tags}</div></td>'
            f'<td class="c-outcome">{label_badge(row.outcome)}{state}</td>'
            f'<td class="c-problems"><ul>{listed}{more}</ul></td>'
            f'<td class="c-time">{virtual}</td></tr>'
            f'<tr class="detail" hidden data-for="{row.rid}"><td colspan="{len(_COLUMNS)}">'
            f'<div class="drill">{compared_section(comparison, row.change, r)}'
            f'{result_sections(r, source=source)}</div></td></tr>')


_COLUMNS: Final = (("", "", "c-toggle"), ("verdict", "verdict", "c-verdict"),
                   ("scenario", "name", "c-scenario"), ("outcome", "outcome", "c-outcome"),
                   ("what did not hold", "problems", "c-problems"),
                   ("virtual time", "time", "c-time"))


def _main_table(rows: Sequence[_Row], comparison: Comparison | None) -> str:
    heads = "".join(
        f'<th class="{cls}"' + (f' data-sort="{key}" title="sort by {label}"' if key else "")
        + f">{html.escape(label)}</th>" for label, key, cls in _COLUMNS)
    source = functools.cache(_read_source)  # each scenario file read once
    body = "".join(_main_row(row, None if row.result.path is None else source(row.result.path),
                             comparison) for row in rows)
    compared = " compared" if comparison is not None else ""
    return (f'<table id="runs" class="runs{compared}"><thead><tr>{heads}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
            '<p id="no-match" hidden>No scenario matches these filters.</p>')


def _options(name: str, label: str, values: Iterable[str], order: Sequence[str] = ()) -> str:
    counts = Counter(v for v in values if v)
    opts = "".join(f'<option value="{html.escape(v)}">{html.escape(v)} ({counts[v]})</option>'
                   for v in _ordered(counts, order))
    return (f'<label>{html.escape(label)} <select data-filter="{name}">'
            f'<option value="">all</option>{opts}</select></label>')


def _ordered(present: Counter[str], order: Sequence[str]) -> list[str]:
    known = [v for v in order if present[v]]
    return known + sorted(v for v in present if v not in order and v)


def _filters(rows: Sequence[_Row], comparison: Comparison | None) -> str:
    selects = [
        _options("verdict", "verdict", (r.result.verdict for r in rows), VERDICTS),
        _options("tags", "tag", (t for r in rows for t in r.result.tags)),
        _options("dir", "directory", (r.directory for r in rows)),
        _options("outcome", "outcome", (r.outcome for r in rows), (*OUTCOME_LABELS, CRASHED)),
        _options("run-state", "RunState", (r.run_state for r in rows), [s.value for s in RunState]),
        _options("release", "ReleaseOutcome", (r.release for r in rows),
                 [o.value for o in ReleaseOutcome]),
        _options("fallback", "FallbackType", (r.fallback for r in rows),
                 [f.value for f in FallbackType]),
    ]
    if comparison is not None:
        selects.insert(0, change_select([row.change for row in rows]))
    return ('<div class="filters" id="filters">'
            '<input id="search" type="search" placeholder="search (press /): names, tags, '
            'problems…" aria-label="search" title="rows holding every word you type; '
            '/ focuses, Escape clears">' + "".join(selects)
            + '<button type="button" id="reset">clear</button>'
            '<button type="button" id="expand">open all shown</button>'
            '<span id="shown" aria-live="polite"></span></div>')


def _header(title: str, results: Sequence[ScenarioResult], context: ReportContext,
            comparison: Comparison | None) -> str:
    from harness_lab.version import __version__

    counts = Counter(r.verdict for r in results)
    records = sum(r.record is not None for r in results)
    facts = [f"made {context.generated_at.strftime('%Y-%m-%d %H:%M:%S %Z').strip()}",
             f"harness_lab {__version__}"]
    if context.commit:
        facts.append(f"commit {context.commit}")
    if context.elapsed_s is not None:
        facts.append(f"ran in {context.elapsed_s:.2f} s")
    meta = " · ".join(html.escape(f) for f in facts)
    command = (f'<div class="command"><code>{html.escape(context.command)}</code></div>'
               if context.command else "")
    paths = (f'<div class="paths">paths: {html.escape(", ".join(context.paths))}</div>'
             if context.paths else "")
    chips = [f'<button type="button" class="total" data-verdict="">{len(results)} '
             f"scenario(s), {records} run(s)</button>"]
    for verdict in VERDICTS:
        color = verdict_color(verdict)
        chips.append(f'<button type="button" class="total" data-verdict="{verdict}" '
                     f'style="background:{color};color:{text_color(color)}">'
                     f"{counts.get(verdict, 0)} {verdict}</button>")
    return (f'<header class="top"><h1>{html.escape(title)}</h1><div class="meta">{meta}</div>'
            f'{command}{paths}<div class="totals">{"".join(chips)}</div>'
            f"{compared_header(comparison) if comparison is not None else ''}</header>")


def _distribution(rows: Sequence[_Row]) -> str:
    """Outcome counts per directory as stacked bars; a segment filters the table."""
    by_dir: dict[str, Counter[str]] = {}
    placed = any(row.directory for row in rows)  # bare records have no file, so no directory
    for row in rows:
        key = (row.directory or MISSING) if placed else "all runs"
        by_dir.setdefault(key, Counter())[row.outcome or "(no run)"] += 1
    if not by_dir:
        return ""
    largest = max(sum(c.values()) for c in by_dir.values())
    order = [*OUTCOME_LABELS, CRASHED, "(no run)"]
    lines = []
    for directory in sorted(by_dir):
        counts = by_dir[directory]
        total = sum(counts.values())
        segments = []
        for label in _ordered(counts, order):
            n = counts[label]
            color = outcome_color(label)
            segments.append(
                f'<span class="seg" style="width:{100.0 * n / largest:.3f}%;background:{color};'
                f'color:{text_color(color)}" title="{html.escape(f"{directory}: {n} {label}")}" '
                f'data-dir="{html.escape(directory if placed else "")}" '
                f'data-outcome="{html.escape(label)}">{n}</span>')
        lines.append(f'<div class="dist-row"><span class="dist-dir">{html.escape(directory)}'
                     f' <span class="hl-count">{total}</span></span><span class="bar">'
                     f'{"".join(segments)}</span></div>')
    seen = Counter(row.outcome or "(no run)" for row in rows)
    legend = "".join(
        f'<span class="key"><span class="swatch" style="background:'
        f'{outcome_color(label)}"></span>'
        f"{html.escape(label)} <span class='hl-count'>{seen[label]}</span></span>"
        for label in _ordered(seen, order))
    heading = "Outcomes by directory" if placed else "Outcomes"
    return (f'<section id="distribution"><h2>{heading}</h2>'
            f'<div class="legend">{legend}</div>{"".join(lines)}</section>')


def _outcome_table(rows: Sequence[_Row]) -> str:
    """Doc §10's outcome table, each row with the scenarios that reproduce it."""
    by_case: dict[str, list[_Row]] = {}
    for row in rows:
        if row.result.case is not None:
            by_case.setdefault(row.result.case, []).append(row)
    if not by_case:
        return ""
    body = []
    for case in OUTCOME_TABLE:
        links = []
        for row in sorted(by_case.get(case.case, []), key=lambda r: r.result.scenario):
            rec = row.result.record
            matched = rec is not None and case_matched(case.case, rec)
            mark, color = ("✓", "#228833") if matched else ("✗", "#CC3311")
            why = "reproduces this row" if matched else "does not end as this row says"
            links.append(f'<a class="repro" href="#{row.rid}" data-target="{row.rid}" '
                         f'title="{html.escape(why)}"><span style="color:{color}">{mark}</span> '
                         f"{html.escape(row.result.scenario)}</a>")
        axes = (case.release_outcome, case.fallback_type, case.run_state)
        outcome, label = outcome_color(*axes), outcome_label(*axes)
        body.append([f"<b>{html.escape(case.case)}</b><div class='sub'>"
                     f"{html.escape(case.description)}</div>", html.escape(case.run_state.value),
                     badge(label, outcome, breakable=False), html.escape(case.db_status.value),
                     " ".join(links) or "<span class=sub>no scenario</span>"])
    grid = table(("case", "RunState", "ReleaseOutcome / FallbackType", "stored status",
                  "reproduced by"), body, cls="cases")
    return f'<section id="outcome-table"><h2>The outcome table (doc §10)</h2>{grid}</section>'


def _crosstab(rows: Sequence[_Row]) -> str:
    counts = Counter((r.run_state, r.release) for r in rows if r.run_state)
    if not counts:
        return ""
    outcomes = [o.value for o in ReleaseOutcome]
    head = "".join(f"<th>{o}</th>" for o in outcomes)
    body = []
    for state in (s.value for s in RunState):
        cells = "".join(
            f'<td class="{"n" if counts[(state, o)] else "n zero"}">{counts[(state, o)]}</td>'
            for o in outcomes)
        body.append(f"<tr><th>{state}</th>{cells}</tr>")
    return ('<section id="crosstab"><h2>RunState x ReleaseOutcome</h2>'
            f'<table class="hl-table crosstab"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></section>")


def _figures(figures: Sequence[tuple[str, str]]) -> str:
    if not figures:
        return ""
    shown = "".join(f"<figure>{image}<figcaption>{html.escape(caption)}</figcaption></figure>"
                    for caption, image in figures)
    return f'<section id="plots"><h2>Plots</h2>{shown}</section>'


def viewer_html(results: Sequence[ScenarioResult], *, title: str = "harness_lab report",
                context: ReportContext | None = None,
                figures: Sequence[tuple[str, str]] = (),
                comparison: Comparison | None = None) -> str:
    """The viewer page of ``results`` as one HTML document.

    ``figures`` are (caption, ``<img>`` or ``<svg>`` markup) pairs shown at the end of the
    page; the markup must be self-contained (a data URI, inline SVG). ``comparison`` (see
    :func:`harness_lab.report.compare.compare_with`) adds the "compared with" view: the
    earlier run and the diff's counts in the header, each row's change, a change filter,
    the differences in each drill-down and the scenarios the earlier run had alone.
    """
    context = context or ReportContext()
    rows = _rows(results, comparison)
    style = asset_text("base.css") + asset_text("viewer.css")
    body = [_header(title, results, context, comparison), _distribution(rows),
            '<section id="scenarios"><h2>Scenarios</h2>', _filters(rows, comparison),
            _main_table(rows, comparison), "</section>",
            removed_section(comparison) if comparison is not None else "",
            _outcome_table(rows), _crosstab(rows), _figures(figures)]
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{style}</style>\n</head>\n"
            f'<body class="hl">\n{"".join(body)}\n'
            f"<script>\n{asset_text('viewer.js')}</script>\n</body>\n</html>\n")
