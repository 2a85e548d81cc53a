"""The "compared with" view's markup: the header block, the change filter, a scenario's
differences in its drill-down and the section of removed scenarios.

What each scenario's change is comes from the diff (:class:`harness_lab.report.compare.
Comparison`); nothing here classifies.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from harness_lab.logs.diff import KINDS
from harness_lab.report.compare import (
    ANY,
    CHANGE_COLORS,
    CHANGE_LABELS,
    REGRESSION,
    change_badge,
    change_filter,
)
from harness_lab.report.palette import text_color
from harness_lab.report.run_html import kv_table, result_outcome, table, verdict_badge

if TYPE_CHECKING:
    from harness_lab.logs.diff import ScenarioChange
    from harness_lab.report.compare import Comparison
    from harness_lab.runner.run import ScenarioResult

__all__ = ["HEADER_KINDS", "change_select", "compared_header", "compared_section",
           "removed_section"]

HEADER_KINDS: Final = tuple(k for k in KINDS if k != "unchanged")
"""The kinds of change the header counts, most serious first."""

_ASPECT_NAMES: Final = {"verdict": "verdict", "outcome": "outcome", "states": "state axes",
                        "sse": "SSE events", "trace": "trace", "stored_row": "stored row",
                        "file": "scenario file"}


def change_select(changes: Sequence[ScenarioChange | None]) -> str:
    """The ``change`` filter: all, any change, regressions, then each kind present, with
    how many rows each keeps."""
    counts: Counter[str] = Counter(v for c in changes for v in change_filter(c))
    options = [(ANY, "changed (any)"), (REGRESSION, "regressions (all)")]
    options += [(kind, CHANGE_LABELS[kind]) for kind in KINDS]
    shown = "".join(f'<option value="{html.escape(value)}">{html.escape(label)} '
                    f"({counts[value]})</option>" for value, label in options if counts[value])
    return ('<label>change <select data-filter="change" title="how each scenario changed '
            f'since the earlier run"><option value="">all</option>{shown}</select></label>')


def compared_header(comparison: Comparison) -> str:
    """The header block: the earlier run (log, date, version, commit, command) and the
    diff's counts, each a button that filters the table to that kind."""
    facts = comparison.facts()
    log = html.escape(facts[0][1])
    command = next((text for name, text in facts if name == "command"), None)
    meta = " · ".join(html.escape(f"commit {text}" if name == "commit" else text)
                      for name, text in facts[1:] if name != "command")
    counts = comparison.counts()
    chips = []
    for kind in HEADER_KINDS:
        color = CHANGE_COLORS[kind]
        n = counts[kind]
        style = f"background:{color};color:{text_color(color)}" if n else ""
        target = ' data-target="removed"' if kind == "removed" else ""
        chips.append(f'<button type="button" class="change-total" data-change="{kind}"'
                     f'{target} style="{style}"{"" if n else " disabled"}>{n} '
                     f"{html.escape(CHANGE_LABELS[kind])}</button>")
    verdict = ("<b class='cmp-bad'>regressed</b>" if comparison.diff.regressed
               else "<b class='cmp-good'>nothing regressed</b>")
    line = f"{verdict} · {html.escape(comparison.diff.summary())}"
    return (f'<div class="compared" id="compared"><div class="cmp-title">compared with '
            f"<code>{log}</code></div>"
            + (f'<div class="meta">{meta}</div>' if meta else "")
            + (f'<div class="command"><code>{html.escape(command)}</code></div>'
               if command else "")
            + f'<div class="cmp-line">{line}</div>'
            f'<div class="totals changes">{"".join(chips)}</div></div>')


def compared_section(comparison: Comparison | None, change: ScenarioChange | None,
                     result: ScenarioResult) -> str:
    """A drill-down's first section: how the scenario changed and each difference the diff
    reports, open unless nothing changed (empty without a comparison)."""
    if comparison is None:
        return ""
    if change is None:
        body = "<p class='sub'>not compared: the earlier run did not have this scenario</p>"
    elif change.change == "unchanged":
        body = ("<p class='sub'>unchanged: the outcome, states, SSE events, trace, stored row "
                "and scenario file are as in the earlier run</p>")
    else:
        old = comparison.old_result(change.scenario)
        was = verdict_badge(old.verdict) if old is not None else "<span class='sub'>absent</span>"
        head = (f'<div class="cmp-head">{change_badge(change)} was {was} · now '
                f"{verdict_badge(result.verdict)}</div>")
        moved = comparison.outcome_change(change, result)
        if moved:
            head += f'<div class="changed-outcome">{html.escape(moved)}</div>'
        items = [(_ASPECT_NAMES.get(aspect, aspect), html.escape(text))
                 for aspect, text in change.differences]
        if not items and change.detail:
            items = [("change", html.escape(change.detail))]
        body = head + kv_table(items, cls="hl-differences")
    changed = change is None or change.change != "unchanged"
    return (f'<details class="hl-section hl-compared"{" open" if changed else ""}><summary>'
            f"compared with the earlier run</summary>{body}</details>")


def removed_section(comparison: Comparison) -> str:
    """The scenarios only the earlier run had: name, verdict and outcome then, file."""
    removed = comparison.removed
    if not removed:
        return ""
    rows = []
    for change in removed:
        old = comparison.old_result(change.scenario)
        verdict = verdict_badge(old.verdict) if old is not None else ""
        outcome = html.escape(result_outcome(old) or "–") if old is not None else "–"
        where = html.escape(old.path) if old is not None and old.path else "–"
        rows.append([html.escape(change.scenario), verdict, outcome,
                     f"<span class='sub'>{where}</span>"])
    grid = table(("scenario", "verdict then", "outcome then", "file"), rows, cls="removed",
                 row_attrs=[f' data-scenario="{html.escape(c.scenario, quote=True)}"'
                            for c in removed])
    return (f'<section id="removed"><h2>Removed since the earlier run ({len(removed)})</h2>'
            f'<p class="sub">in the earlier log, not in this run</p>{grid}</section>')
