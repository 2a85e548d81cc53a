"""The ``report`` subcommand: run scenarios and write one self-contained HTML report."""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.cli.common import (
    DEFAULT_PATHS,
    EXIT_FAILED,
    add_command,
    fail,
    format_problem,
    said,
    selected_results,
)

if TYPE_CHECKING:
    from harness_lab.logs.reader import Log

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
    if args.compare:
        words += ["--compare", args.compare]
    return shlex.join(words)


def _rechecked(results: Any) -> Any:
    """Logged ``results`` with their invariants checked again, saying on stderr how many
    records now break one their log did not record (the report shows them FAILED)."""
    from harness_lab.runner.results import ResultSet

    again = ResultSet(r.rechecked() for r in results)
    changed = [new.scenario for old, new in zip(results, again, strict=True) if new is not old]
    if changed:
        names = ", ".join(changed[:3]) + (f" and {len(changed) - 3:,} more"
                                          if len(changed) > 3 else "")
        said(f"harness-lab report: {len(changed):,} logged run(s) now break invariants their "
             f"log did not record ({names}): shown as checked now (the log edited since, or "
             "written before the check)")
    return again


def _cmd_report(args: argparse.Namespace) -> int:
    from harness_lab.logs.sources import read_logs
    from harness_lab.report.html import write_html_report
    from harness_lab.report.viewer import ReportContext, git_commit

    paths = args.paths or list(DEFAULT_PATHS)
    if problem := format_problem("--out", args.out, ("html",)):
        return fail("report", problem)
    old = _old_log(args.compare) if args.compare else None  # before anything runs
    if isinstance(old, int):
        return old
    began = time.perf_counter()
    logged = read_logs("report", paths, args.tag or ())  # run logs: shown as kept
    if isinstance(logged, int):
        return logged
    elapsed: float | None
    if logged is not None:
        results, logs = logged
        results = _rechecked(results)
        walls = [log.wall_s for log in logs]  # how long the logged runs took, not the reading
        elapsed = None if None in walls else sum(w for w in walls if w is not None)
    else:
        selected = selected_results("report", paths, args.tag or (), args.out)
        if isinstance(selected, int):
            return selected
        results, elapsed = selected, time.perf_counter() - began
    comparison = None
    if old is not None:  # by the hashes the logs kept when the results came from logs
        from harness_lab.report.compare import compare_with

        comparison = compare_with(old, results if logged is None else logs, tags=args.tag or ())
    first = Path(paths[0])
    context = ReportContext(command=_command(args, paths), paths=tuple(paths),
                            elapsed_s=elapsed,
                            commit=git_commit(first if first.is_dir() else first.parent,
                                              short=True))
    try:
        out = write_html_report(args.out, results, title=args.title, context=context,
                                plots=args.plots, compare=comparison)
    except OSError as exc:
        return fail("report", f"cannot write --out {args.out}: {exc.strerror or exc}")
    failed = len(results.failures())
    runs = sum(r.record is not None for r in results)
    print(f"wrote {out}: {len(results)} scenario(s), {runs} run record(s), {failed} not ok; "
          f"open {out.resolve().as_uri()}")
    if comparison is not None:
        counts = comparison.counts()
        told = ", ".join(f"{n} {kind}" for kind, n in counts.items()
                         if n and kind != "unchanged") or "no change"
        print(f"compared with {comparison.old.path}: {told}")
    return EXIT_FAILED if failed else 0


def _old_log(path: str) -> Log | int:
    """The ``--compare`` log, or 2 (the one-line error printed) when it is not a readable
    run log."""
    from harness_lab.logs.reader import LogError
    from harness_lab.logs.sources import read_noted

    try:
        return read_noted(path)
    except LogError as exc:
        return fail("report", f"--compare: {exc}")


def register(sub: Any) -> None:
    """Add ``harness-lab report``."""
    p = add_command(sub, "report", func=_cmd_report)
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
    p.add_argument("--compare", metavar="OLD_LOG",
                   help="compare with an earlier run log: its date, commit and command and "
                        "the diff's counts in the header, each scenario's change (regressed, "
                        "newly passing, ...) and differences, a change filter (as "
                        "harness-lab diff classifies them; docs/logs.md)")
