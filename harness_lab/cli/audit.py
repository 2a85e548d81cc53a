"""Rebuild each run of SOURCE from its diagnosis_run row, trace events, tool invocations (and SSE
events when the source has them) and check every lifecycle invariant and the §10/§12.2 mappings
on it (docs/logs.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from harness_lab.cli.common import add_command, fail, read_mapping

__all__ = ["register"]

_SHOWN = 20  # violations listed one per line before the rest are only counted


def _cmd_audit(args: argparse.Namespace) -> int:
    from harness_lab.audit import audit
    from harness_lab.audit.sources import SourceError

    try:
        report = audit(args.source, read_mapping(args.mapping))
    except (SourceError, OSError, ValueError) as exc:
        return fail("audit", str(exc))
    if not report.runs and not args.allow_empty:  # an empty export must not pass a CI gate
        return fail("audit", f"{args.source}: holds no run to audit (--allow-empty accepts "
                             "that)")
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0 if report.ok else 1
    shown = 0
    for run in report.runs:
        problems = ([f"unreadable: {run.note}"] if run.state == "unreadable" else []) + [
            f"{name}: {message}" for name, message in run.violations]
        for problem in problems:
            shown += 1
            if shown <= _SHOWN:
                print(f"{run.run_id}: {problem}")
    if shown > _SHOWN:
        print(f"... and {shown - _SHOWN} more (--format json lists them all)")
    counts = report.counts()
    unchecked = sorted({n for r in report.runs for n in r.unchecked})
    parts = [f"{counts['runs']} run(s): {counts['checked']} checked, "
             f"{counts['incomplete']} incomplete (RUNNING, no RUN_FINISHED)"]
    if counts["unreadable"]:
        parts.append(f"{counts['unreadable']} unreadable")
    parts.append(f"{counts['runs with violations']} with violations")
    print(", ".join(parts))
    broken = {k: v for k, v in counts.items() if k not in (
        "runs", "checked", "incomplete", "unreadable", "runs with violations")}
    for name, n in broken.items():
        print(f"  {name}: {n}")
    if unchecked:
        print(f"not checked (the source holds no SSE events): {', '.join(unchecked)}")
    return 0 if report.ok else 1


def register(sub: Any) -> None:
    """Add ``harness-lab audit``."""
    p = add_command(sub, "audit", __doc__, func=_cmd_audit)
    p.add_argument("source", metavar="SOURCE",
                   help="a run log, a JSON Lines export of rows, or a database URL "
                        "(sqlite:///runs.db, postgresql://...)")
    p.add_argument("--mapping", metavar="JSON",
                   help="a JSON file naming the database's table and columns for ours")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, json for tools")
    p.add_argument("--allow-empty", action="store_true",
                   help="a source that holds no run passes (by default it is an error, so an "
                        "empty export does not pass a CI gate)")
