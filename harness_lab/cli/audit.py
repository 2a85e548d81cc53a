"""Rebuild each run of SOURCE from its diagnosis_run row, trace events, tool invocations (and SSE
events when the source has them) and check every lifecycle invariant and the §10/§12.2 mappings
on it (docs/logs.md; OTLP JSON traces: docs/otel.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness_lab.audit import PARALLEL_FROM
from harness_lab.audit.tally import AuditTally
from harness_lab.cli.common import add_command, fail, filled, mapping_failure, read_mapping

__all__ = ["register"]

_SHOWN = 20  # violations listed one per line before the rest are only counted


def _cmd_audit(args: argparse.Namespace) -> int:
    from harness_lab.audit import audit_runs, open_source
    from harness_lab.audit.sources import SourceError
    from harness_lab.terminal.progress import progress, progress_wanted

    if args.workers is not None and args.workers < 1:
        return fail("audit", f"--workers {args.workers}: give 1 or more")
    show = progress_wanted(quiet=args.quiet)
    try:
        tally = AuditTally(_orphans(args.source))
        source = open_source(args.source, read_mapping(args.mapping),
                             count=show or args.workers is None)
        with progress(source.total, "runs audited", enabled=show, unit="runs") as advance:
            for run in audit_runs(source, workers=args.workers, advance=advance,
                                  again=tally.again):
                tally.add(run)
    except (SourceError, OSError, ValueError) as exc:
        return mapping_failure("audit", args.mapping, exc)
    if not tally.runs and not args.allow_empty:  # an empty export must not pass a CI gate
        return fail("audit", f"{args.source}: holds no run to audit (--allow-empty accepts "
                             "that)")
    if args.format == "json":
        print(json.dumps(tally.to_dict(str(args.source)), indent=2, ensure_ascii=False))
    else:
        _print(tally)
    if tally.ran_again:  # on standard error in either format, as sweeps say it
        from harness_lab.pool import ran_again

        print(f"note: {ran_again(tally.ran_again, ('batch', 'batches'))}", file=sys.stderr)
    return 0 if tally.ok else 1


def _orphans(source: str) -> set[str]:
    """The runs of a database source left RUNNING by a ``serve`` that is gone."""
    if "://" not in source:
        return set()
    from sqlalchemy.exc import SQLAlchemyError

    from harness_lab.audit.sources import SourceError, read_engine
    from harness_lab.live.instances import orphaned_running

    try:
        engine = read_engine(source)
    except SourceError:  # the source's own reader says what is wrong with it
        return set()
    try:
        return orphaned_running(engine)
    except SQLAlchemyError:
        return set()
    finally:
        engine.dispose()


def _name(run: Any) -> str:
    """A run as its problems name it: its id, and its scenario where the source says."""
    return run.run_id if run.scenario is None else f"{run.run_id} ({run.scenario})"


def _print(tally: AuditTally) -> None:
    """The first :data:`_SHOWN` problems, how many more, the counts and what went unchecked,
    each wrapped to the terminal (a line a problem when the output is not a terminal)."""
    from harness_lab.terminal.console import width_of

    width = max(width_of(sys.stdout), 40)
    problems = (f"{_name(run)}: {problem}" for run in tally.not_clean
                for problem in ([f"unreadable: {run.note}"] if run.state == "unreadable"
                                else []) + [f"{name}: {msg}" for name, msg in run.violations])
    shown = 0
    for line in problems:
        shown += 1
        if shown <= _SHOWN:
            print(filled(line, width, "    "))
    if shown > _SHOWN:
        print(f"... and {shown - _SHOWN} more (--format json lists them all)")
    counts = tally.counts()
    parts = [f"{counts['runs']} run(s): {counts['checked']} checked, "
             f"{counts['incomplete']} incomplete (RUNNING, no RUN_FINISHED)"]
    if counts["orphaned"]:
        parts.append(f"{counts['orphaned']} orphaned (their serve process was lost)")
    if counts["unreadable"]:
        parts.append(f"{counts['unreadable']} unreadable")
    parts.append(f"{counts['runs with violations']} with violations")
    print(filled(", ".join(parts), width, "    "))
    for name, n in sorted(tally.broken.items()):
        print(f"  {name}: {n}")
    if tally.unchecked:
        print(filled("not checked (the source holds no SSE events): "
                     f"{', '.join(sorted(tally.unchecked))}", width, "  "))


def register(sub: Any) -> None:
    """Add ``harness-lab audit``."""
    p = add_command(sub, "audit", __doc__, func=_cmd_audit)
    p.add_argument("source", metavar="SOURCE",
                   help="a run log, a JSON Lines export of rows, OTLP JSON traces (the "
                        "Collector file exporter's format), or a database URL "
                        "(sqlite:///runs.db, postgresql://...)")
    p.add_argument("--mapping", metavar="FILE",
                   help="a JSON or YAML file naming the database's table and columns, or the "
                        "traces' span, event and attribute names, for ours")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, json for tools")
    p.add_argument("--allow-empty", action="store_true",
                   help="a source that holds no run passes (by default it is an error, so an "
                        "empty export does not pass a CI gate)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes that rebuild and check runs (default: one per core for a "
                        f"source of {PARALLEL_FROM:,} runs or more, else none)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
