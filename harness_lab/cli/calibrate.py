"""Fit the latency of each call kind, the tool and provider error rates and the disconnect and
cancel instants of the finished runs of SOURCE (a run log, a JSON Lines export, OTLP JSON, a
database URL) and print them as a sweep: block (docs/logs.md)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from harness_lab.cli.common import (
    add_command,
    emit,
    fail,
    format_problem,
    mapping_failure,
    out_problem,
    read_mapping,
    said,
)

if TYPE_CHECKING:
    from harness_lab.audit import AuditedRun

__all__ = ["register"]

_SHOWN = 20  # runs left out named one per line (of each kind) before the rest are counted


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from harness_lab.audit import Source, counted, finished_records, open_source
    from harness_lab.audit.calibrate import fitted, observe, sweep_yaml
    from harness_lab.audit.sources import SourceError
    from harness_lab.terminal.progress import progress, progress_wanted

    if args.out is not None and (problem := out_problem("--out", args.out)
                                 or format_problem("--out", args.out, ("yaml",))):
        return fail("calibrate", problem)
    show = progress_wanted(quiet=args.quiet)
    left_out: list[AuditedRun] = []
    try:
        source = open_source(args.source, read_mapping(args.mapping), count=show)
        with progress(source.total, "runs read", enabled=show, unit="runs") as advance:
            runs = Source(source.total, counted(source.runs, advance), source.rows_only)
            obs = observe(finished_records(runs, left_out=left_out))
        block = fitted(obs, args.fit)
    except (SourceError, OSError, ValueError) as exc:
        return mapping_failure("calibrate", args.mapping, exc)
    note = f"fitted by harness-lab calibrate from {args.source} ({args.fit})"
    if left_out or obs.contradicting:
        note += f"; {_left_out(left_out, obs.contradicting)}"
    note += "; paste under a scenario's top level"
    quantiled = [kind for kind, fit in block["latency"].items() if "empirical" in fit]
    if args.fit == "lognormal" and quantiled:  # fit_distribution's rule for zero latencies
        note += (f"\n{', '.join(quantiled)}: quantiles, not a lognormal: some of these calls "
                 "took no time, which no lognormal has")
    text = sweep_yaml(block, note)
    code = emit("calibrate", text, args.out)
    if args.out and not code:
        print(f"wrote {args.out}", file=sys.stderr)
    return code


def _left_out(runs: list[AuditedRun], contradicting: list[tuple[str, str]]) -> str:
    """Say on standard error why each unreadable run and each run whose times contradict
    each other (the first few of each) was left out of the fit, and return how many runs
    were left out, by state, for the block's comment."""
    unreadable = [(r.run_id, f"unreadable: {r.note}") for r in runs if r.state == "unreadable"]
    timed = [(run_id, f"times_consistent: {found}") for run_id, found in contradicting]
    for kind, left in (("unreadable", unreadable), ("contradicting", timed)):
        for run_id, why in left[:_SHOWN]:
            said(f"harness-lab calibrate: left out {run_id}: {why}")
        if len(left) > _SHOWN:
            said(f"harness-lab calibrate: ... and {len(left) - _SHOWN:,} more {kind} run(s) "
                 "left out")
    counts = Counter(r.state for r in runs)
    if contradicting:
        counts["whose times contradict"] = len(contradicting)
    return "left out: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def register(sub: Any) -> None:
    """Add ``harness-lab calibrate``."""
    p = add_command(sub, "calibrate", __doc__, func=_cmd_calibrate)
    p.add_argument("source", metavar="SOURCE",
                   help="a run log, an export, OTLP JSON or a database URL")
    p.add_argument("--fit", choices=("lognormal", "empirical"), default="lognormal",
                   help="latencies as a lognormal or as 21 empirical quantiles")
    p.add_argument("--mapping", metavar="FILE",
                   help="the database's or the traces' names (as for audit)")
    p.add_argument("--out", metavar="FILE", help="write the block to this YAML file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
