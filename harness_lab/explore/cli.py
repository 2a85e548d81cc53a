"""The ``explore`` subcommand (registered by harness_lab.cli).

``harness-lab explore SCENARIO`` runs every variant of the base scenario and prints one row
per variant; flagged rows carry ``FLAG`` in the first column, inconclusive ones (the
variant's fault never fired) ``?``. Exit codes: 0 when no variant contradicts SPEC §4 or
breaks an invariant, 1 when one does, 2 for a usage error (a missing or malformed scenario
file, or a base that cannot be explored, such as one that crashes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness_lab.scenarios.faults import FAULT_KINDS

__all__ = ["TABLE_COLUMNS", "register"]

TABLE_COLUMNS = ("flag", "variant", "expected", "run_state", "release_outcome",
                 "fallback_type", "db_status", "contradicts_spec", "violations")
"""The columns the subcommand prints."""


def register(sub: Any) -> None:
    """Add the ``explore`` subcommand to ``sub``."""
    p = sub.add_parser(
        "explore", help="run every fault variant of a scenario and judge it against SPEC §4",
        description="Inject every applicable fault at every boundary, SSE event and time gap "
                    "of a base scenario; flag variants that contradict SPEC §4 or break an "
                    "invariant.")
    p.add_argument("scenario", help="the base scenario file")
    p.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table",
                   help="output format of the rows")
    p.add_argument("--out", help="write the rows to this file")
    p.add_argument("--heatmap", metavar="PNG", help="write the fault x point heatmap here")
    p.add_argument("--write-failures", metavar="DIR",
                   help="write each flagged variant as a runnable scenario file into DIR")
    p.add_argument("--fault", metavar="KIND", action="extend", type=_fault_kinds,
                   help="only these fault kinds, comma-separated or repeated (--fault "
                        "deadline,crash or --fault deadline --fault crash; default: every "
                        f"kind: {', '.join(FAULT_KINDS)})")
    p.add_argument("--workers", type=int, default=1, help="processes to run variants on")
    p.set_defaults(func=_cmd_explore)


def _fault_kinds(text: str) -> list[str]:
    """``deadline,crash`` as a list of known fault kinds (argparse reports an unknown one)."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown fault kind {', '.join(unknown) or repr(text)}; "
            f"choose from {', '.join(FAULT_KINDS)}")
    return kinds


def _cmd_explore(args: argparse.Namespace) -> int:
    from harness_lab.cli import format_rows
    from harness_lab.explore.boundaries import ExplorationError
    from harness_lab.explore.explorer import explore
    from harness_lab.scenarios.loader import ScenarioError

    if not Path(args.scenario).is_file():
        print(f"harness-lab explore: no such file: {args.scenario}", file=sys.stderr)
        return 2
    try:
        result = explore(args.scenario, faults=args.fault, workers=args.workers)
    except (ScenarioError, ExplorationError) as exc:
        print(f"harness-lab explore: {exc}", file=sys.stderr)
        return 2
    rows = []
    for row in result.frame.to_dict("records"):
        row["flag"] = "FLAG" if row["flagged"] else ("?" if row["error"] else "")
        rows.append({k: (None if _missing(v) else v) for k, v in row.items()})
    text = format_rows(rows, TABLE_COLUMNS, args.format)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.heatmap:
        from harness_lab.report.plots import figure_png

        Path(args.heatmap).write_bytes(figure_png(result.heatmap()))
    if args.write_failures:
        written = result.to_scenarios(args.write_failures)
        print(f"wrote {len(written)} flagged variant(s) to {args.write_failures}",
              file=sys.stderr)
    print(result.summary(), file=sys.stderr)
    return 1 if result.flagged else 0


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)
