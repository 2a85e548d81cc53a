"""HTML pieces of one run and one scenario result, shared by the report viewer and notebooks.

A run reads the same in ``harness-lab report`` and under a notebook cell: coloured verdict
and outcome badges (colours from :mod:`harness_lab.report.palette`), its state axes, the
expectation differences and broken invariants, the SSE events with their payloads, the trace
with virtual times, the canonical tool invocations and rejections, the stored
``diagnosis_run`` row and the timeline. Class names are prefixed ``hl-`` and styled by
``assets/base.css``; colours are inline, so a view keeps them where styles are stripped.
"""

from __future__ import annotations

import html
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness_lab.invariants import TIMES, time_contradictions
from harness_lab.record import RunRecord
from harness_lab.report.cells import (
    cell,
    detail_text,
    duration,
    json_text,
    seconds,
    text,
    variant_parts,
)
from harness_lab.report.palette import (
    MISSING_COLOR,
    RUN_STATE_COLORS,
    outcome_color,
    outcome_label,
    text_color,
    verdict_color,
)
from harness_lab.report.timeline_svg import TimelineInput, timeline_svg
from harness_lab.sse import SseEvent
from harness_lab.tools.records import CanonicalInvocation, ToolRejection
from harness_lab.trace import TraceEvent

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["CRASHED", "axes_rows", "badge", "expectation_location", "file_line", "kv_grid",
           "kv_table", "label_badge", "outcome_badge", "record_sections", "result_location",
           "result_outcome", "result_problems", "result_sections", "run_duration",
           "scenario_name_html", "table", "terminal_command", "verdict_badge"]

CRASHED = "crashed"
"""The outcome shown for a run whose host died before it released anything."""

_STATUS_COLORS = {"OK": "#228833", "FAILED": "#CC3311", "REJECTED": "#EE7733",
                  "DISCARDED": "#555555", "STARTED": "#0077BB", "READY": "#228833",
                  "ERROR": "#CC3311", "PROJECTING": "#0077BB"}


def badge(label: str, color: str, *, title: str | None = None, cls: str = "",
          breakable: bool = True) -> str:
    """A coloured label; its text is black or white, whichever reads on ``color``.

    A long label may wrap after a colon (``FALLBACK:`` / ``MISSING_REQUIRED_CONTEXT``)
    unless ``breakable`` is false.
    """
    tip = f' title="{html.escape(title)}"' if title else ""
    shown = html.escape(label)
    if breakable:
        shown = shown.replace(":", ":<wbr>")
    return (f'<span class="hl-badge {cls}"{tip} style="background:{color};'
            f'color:{text_color(color)}">{shown}</span>')


def verdict_badge(verdict: str) -> str:
    """``ok`` / ``FAILED`` / ``ERROR`` in its verdict colour."""
    return badge(verdict, verdict_color(verdict), cls="hl-verdict")


def outcome_badge(record: RunRecord) -> str:
    """The run's outcome label (``FALLBACK:SEMANTIC_UNSUPPORTED``...) in its colour."""
    return label_badge(outcome_label(record.release_outcome, record.fallback_type,
                                     record.run_state))


def label_badge(label: str) -> str:
    """An outcome label in its colour (``crashed`` and other text in the missing one); empty
    text for no label."""
    return badge(label, outcome_color(label), cls="hl-outcome") if label else ""


def result_outcome(result: ScenarioResult) -> str:
    """The outcome label of a result: its record's, ``crashed``, or empty with no run."""
    if result.record is not None:
        r = result.record
        return outcome_label(r.release_outcome, r.fallback_type, r.run_state)
    return CRASHED if result.crashed else ""


def _status(value: str) -> str:
    color = _STATUS_COLORS.get(value)
    return (f'<span class="hl-status" style="color:{color}">{html.escape(value)}</span>'
            if color else html.escape(value))


def table(head: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "",
          row_attrs: Iterable[str] = ()) -> str:
    """A table of already-escaped cells (empty text when there are no rows); ``row_attrs``
    gives each row's ``<tr>`` attributes, in order."""
    attrs = iter(row_attrs)
    body = "".join(f"<tr{next(attrs, '')}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                   for row in rows)
    if not body:
        return ""
    heads = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return (f'<table class="hl-table{" " + cls if cls else ""}"><thead><tr>{heads}</tr>'
            f"</thead><tbody>{body}</tbody></table>")


def kv_table(items: Iterable[tuple[str, str]], *, cls: str = "") -> str:
    """A two-column table of names and already-escaped values."""
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in items)
    return f'<table class="hl-kv {cls}">{rows}</table>' if rows else ""


