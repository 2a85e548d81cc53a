"""``harness-lab calibrate SOURCE``: a ``sweep:`` block fitted from observed runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness_lab.cli.common import HelpFormatter, read_mapping

__all__ = ["register"]


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from harness_lab.audit import finished_records
    from harness_lab.audit.calibrate import calibrate, sweep_yaml
    from harness_lab.audit.sources import SourceError

    if args.out is not None and not Path(args.out).resolve().parent.is_dir():
        print(f"harness-lab calibrate: --out {args.out}: its directory does not exist",
              file=sys.stderr)
        return 2
    try:
        block = calibrate(finished_records(args.source, read_mapping(args.mapping)), args.fit)
    except (SourceError, OSError, ValueError) as exc:
        print(f"harness-lab calibrate: {exc}", file=sys.stderr)
        return 2
    text = sweep_yaml(block, f"fitted by harness-lab calibrate from {args.source} "
                             f"({args.fit}); paste under a scenario's top level")
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"harness-lab calibrate: cannot write --out {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add ``harness-lab calibrate``."""
    p = sub.add_parser(
        "calibrate", help="fit a sweep's latencies and fault rates from stored runs",
        description="Fit the latency of each call kind, the tool and provider error rates "
                    "and the disconnect and cancel instants of the finished runs of SOURCE "
                    "(a run log, a JSON Lines export, a database URL) and print them as a "
                    "sweep: block (docs/logs.md).",
        epilog="exit codes:\n  0    the block was written\n  2    the source cannot be read "
               "or holds no finished run", formatter_class=HelpFormatter)
    p.add_argument("source", metavar="SOURCE", help="a run log, an export or a database URL")
    p.add_argument("--fit", choices=("lognormal", "empirical"), default="lognormal",
                   help="latencies as a lognormal or as 21 empirical quantiles")
    p.add_argument("--mapping", metavar="JSON", help="the database's names (as for audit)")
    p.add_argument("--out", help="write the block to this YAML file")
    p.set_defaults(func=_cmd_calibrate)
