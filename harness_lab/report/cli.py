"""The ``report`` subcommand: run scenarios and write one self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def _cmd_report(args: argparse.Namespace) -> int:
    from harness_lab.cli import EXIT_FAILED, EXIT_USAGE, selected_results
    from harness_lab.report.html import write_html_report

    results = selected_results("report", args.paths or ["scenarios"], args.tag or (), args.out)
    if isinstance(results, int):
        return results
    kept = [r for r in results if r.record is not None]
    records = [r.record for r in kept if r.record is not None]
    try:
        out = write_html_report(args.out, records, labels=[r.scenario for r in kept],
                                cases=[r.case for r in kept], title=args.title,
                                expected=[r.expected_text for r in kept],
                                outcomes=results.outcomes(), unrun=results.unrun())
    except OSError as exc:
        print(f"harness-lab report: cannot write --out {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    failed = len(results.failures())
    print(f"wrote {out}: {len(results)} scenario(s), {len(records)} run record(s), "
          f"{failed} not ok")
    return EXIT_FAILED if failed else 0


def register(sub: Any) -> None:
    """Add ``harness-lab report``."""
    from harness_lab.cli import EXIT_CODES

    p = sub.add_parser("report", help="run scenarios and write a self-contained HTML report",
                       epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="files or directories (default: scenarios/)")
    p.add_argument("--out", default="report.html",
                   help="the HTML file to write; its directory must exist (otherwise exit 2 "
                        "before anything runs)")
    p.add_argument("--title", default="harness_lab report")
    p.add_argument("--tag", action="append", help="only scenarios with this tag")
    p.set_defaults(func=_cmd_report)