def kv_grid(items: Iterable[tuple[str, str]], *, cls: str = "") -> str:
    """Names and already-escaped values laid out in as many columns as the width allows."""
    cells = "".join(f"<div><dt>{html.escape(k)}</dt><dd>{v}</dd></div>" for k, v in items)
    return f'<dl class="hl-grid {cls}">{cells}</dl>' if cells else ""


def axes_rows(record: RunRecord) -> list[tuple[str, str]]:
    """Every state axis, usage and budget headroom of a record, as (name, escaped value)."""
    state_color = RUN_STATE_COLORS.get(record.run_state.value, MISSING_COLOR)
    usage = record.usage
    headroom = ", ".join(f"{k} {text(v)}" for k, v in record.headroom.items())
    return [
        ("run", f"{cell(record.run_id)} · session {cell(record.session_id)}"),
        ("query", cell(record.query)),
        ("intent", cell(record.intent)),
        ("RunState", badge(record.run_state.value, state_color)
         + (f" {cell(record.termination_reason)}" if record.termination_reason else "")),
        ("ReleaseOutcome", outcome_badge(record)),
        ("FallbackType", cell(record.fallback_type)),
        ("stored status", cell(record.stored_status)),
        ("SSE state", cell(record.sse_state)),
        ("CollectionState", cell(record.collection_state)),
        ("stop reason", cell(record.stop_reason)),
        ("SemanticVerdict", cell(record.semantic_verdict)),
        ("application statuses", " → ".join(cell(s) for s in record.statuses) or cell(None)),
        ("information gains", ", ".join(cell(g) for g in record.gains) or cell(None)),
        ("usage", f"{usage.model_calls} model call(s), {usage.tool_calls} tool call(s), "
                  f"{usage.tokens} tokens ({usage.input_tokens} in, {usage.output_tokens} out), "
                  f"{usage.bytes} bytes"),
        ("budget headroom", html.escape(headroom) or cell(None)),
        ("agent steps", cell(record.agent_steps)),
        ("virtual time", f"{seconds(record.started_at)} → {seconds(record.finished_at)} s, "
                         f"deadline at {seconds(record.deadline_at)} s"),
        ("evidence repaired", cell(record.evidence_repaired)),
        ("stop-required delivered", cell(record.stop_required_delivered)),
        ("SSE refused", ", ".join(cell(k) for k in record.sse_refused) or cell(None)),
        ("discarded late results", ", ".join(f"{cell(c)} {cell(n)} at {seconds(t)} s"
                                             for c, n, t in record.discarded) or cell(None)),
        ("error", cell(record.error)),
        ("draft error", cell(record.draft_error)),
    ]


def sse_rows(events: Sequence[SseEvent]) -> list[list[str]]:
    """seq, t, kind, payload of each SSE event."""
    return [[cell(e.seq), seconds(e.t), f"<b>{cell(e.kind)}</b>",
             f"<code>{html.escape(json_text(dict(e.data)))}</code>"] for e in events]


def trace_rows(events: Sequence[TraceEvent]) -> list[list[str]]:
    """seq, t, phase, type, status, detail of each trace event."""
    return [[cell(e.seq), seconds(e.t), cell(e.phase), cell(e.type), _status(e.status.value),
             f"<code>{html.escape(detail_text(e.detail))}</code>"] for e in events]


def invocation_rows(invocations: Sequence[CanonicalInvocation]) -> list[list[str]]:
    """The canonical tool invocations, one row each."""
    return [[cell(i.invocation_id), cell(i.tool), f"<code>{html.escape(json_text(dict(i.scope)))}"
             "</code>", _status(i.status.value), cell(i.evidence_status),
             cell(i.information_gain), cell(i.error_code), cell(i.items), cell(i.size_bytes),
             f"{seconds(i.started_at)} → {seconds(i.finished_at)}"] for i in invocations]


def rejection_rows(rejections: Sequence[ToolRejection]) -> list[list[str]]:
    """The preflight rejections, one row each."""
    return [[seconds(r.t), cell(r.tool), f"<code>{html.escape(json_text(dict(r.scope)))}</code>",
             cell(r.reason), cell(r.message)] for r in rejections]


