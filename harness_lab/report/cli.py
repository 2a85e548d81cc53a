"""The ``report`` subcommand: run scenarios and write one self-contained HTML report."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["TITLE", "register"]

TITLE = "harness_lab report"
"""The report's default title."""


def _command(args: argparse.Namespace, paths: list[str]) -> str:
    """The command line of this report, as a user would type it again."""
    words = ["harness-lab", "report", *paths, "--out", args.out]
    for tag in args.tag or ():
        words += ["--tag", tag]
    if args.title != TITLE:
        words += ["--title", args.title]
    if args.plots:
        words.append("--plots")
    return shlex.join(words)


def _cmd_report(args: argparse.Namespace) -> int:
    from harness_lab.cli import EXIT_FAILED, EXIT_USAGE, selected_results
    from harness_lab.logs.sources import logged_results
    from harness_lab.report.html import write_html_report
    from harness_lab.report.viewer import ReportContext, git_commit

    paths = args.paths or ["scenarios"]
    began = time.perf_counter()
    results = logged_results("report", paths, args.tag or ())  # run logs: shown as kept
    if results is None:
        results = selected_results("report", paths, args.tag or (), args.out)
    if isinstance(results, int):
        return results
    elapsed = time.perf_counter() - began
    first = Path(paths[0])
    context = ReportContext(command=_command(args, paths), paths=tuple(paths),
                            elapsed_s=elapsed,
                            commit=git_commit(first if first.is_dir() else first.parent))
    try:
        out = write_html_report(args.out, results, title=args.title, context=context,
                                plots=args.plots)
    except OSError as exc:
        print(f"harness-lab report: cannot write --out {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    failed = len(results.failures())
    runs = sum(r.record is not None for r in results)
    print(f"wrote {out}: {len(results)} scenario(s), {runs} run record(s), {failed} not ok; "
          f"open {out.resolve().as_uri()}")
    return EXIT_FAILED if failed else 0


def register(sub: Any) -> None:
    """Add ``harness-lab report``."""
    from harness_lab.cli import exit_codes

    p = sub.add_parser("report", help="run scenarios and write a self-contained HTML report",
                       epilog=exit_codes("report"))
    p.add_argument("paths", nargs="*", help="files or directories (default: scenarios/), or "
                                            "run logs (harness_logs/*.jsonl) to show as kept")
    p.add_argument("--out", default="report.html",
                   help="the HTML file to write; its directory must exist (otherwise exit 2 "
                        "before anything runs)")
    p.add_argument("--title", default=TITLE, help="the page's title")
    p.add_argument("--tag", action="append", help="only scenarios with this tag")
    p.add_argument("--plots", action="store_true",
                   help="also embed matplotlib figures (outcomes by directory and by tag, the "
                        "timeline of the runs that did not hold) as PNG; about a second each")
    p.set_defaults(func=_cmd_report)
