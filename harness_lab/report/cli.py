"""The ``report`` subcommand: run scenarios and write one self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]


def _cmd_report(args: argparse.Namespace) -> int:
    from harness_lab.report.html import write_html_report
    from harness_lab.scenarios import run_paths

    paths = args.paths or ["scenarios"]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        print(f"harness-lab report: no such file or directory: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    results = run_paths(paths, tags=args.tag or ())
    kept = [r for r in results if r.record is not None]
    records = [r.record for r in kept if r.record is not None]
    out = write_html_report(args.out, records, labels=[r.scenario for r in kept],
                            cases=[r.case for r in kept], title=args.title)
    skipped = len(results) - len(kept)
    print(f"wrote {out}: {len(records)} run(s)"
          + (f", {skipped} scenario(s) without a record (errors or crashes)" if skipped else ""))
    return 0 if all(r.ok for r in results) else 1


def register(sub: Any) -> None:
    """Add ``harness-lab report``."""
    p = sub.add_parser("report", help="run scenarios and write a self-contained HTML report")
    p.add_argument("paths", nargs="*", help="files or directories (default: scenarios/)")
    p.add_argument("--out", default="report.html", help="the HTML file to write")
    p.add_argument("--title", default="harness_lab report")
    p.add_argument("--tag", action="append", help="only scenarios with this tag")
    p.set_defaults(func=_cmd_report)