def _section(title: str, body: str, *, open_: bool, count: int | None = None) -> str:
    if not body:
        return ""
    counted = f" <span class='hl-count'>({count})</span>" if count is not None else ""
    return (f'<details class="hl-section"{" open" if open_ else ""}><summary>'
            f"{html.escape(title)}{counted}</summary>{body}</details>")


def _events_sections(trace: Sequence[TraceEvent], sse: Sequence[SseEvent], *, open_: bool,
                     suffix: str = "") -> list[str]:
    return [
        _section(f"SSE events{suffix}", table(("seq", "t (s)", "kind", "payload"),
                                              sse_rows(sse), cls="hl-sse"),
                 open_=open_, count=len(sse)),
        _section(f"trace{suffix}", table(("seq", "t (s)", "phase", "type", "status", "detail"),
                                         trace_rows(trace), cls="hl-trace"),
                 open_=open_, count=len(trace)),
    ]


def stored_row_table(row: Mapping[str, Any] | None) -> str:
    """The stored ``diagnosis_run`` row, column by column."""
    return kv_grid(((str(k), cell(v)) for k, v in (row or {}).items()), cls="hl-stored")


def record_sections(record: RunRecord, *, open_events: bool = True, timeline: bool = True,
                    axes: bool = True) -> str:
    """The drill-down of a record: axes, timeline, SSE events, trace, tools, stored row."""
    parts = []
    if timeline:
        parts.append(_section("timeline", _record_timeline(record), open_=True))
    if axes:
        parts.append(_section("state axes", kv_grid(axes_rows(record), cls="hl-axes"),
                              open_=True))
        from harness_lab.explanation import explain

        parts.append(_section("why (the troubleshooting questions of doc §15)",
                              explain(record).answers_html(), open_=False))
    parts += _events_sections(record.trace, record.sse_events, open_=open_events)
    parts.append(_section("tool invocations", table(
        ("invocation", "tool", "scope", "status", "evidence", "gain", "error", "items", "bytes",
         "t (s)"), invocation_rows(record.invocations), cls="hl-tools"),
        open_=open_events, count=len(record.invocations)))
    parts.append(_section("preflight rejections", table(
        ("t (s)", "tool", "scope", "reason", "message"), rejection_rows(record.rejections)),
        open_=open_events, count=len(record.rejections)))
    parts.append(_section("stored diagnosis_run row", stored_row_table(record.stored_row),
                          open_=False))
    return "".join(parts)


def run_duration(record: RunRecord) -> str:
    """The run's virtual time as a table cell shows it (``6.7 s``), or ``times contradict``
    when its times contradict each other, what contradicts what in its tooltip."""
    found = time_contradictions(record)
    if found:
        tip = html.escape(f"{TIMES}: {'; '.join(found)}")
        return f'<span title="{tip}">times contradict</span>'
    return html.escape(duration(record.duration_s))


def _record_timeline(record: RunRecord) -> str:
    """The record's timeline drawing, or, when its times contradict each other (a clock bug,
    a tampered copy), what contradicts what instead: such times have no place on an axis."""
    found = time_contradictions(record)
    if found:
        listed = "".join(f"<li>{html.escape(f)}</li>" for f in found)
        return (f'<div class="hl-error">Not drawn: the run\'s times contradict each other '
                f"({TIMES}):<ul>{listed}</ul></div>")
    svg = timeline_svg(TimelineInput(record.trace, record.sse_events, record.invocations,
                                     record.started_at, record.finished_at,
                                     record.deadline_at, record.terminations,
                                     record.termination_reason),
                       title=f"timeline of {record.run_id}")
    return f'<div class="hl-timeline">{svg}</div>'


def result_problems(result: ScenarioResult) -> list[str]:
    """What did not hold, one plain line each: the error, mismatches, broken invariants."""
    lines = []
    if result.error is not None:
        lines.append(f"ERROR: {result.error}")
    lines += [str(m) for m in result.mismatches]
    broken = {v.invariant: v for v in result.violations}
    lines += [f"invariant {name} broken: {broken[name].message}" if name in broken
              else f"invariant {name} broken" for name in result.unexpected]
    lines += [f"invariant {name} expected to break, but held" for name in result.missing]
    return lines


def file_line(path: str | None, line: int | None) -> str | None:
    """``path:line`` as the command line names a place in a scenario file (``path`` alone
    without a line; None without a file)."""
    if path is None:
        return None
    return f"{path}:{line}" if line else path


