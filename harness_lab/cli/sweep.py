"""The ``sweep`` subcommand."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness_lab.cli.common import (
    EXIT_USAGE,
    add_command,
    fail,
    filled,
    format_problem,
    format_rows,
    otlp_option,
    otlp_send,
    out_problem,
    said,
    usage_problem,
)
from harness_lab.terminal.console import printable

__all__ = ["register"]


def _pairs(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` arguments as a mapping, each value read as YAML (SweepError if not)."""
    from harness_lab.errors import SweepError

    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SweepError(f"expected KEY=VALUE, got {item!r}")
        try:
            out[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
            raise SweepError(f"{key}={value!r}: the value is not YAML ({problem})") from exc
    return out


def _whole(text: str) -> int:
    """An option's whole number; a usage error naming the option otherwise."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _at_least(floor: int) -> Callable[[str], int]:
    """The argparse ``type`` of a whole number of at least ``floor``."""

    def whole(text: str) -> int:
        value = _whole(text)
        if value < floor:
            raise argparse.ArgumentTypeError(f"must be at least {floor}, got {value}")
        return value

    return whole


def _workers(text: str) -> int:
    value = _whole(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (1: one process; -1: every core)")
    return value


def _cmd_sweep(args: argparse.Namespace) -> int:
    from harness_lab.errors import SweepError
    from harness_lab.scenarios import ScenarioError
    from harness_lab.sweep.engine import Sweep
    from harness_lab.terminal.progress import progress_wanted

    if usage_problem("sweep", [args.file], None):
        return EXIT_USAGE
    otlp = otlp_option("sweep", args.otlp)
    if isinstance(otlp, int):
        return otlp
    try:
        sweep = Sweep.from_file(args.file, samples=args.samples, seed=args.seed,
                                workers=args.workers, check_invariants=not args.no_invariants,
                                store_url=args.persist, commit_every=args.commit_every,
                                scheduler=args.scheduler, resume=args.resume,
                                progress=args.progress or progress_wanted(quiet=args.quiet),
                                overrides=_pairs(args.set),
                                keep_failures=args.keep_failures, keep_every=args.keep_every)
        problem = _argument_problem(args, sweep)
        if problem is not None:
            raise SweepError(problem)
        if args.load:
            return _load(args, sweep)
        note = sweep.worker_note()
        if note is not None:
            said(f"note: {note}")
        if args.compare is not None or args.against is not None:
            return _compare(args, sweep)
        return _sweep(args, sweep, otlp)
    except ScenarioError as exc:
        said(printable(str(exc)))
        return EXIT_USAGE
    except SweepError as exc:
        return fail("sweep", str(exc))


def _print_summary(summary: dict[str, Any]) -> None:
    """The sweep's ``key=value`` summary on standard error, wrapped to its width between
    pairs (never inside one)."""
    from harness_lab.terminal.console import width_of

    pairs = "  ".join(f"{k}={v}" for k, v in summary.items())
    print(filled(pairs, width_of(sys.stderr)), file=sys.stderr)


def _argument_problem(args: argparse.Namespace, sweep: Any) -> str | None:
    """What is wrong with the table and plot arguments, found before any sample runs."""
    from harness_lab.report.frames import AXIS_DTYPES
    from harness_lab.sweep.chunk import OUTCOME_COLUMNS

    for flag in ("out", "records_out", "plot"):
        path = getattr(args, flag)
        problem = _output_problem(f"--{flag.replace('_', '-')}", path) if path else None
        if problem is not None:
            return problem
    if problem := format_problem("--out", args.out, ("csv", "json")):
        return problem
    if problem := format_problem("--records-out", args.records_out, ("json",)):
        return problem
    paths = [os.path.realpath(p) for p in (args.out, args.records_out, args.plot) if p]
    if len(set(paths)) < len(paths):
        return "--out, --records-out and --plot must name different files"
    inputs = {os.path.realpath(args.file): f"the scenario file {args.file}"}
    database = _database_file(args.persist)
    if database is not None:
        inputs[os.path.realpath(database)] = f"the --persist database {database}"
    for path in paths:
        if path in inputs:
            return f"an output would overwrite {inputs[path]}; write it to another file"
    columns = [c for c in OUTCOME_COLUMNS if c not in ("grid", "sample")]
    if args.column not in columns:
        return f"--column {args.column!r} is not an outcome column; choose from {columns}"
    if args.otlp and (args.load or args.compare is not None or args.against is not None):
        return "--otlp sends the runs a sweep keeps; --compare and --load keep none"
    if args.otlp and not args.keep_every:
        return ("--otlp sends the runs the sweep keeps whole: give --keep-every K too (every "
                "K-th sample of each grid point)")
    if args.plot and not args.value:
        return "--plot needs --value, the outcome value to plot (e.g. --value TIMED_OUT)"
    if args.plot and not sweep.axes():
        return "--plot needs a grid (sweep.grid) with a key no --set overrides"
    dtype = AXIS_DTYPES.get(args.column)
    if args.value and dtype is not None:
        known = [*map(str, dtype.categories), "ERROR"]
        if args.value not in known:
            return f"--value {args.value!r} is not a value of {args.column}; choose from {known}"
    return None


def _database_file(url: str | None) -> str | None:
    """The SQLite file ``--persist`` names, if it names one."""
    if not url:
        return None
    from harness_lab.store.errors import StoreError
    from harness_lab.store.target import parse_url, sqlite_path

    try:
        path = sqlite_path(parse_url(url))
    except StoreError:  # refused with its reason when the sweep opens it
        return None
    return None if path is None else str(path)


def _output_problem(flag: str, path: str) -> str | None:
    """Why ``path`` cannot be written as the output of ``flag``, or None: checked before any
    sample runs, so a sweep never plays every sample and then fails to write."""
    target = Path(path)
    problem = out_problem(flag, path)
    if problem is not None:
        return problem
    if target.exists() and not target.is_file():
        return f"{flag} {path} is not a regular file"
    if not os.access(target if target.exists() else target.parent, os.W_OK):
        return f"{flag} {path} cannot be written (permission denied)"
    return None


def _sweep(args: argparse.Namespace, sweep: Any, otlp: str | None) -> int:
    import time

    from harness_lab.logs.sweep_log import log_sweep, sweep_log

    log = sweep_log(args)
    if isinstance(log, int):
        return log
    started_at = time.time()
    result = sweep.run()
    written = _write_outputs(args, result)
    log_sweep(log, args, result)
    _print_summary(result.summary())
    if result.ran_again:
        from harness_lab.pool import ran_again

        said(f"note: {ran_again(result.ran_again)}")
    if result.replayed:
        said(f"resumed: {result.replayed:,} samples were already stored (played again for "
             "this result, not written); the others were run and stored")
    shares = result.shares(args.column, by=result.axes)
    if args.format in ("table", "markdown"):  # for people: no zero-count category rows
        shares = shares[shares["count"] > 0]
    print(format_rows(shares.to_dict("records"), list(shares.columns), args.format), end="")
    if args.plot and written:
        written = _plot(args, result)
    for failure in result.failures[:5]:
        said(f"failure: {failure}")
    incomplete = _incomplete(args, result)
    exported = _export_kept(result, otlp, started_at) if otlp else 0
    if result.interrupted:
        return 130
    return 1 if incomplete or not written or exported else 0


def _export_kept(result: Any, url: str, epoch: float) -> int:
    """Send the runs the sweep kept whole (``--keep-every``; a kept sample that crashed has
    no record) to ``url``, one trace each, virtual second 0 of each at ``epoch``."""
    from harness_lab.logs.codec import record_from_data

    runs = [(result.scenario, record_from_data(kept)) for kept in result.kept
            if "trace" in kept]
    return otlp_send("sweep", runs, url, epoch)


def _incomplete(args: argparse.Namespace, result: Any) -> bool:
    """Say what the sweep lost, did not store or did not report; True when anything."""
    if result.lost:
        cause = str(result.cause).strip().splitlines()
        said(f"incomplete: {result.lost:,} of {result.samples:,} samples lost "
             f"({cause[0] if cause else 'unknown cause'})")
    if result.unstored:
        said(f"incomplete: {result.unstored:,} of {result.samples:,} runs were not stored "
             "(their error names the store's reason)")
    if result.unreported:
        shown = ", ".join(result.unreported[:5]) + (", ..." if len(result.unreported) > 5
                                                    else "")
        said(f"note: the database holds {len(result.unreported):,} completed runs this "
             f"result does not count ({shown}); --resume completes the sweep")
    elif result.unreadable:
        said(f"note: the database could not be read back to find the runs it holds that "
             f"this result does not count ({result.unreadable}); --resume completes the "
             "sweep")
    elif result.interrupted and args.persist:
        said("note: --resume completes the sweep, running only the samples not stored")
    return bool(result.lost or result.unstored)


def _write_outputs(args: argparse.Namespace, result: Any) -> bool:
    """Write the sample rows and kept records first: nothing after them can lose them.

    A write that fails anyway (the disk full) is said, and the sweep exits 1.
    """
    import json

    from harness_lab.atomic import replacing

    json_out = Path(args.out or "").suffix.lower() == ".json"
    writers = {"--out": (args.out, lambda fh: result.frame.to_json(fh, orient="records")
                         if json_out else result.frame.to_csv(fh, index=False)),
               "--records-out": (args.records_out, lambda fh: json.dump(
                   {"failures": result.failures, "kept": result.kept}, fh, indent=1,
                   default=str))}
    written = True
    for flag, (path, write) in writers.items():
        if not path:
            continue
        try:
            with replacing(path) as fh:
                write(fh)
        except OSError as exc:  # said; the other output is still written
            fail("sweep", f"could not write {flag} {path}: {exc.strerror or exc}")
            written = False
    return written


def _plot(args: argparse.Namespace, result: Any) -> bool:
    from harness_lab.atomic import write_atomically
    from harness_lab.report.plots import figure_png, sweep_share

    ax = sweep_share(result, result.axes[0], args.value, args.column)
    try:
        write_atomically(args.plot, figure_png(ax))
    except OSError as exc:
        fail("sweep", f"could not write {args.plot}: {exc.strerror or exc}")
        return False
    others = result.axes[1:]
    print(f"plot: {args.column}={args.value} against {result.axes[0]}"
          + (f", one line per value of {', '.join(others)}" if others else ""), file=sys.stderr)
    return True


def _compare(args: argparse.Namespace, sweep: Any) -> int:
    from harness_lab.sweep.compare import compare_policies

    table, ra, rb = compare_policies(sweep, _pairs(args.compare), _pairs(args.against))
    paired = int(table["n"].iloc[0]) if len(table) else 0
    if ra.interrupted or rb.interrupted:
        fail("sweep", f"comparison interrupted (A: {ra.samples} samples, B: {rb.samples}); "
                      f"{paired} samples were completed under both policies")
        if not paired:
            return 130
    print(f"A: {args.compare or []}  B: {args.against or []}  "
          f"({paired} samples each, seed {args.seed})")
    print(format_rows(table.to_dict("records"), list(table.columns), args.format), end="")
    return 130 if ra.interrupted or rb.interrupted else 0


def _load(args: argparse.Namespace, sweep: Any) -> int:
    import pandas as pd

    from harness_lab.sweep.load import load_curve, run_load
    from harness_lab.sweep.spec import LoadSpec

    raw = (sweep.data.get("sweep") or {}).get("load")
    if not raw:
        return fail("sweep --load", "the scenario has no sweep.load block")
    sweep.validate()
    block = LoadSpec.model_validate(raw)
    axes = sweep.axes()
    curves = []
    for point in sweep.points():
        for capacity in block.capacities():
            points = [run_load(sweep.data, rate, capacity=capacity,
                               duration_s=block.duration_s, seed=args.seed, overrides=point)
                      for rate in block.arrival_rate]
            curve = load_curve(points)
            curve.insert(0, "capacity", ",".join(f"{k}={v}" for k, v in
                                                 sorted(capacity.items())) or "unlimited")
            for i, key in enumerate(axes):
                curve.insert(i, key, str(point[key]))
            curves.append(curve)
    curve = pd.concat(curves, ignore_index=True)
    print(format_rows(curve.to_dict("records"), list(curve.columns), args.format), end="")
    return 0


def register(sub: Any) -> None:
    """Add ``harness-lab sweep``."""
    p = add_command(sub, "sweep", func=_cmd_sweep)
    p.add_argument("file", help="a scenario file (its sweep: block sets the distributions)")
    p.add_argument("--samples", type=_at_least(1), default=1000, metavar="N",
                   help="samples per grid point")
    p.add_argument("--seed", type=_whole, default=0, metavar="N",
                   help="the random seed of the first sample")
    p.add_argument("--workers", type=_workers, default=1, metavar="N",
                   help="local processes (joblib; -1: every core, -2: all but one)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a dask.distributed scheduler address")
    p.add_argument("--persist", metavar="URL", help="persist every run to this SQLAlchemy URL")
    p.add_argument("--resume", action="store_true",
                   help="continue the sweep --persist's database holds (same file, seed, grid "
                        "and --set): run only the samples it does not hold yet")
    p.add_argument("--commit-every", type=_at_least(1), default=256, metavar="N",
                   help="persisted runs per transaction (default 256; 1: run by run)")
    p.add_argument("--no-invariants", action="store_true",
                   help="do not check the lifecycle invariants on every sample")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a value of the scenario (KEY a dotted path)")
    p.add_argument("--compare", action="append", metavar="KEY=VALUE", help="policy A")
    p.add_argument("--against", action="append", metavar="KEY=VALUE", help="policy B")
    p.add_argument("--load", action="store_true",
                   help="run the sweep.load arrival model (a curve per grid point)")
    p.add_argument("--column", default="release_outcome", metavar="NAME",
                   help="the outcome column to share")
    p.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table",
                   help="output format of the outcome table")
    p.add_argument("--out", metavar="FILE",
                   help="write every sample's outcome row to this file: CSV, or JSON when it "
                        "ends in .json")
    p.add_argument("--plot", metavar="PNG",
                   help="write the share plot (needs a grid and --value) to this PNG: the first "
                        "grid key on the x axis, a line per value of the others")
    p.add_argument("--value", metavar="VALUE",
                   help="the outcome value the plot shows, e.g. FAILED")
    p.add_argument("--progress", action="store_true",
                   help="show a progress bar even when standard error is not a terminal "
                        "(on a terminal it is shown unless --quiet)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--keep-failures", type=_at_least(0), default=20, metavar="N",
                   help="failing samples kept per grid point, the first in sample order, as "
                        "summaries (default 20)")
    p.add_argument("--keep-every", type=_at_least(0), default=0, metavar="K",
                   help="also keep the full record of every K-th sample")
    p.add_argument("--records-out", metavar="JSON",
                   help="write the kept failures and records to this JSON")
    p.add_argument("--otlp", metavar="URL",
                   help="also send the records --keep-every keeps (never every run) as "
                        "OpenTelemetry traces to this OTLP/HTTP endpoint (e.g. "
                        "http://127.0.0.1:4318); needs the otel extra (docs/otel.md)")
    from harness_lab.logs.options import add_log_options

    add_log_options(p)
