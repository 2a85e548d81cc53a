"""List the scenarios whose outcome, states, SSE events, trace or stored row changed, new failures,
new passes, added and removed scenarios. A scenario regressed when it was ok and is not, or when
its outcome changed while its scenario file did not (docs/logs.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness_lab.cli.common import add_command, fail, selected_results

__all__ = ["register"]


def _columns() -> list[Any]:
    from harness_lab.terminal.styles import verdict_style
    from harness_lab.terminal.tables import Column

    def change_style(value: str) -> str | None:
        return verdict_style("FAILED" if value in ("regressed", "new failure") else
                             "ok" if value == "new pass" else "")

    return [Column("scenario", "scenario", name=True),
            Column("change", "change", style=change_style),
            Column("old", "was", style=verdict_style), Column("new", "now", style=verdict_style),
            Column("aspects", "what changed", optional=True)]  # the lines below say it too


def _print_changes(rows: list[dict[str, Any]]) -> None:
    """The table (one line per scenario), then each scenario's differences, wrapped."""
    import textwrap

    from harness_lab.terminal.console import width_of
    from harness_lab.terminal.tables import print_table

    print_table(rows, _columns(), sys.stdout)
    width = max(width_of(sys.stdout), 40)
    detailed = [r for r in rows if r["detail"] and r["change"] not in ("removed", "added")]
    if detailed:
        print()
    for r in detailed:
        print(textwrap.fill(f"{r['scenario']}: {r['detail']}", width,
                            subsequent_indent="    "))


def _cmd_diff(args: argparse.Namespace) -> int:
    from harness_lab.logs.diff import diff_logs
    from harness_lab.logs.reader import LogError
    from harness_lab.logs.sources import read_noted

    if (args.new is None) == (args.run is None):
        which = "neither was given" if args.new is None else "not both"
        return fail("diff", f"give NEW (a second log) or --run PATHS (a fresh run); {which}")
    try:
        old = read_noted(args.old)
        new: Any
        if args.new is not None:
            new = read_noted(args.new)
        else:
            new = _fresh(args)
            if isinstance(new, int):
                return new
    except LogError as exc:
        return fail("diff", str(exc))
    diff = diff_logs(old, new)
    if args.format == "json":
        print(json.dumps(diff.to_dict(unchanged=args.all), indent=2, ensure_ascii=False))
    else:
        rows = [c.row() for c in diff.changes if args.all or c.change != "unchanged"]
        if rows:
            _print_changes(rows)
        print(diff.summary())
    return 1 if diff.regressed else 0


def _fresh(args: argparse.Namespace) -> Any:
    from harness_lab.logs.options import run_log

    log = run_log("diff", args)
    if isinstance(log, int):
        return log
    results = selected_results("diff", args.run, args.tag or (), None,
                               on_result=log.add if log else None)
    if log is not None:
        log.close(sys.stderr)
    return results


def register(sub: Any) -> None:
    """Add ``harness-lab diff``."""
    from harness_lab.logs.options import add_log_options

    p = add_command(sub, "diff", __doc__, func=_cmd_diff)
    p.add_argument("old", metavar="OLD", help="the earlier run log (*.jsonl)")
    p.add_argument("new", metavar="NEW", nargs="?", help="the later run log")
    p.add_argument("--run", nargs="+", metavar="PATH",
                   help="run these scenario files or directories now and compare them")
    p.add_argument("--tag", action="append", help="with --run: only scenarios with this tag")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table for people, json for tools")
    p.add_argument("--all", action="store_true", help="list unchanged scenarios too")
    add_log_options(p)
