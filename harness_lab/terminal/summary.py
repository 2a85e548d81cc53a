"""The short summary after a run's table: one line per scenario that did not pass.

Like pytest's "short test summary info": the verdict, the scenario, ``file:line`` of the
expectation that failed, and the first difference, wrapped at the terminal's width (never cut:
what failed is the point of the line); ``verbose`` lists every mismatch under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from harness_lab.terminal.console import console, printable
from harness_lab.terminal.styles import verdict_style

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["print_summary", "summary_lines"]


def summary_lines(results: Sequence[ScenarioResult]) -> list[tuple[str, str]]:
    """``(verdict, rest of the line)`` for each result that is not ok, in order."""
    from harness_lab.runner.results import first_difference, location

    lines = []
    for r in results:
        if r.ok:
            continue
        path, line = location(r)
        where = f"{path}:{line}" if path and line else (path or "<memory>")
        difference = first_difference(r)
        for prefix in (f"{where}: ", f"{path}: "):
            difference = difference.removeprefix(prefix)
        lines.append((r.verdict, printable(f"{r.scenario} ({where}): {difference}")))
    return lines


def print_summary(results: Sequence[ScenarioResult], stream: TextIO,
                  elapsed_s: float | None = None, *, verbose: bool = False) -> None:
    """Print the failures (if any), each with the details of its mismatches (a snapshot's
    diff) and, when ``verbose``, every mismatch and broken invariant on a line of its own,
    then a closing count line to ``stream``."""
    from rich.text import Text

    out = console(stream)
    lines = summary_lines(results)
    failing = [r for r in results if not r.ok]
    if lines:
        out.print(Text("short summary", style="bold"))
        for (verdict, rest), result in zip(lines, failing, strict=True):
            text = Text.assemble((verdict, verdict_style(verdict) or ""), " " + rest)
            out.print(text, overflow="fold")
            if verbose:
                for item in _every_problem(result):
                    out.print(Text("    " + item), overflow="fold")
            for detail in (m.detail for m in result.mismatches if m.detail):
                for line in detail.splitlines():
                    style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
                    out.print(Text("    " + line, style=style), no_wrap=True,
                              overflow="ellipsis", crop=True)
    failed = sum(v == "FAILED" for v, _ in lines)
    errors = sum(v == "ERROR" for v, _ in lines)
    passed = len(results) - len(lines)
    parts = [f"{len(results)} scenario run(s)", f"{passed} ok"]
    if failed:
        parts.append(f"{failed} failed")
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    closing = Text.assemble((", ".join(parts), verdict_style("FAILED" if lines else "ok") or ""))
    if elapsed_s is not None:
        closing.append(f" in {elapsed_s:.2f} s")
    out.print(closing)


def _every_problem(result: ScenarioResult) -> list[str]:
    """Each mismatch, broken invariant and error of ``result``, one line each."""
    items = [str(m) for m in result.mismatches]
    items += [f"invariant {name} broke" for name in result.unexpected]
    items += [f"invariant {name} was expected to break and held" for name in result.missing]
    items += [f"{v.invariant}: {v.message}" for v in result.violations
              if v.invariant in result.unexpected]
    if result.error is not None:
        items.append(f"error: {result.error}")
    return items
