"""Inject every applicable fault at every boundary, SSE event and time gap of each base scenario;
flag variants that contradict SPEC §4 or break an invariant. Given directories, every explorable
file under them is explored on every core; the others are listed with the reason."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness_lab.cli.common import (
    EXIT_USAGE,
    add_command,
    emit,
    fail,
    format_problem,
    format_rows,
    out_problem,
    output_format,
    said,
    usage_problem,
)
from harness_lab.scenarios.faults import FAULT_KINDS

__all__ = ["FILE_COLUMNS", "TABLE_COLUMNS", "register"]

TABLE_COLUMNS = ("flag", "variant", "expected", "run_state", "release_outcome",
                 "fallback_type", "db_status", "contradicts_spec", "violations")
"""The columns the subcommand prints in a terminal table."""

FILE_COLUMNS = (*TABLE_COLUMNS, "error", "note")
"""The columns of ``--format csv``, ``json`` and ``markdown`` and of ``--out``: the table's,
then why a variant is inconclusive (``error``) and what else its run said (``note``)."""


def register(sub: Any) -> None:
    """Add the ``explore`` subcommand to ``sub``."""
    p = add_command(sub, "explore", __doc__, func=_cmd_explore)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="scenario files, FILE[variant] or directories")
    p.add_argument("--format", choices=_FORMATS,
                   help="output format of the rows, by default the --out file's extension's "
                        "(.csv, .json, .md), else table (a table of several bases lists only "
                        "flagged and inconclusive variants; the others list every variant)")
    p.add_argument("--out", metavar="FILE", help="write the rows to this file")
    p.add_argument("--heatmap", metavar="PNG", help="write the fault x point heatmap here")
    p.add_argument("--write-failures", metavar="DIR",
                   help="write each flagged variant as a runnable scenario file into DIR")
    p.add_argument("--fault", metavar="KIND", action="extend", type=_fault_kinds,
                   help="only these fault kinds, comma-separated or repeated (--fault "
                        "deadline,crash or --fault deadline --fault crash; default: every "
                        f"kind: {', '.join(FAULT_KINDS)})")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes to run variants on (default: every core, or this "
                        "process alone below 400 variants)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _fault_kinds(text: str) -> list[str]:
    """``deadline,crash`` as a list of known fault kinds (argparse reports an unknown one)."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown fault kind {', '.join(unknown) or repr(text)}; "
            f"choose from {', '.join(FAULT_KINDS)}")
    return kinds


_FORMATS = ("table", "csv", "json", "markdown")


def _cmd_explore(args: argparse.Namespace) -> int:
    from harness_lab.explore.library import plan_library, run_library
    from harness_lab.scenarios.discovery import SelectionError, Selector, discover
    from harness_lab.terminal.progress import progress, progress_wanted

    if usage_problem("explore", args.paths, args.out):
        return EXIT_USAGE
    if args.format is None and (problem := format_problem("--out", args.out, _FORMATS)):
        return fail("explore", problem)
    fmt = output_format(args.format, args.out)
    if args.workers is not None and args.workers < 1:
        return fail("explore", f"--workers {args.workers}: give 1 or more")
    if args.heatmap and (problem := out_problem("--heatmap", args.heatmap)):
        return fail("explore", problem)
    show = progress_wanted(quiet=args.quiet)
    try:
        files = len(discover([Selector.parse(p).path for p in args.paths]))
        with progress(files, "recording bases", enabled=show) as advance:
            plan = plan_library(args.paths, faults=args.fault, advance=advance)
    except SelectionError as exc:
        return fail("explore", str(exc))
    for left in plan.unexplored:
        _note(left)
    if not plan.bases:
        return fail("explore", f"nothing under {', '.join(args.paths)} can be explored")
    with progress(plan.variant_count, "variants", enabled=show) as advance:
        library = run_library(plan, workers=args.workers, advance=advance)
    result = library.result
    findings = result.findings
    several = len(result.bases) > 1
    if fmt == "table" and several and not args.out:
        findings = [f for f in findings if f.flagged or f.inconclusive]
    rows = [_row(f.row()) for f in findings]
    if fmt == "table" and not args.out:
        if rows:
            from harness_lab.terminal import styles
            from harness_lab.terminal.tables import Column, print_table

            for row in rows:  # the terminal's short forms: the case names its row
                row["contradicts_spec"] = "yes" if row["contradicts_spec"] else "-"
                row["expected"] = row.get("case") or row["expected"]
                if not several:  # one base: its name, the same on every row, gives way
                    row["variant"] = "@" + row["variant"].partition("@")[2]
            print_table(rows, [Column(c, _HEADERS.get(c, c), name=c == "variant",
                                      style=_style(c), optional=c in _OPTIONAL,
                                      row_style=styles.release_style
                                      if c == "release_outcome" else None)
                               for c in TABLE_COLUMNS])
    elif emit("explore", format_rows(rows, FILE_COLUMNS, fmt), args.out):
        return EXIT_USAGE
    if args.heatmap:
        from harness_lab.atomic import write_atomically
        from harness_lab.report.plots import exploration_heatmap, figure_png

        try:
            write_atomically(args.heatmap, figure_png(exploration_heatmap(result)))
        except OSError as exc:
            return fail("explore", f"cannot write --heatmap {args.heatmap}: "
                                   f"{exc.strerror or exc}", EXIT_USAGE)
    if args.write_failures:
        written = result.to_scenarios(args.write_failures)
        print(f"wrote {len(written)} flagged variant(s) to {args.write_failures}",
              file=sys.stderr)
    # the library's summary says more: the files, and what a worker that died cost
    said(library.summary() if several or plan.unexplored or library.not_run
         or library.ran_again else result.summary())
    return 1 if result.flagged or library.not_run else 0


_HEADERS = {"flag": "", "run_state": "run", "release_outcome": "release",
            "fallback_type": "fallback", "db_status": "db", "contradicts_spec": "spec",
            "violations": "broken"}
"""Short headers of the terminal table, so the variant names get the width."""

_OPTIONAL = ("expected", "run_state", "db_status")
"""The columns a narrow terminal leaves out, in the table's order, to give the variant names
room (a last line names them; the JSON rows have every column): the release outcome and
fallback type, which say what the user got, stay."""


def _style(column: str) -> Any:
    """The colour function of a state column (none for the others)."""
    from harness_lab.terminal import styles

    def flag_style(flag: str) -> str | None:
        """``FLAG`` in the FAILED verdict's colour, ``?`` (inconclusive) in the ERROR one's."""
        return styles.verdict_style({"FLAG": "FAILED", "?": "ERROR"}.get(flag, ""))

    return {"run_state": styles.state_style, "db_status": styles.state_style,
            "release_outcome": styles.outcome_style, "fallback_type": styles.fallback_style,
            "flag": flag_style}.get(column)


def _note(left: Any) -> None:
    """One line on standard error for a file or scenario that could not be explored, whole:
    cut to the terminal's width, a long path would leave no room for the reason."""
    what = left.path if left.scenario is None else f"{left.path} [{left.scenario}]"
    said(f"not explored: {what}: {left.reason.splitlines()[0] if left.reason else ''}")


def _row(row: dict[str, Any]) -> dict[str, Any]:
    # flagged rows carry FLAG, inconclusive ones (the variant's fault never fired) "?"
    row["flag"] = "FLAG" if row["flagged"] else ("?" if row["error"] else "")
    from harness_lab.report.cells import is_missing

    return {k: (None if is_missing(v) else v) for k, v in row.items()}