def result_location(result: ScenarioResult) -> str | None:
    """``file:line`` of what did not hold first (the scenario's own line when it held), as
    ``harness-lab run``'s summary gives it."""
    from harness_lab.runner.results import location

    return file_line(*location(result))


def expectation_location(result: ScenarioResult, field: str) -> str | None:
    """``file:line`` of the expectation ``field`` of ``result``'s scenario."""
    from harness_lab.scenarios.locate import expectation_line

    return file_line(result.path, expectation_line(result.path, result.scenario, field))


def _problems_html(result: ScenarioResult) -> str:
    rows = [[cell(m.field), cell(m.expected), cell(m.observed),
             cell(expectation_location(result, m.field))] for m in result.mismatches]
    parts = []
    if result.error is not None:
        parts.append(f'<pre class="hl-error">{html.escape(result.error)}</pre>')
    if rows:
        parts.append(table(("expectation", "expected", "observed", "where"), rows,
                           cls="hl-diff"))
    broken = [[cell(v.invariant), cell(v.message),
               "expected by the file" if v.invariant not in result.unexpected else "unexpected"]
              for v in result.violations]
    broken += [[cell(n), "held, though the file expects it to break", "missing"]
               for n in result.missing]
    if broken:
        parts.append(table(("invariant", "message", ""), broken, cls="hl-invariants"))
    if not parts:
        return ""
    return _section("what did not hold" if not result.ok else "expected breaks",
                    "".join(parts), open_=True)


def _turns_html(turns: Sequence[RunRecord]) -> str:
    rows = [[cell(i + 1), cell(r.run_id), outcome_badge(r), cell(r.query)]
            for i, r in enumerate(turns)]
    return _section("earlier turns of the session",
                    table(("turn", "run", "outcome", "query"), rows), open_=True,
                    count=len(turns))


def terminal_command(result: ScenarioResult) -> str | None:
    """The command that shows this result's run in a terminal (``harness-lab show``), or
    that checks its file when it did not load; None without a file (a scenario built in
    memory, say)."""
    if result.path is None or not os.path.isfile(result.path):
        return None
    if result.record is None and not result.crashed:
        return shlex.join(["harness-lab", "validate", result.path])
    _, params = variant_parts(result.scenario)
    variant = result.scenario[result.scenario.index("["):] if params else ""
    return shlex.join(["harness-lab", "show", result.path + variant])


def scenario_name_html(name: str) -> str:
    """A scenario's name with a matrix variant's parameters as readable chips."""
    base, params = variant_parts(name)
    chips = "".join(f'<span class="hl-param">{html.escape(p)}</span>' for p in params)
    return f'<span class="hl-name">{html.escape(base)}</span>{chips}'


def result_sections(result: ScenarioResult, *, open_events: bool = True,
                    source: str | None = None) -> str:
    """The drill-down of a scenario result: problems, turns, then its record's sections (or,
    for a crashed run, the SSE events and trace sent before the crash and the stored row),
    and the text of its scenario file when ``source`` gives it (collapsed)."""
    facts = [("file", cell(result.path if result.ok else result_location(result))),
             ("case", cell(result.case)),
             ("tags", cell(", ".join(result.tags) or None))]
    again = terminal_command(result)
    if again:
        facts.append(("in a terminal", f"<code>{html.escape(again)}</code>"))
    if result.description:
        facts.insert(0, ("description", cell(result.description)))
    parts = [kv_grid(facts, cls="hl-facts"), _problems_html(result)]
    if result.turns:
        parts.append(_turns_html(result.turns))
    if result.record is not None:
        parts.append(record_sections(result.record, open_events=open_events))
    elif result.crashed or result.partial_trace or result.partial_sse:
        crash = result.extra.get("crash")
        if crash:
            parts.append(f'<pre class="hl-error">crashed: {html.escape(str(crash))}</pre>')
        svg = timeline_svg(TimelineInput(result.partial_trace, result.partial_sse),
                           title="timeline until the crash")
        parts.append(_section("timeline until the crash",
                              f'<div class="hl-timeline">{svg}</div>' if svg else "",
                              open_=True))
        parts += _events_sections(result.partial_trace, result.partial_sse, open_=open_events,
                                  suffix=" until the crash")
        parts.append(_section("stored diagnosis_run row", stored_row_table(result.stored_row),
                              open_=True))
    if source is not None:
        parts.append(_section("scenario file", f'<pre class="hl-source">{html.escape(source)}'
                              "</pre>", open_=False))
    return "".join(parts)
