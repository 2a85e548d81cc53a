"""``harness-lab run``, ``validate``, ``show`` and ``schema``: run scenarios and print a row
each, check files without running them, print one scenario's timeline, print the schema."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from harness_lab.cli.common import (
    DEFAULT_PATHS,
    EXIT_FAILED,
    EXIT_NO_SCENARIOS,
    EXIT_USAGE,
    FORMATS,
    add_command,
    emit,
    fail,
    filled,
    format_problem,
    format_rows,
    no_scenarios_message,
    otlp_option,
    otlp_send,
    out_problem,
    output_format,
    said,
    selected_plan,
    selected_results,
    usage_problem,
)
from harness_lab.terminal.console import cut, printable, width_of

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.runner.results import ResultSet
    from harness_lab.runner.run import ScenarioResult
    from harness_lab.sse import SseEvent
    from harness_lab.trace import TraceEvent

__all__ = ["COMMANDS", "RUN_TABLE_COLUMNS", "register", "write_results"]

COMMANDS = ("run", "validate", "show", "schema")
"""The subcommands :func:`register` adds."""


def _cmd_run(args: argparse.Namespace) -> int:
    import time

    from harness_lab.logs.options import run_log
    from harness_lab.terminal.progress import progress_wanted

    fmt = output_format(args.format, args.out)
    otlp = otlp_option("run", args.otlp)
    if isinstance(otlp, int):
        return otlp
    if args.otlp_file and (problem := out_problem("--otlp-file", args.otlp_file)):
        return fail("run", problem)
    log = run_log("run", args)
    if isinstance(log, int):
        return log
    start = time.perf_counter()
    started_at = datetime.now().astimezone()
    paths = args.paths or list(DEFAULT_PATHS)
    wall_times: list[float] = []
    results = selected_results("run", paths, args.tag or (), args.out,
                               progress_enabled=progress_wanted(quiet=args.quiet),
                               on_result=log.add if log else None,
                               update_snapshots=args.update_snapshots, wall_times=wall_times)
    if isinstance(results, int):
        return results
    logged = log.close() if log is not None else None
    elapsed = time.perf_counter() - start
    written = write_results(results, fmt, args.out, wall_times=wall_times,
                            started_at=started_at)
    from harness_lab.terminal.summary import print_summary

    stream = sys.stdout if fmt == "table" and not args.out else sys.stderr
    stream.flush()
    print_summary(results, stream, elapsed_s=elapsed, verbose=args.verbose)
    _report_snapshots(results, paths, args.update_snapshots, stream)
    if logged is not None and not args.quiet:
        print(f"log: {logged}", file=sys.stderr)
    elif log is not None and log.failed is not None:
        print(f"log: not written ({printable(log.failed)})", file=sys.stderr)
    if args.out and not written:
        print(f"wrote {len(results)} row(s) as {fmt} to {args.out}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        _annotate(results, data_on_stdout=fmt != "table" and (not args.out or bool(written)))
    exported = otlp_send("run", _runs_of(results), otlp, started_at.timestamp()) if otlp else 0
    if args.otlp_file:
        exported = _write_otlp_file(results, args.otlp_file, started_at.timestamp()) or exported
    log_lost = log is not None and log.failed is not None
    return written or exported or (EXIT_FAILED if not results.ok or log_lost else 0)


def _runs_of(results: ResultSet) -> list[tuple[str | None, RunRecord]]:
    """Every run of ``results`` with its scenario's name, earlier turns included."""
    return [(r.scenario, rec) for r in results for rec in (*r.turns, r.record)
            if rec is not None]


def _write_otlp_file(results: ResultSet, path: str, epoch: float) -> int:
    """Write every run of ``results`` to ``path`` as OTLP JSON, virtual second 0 placed at
    ``epoch``; 0, or :data:`EXIT_FAILED` (said) when the file could not be written."""
    from harness_lab.otel.otlp_json import write_otlp_json

    pairs = _runs_of(results)
    try:
        written = write_otlp_json([rec for _, rec in pairs], path, epoch=epoch,
                                  scenarios=[name for name, _ in pairs])
    except OSError as exc:
        return fail("run", f"--otlp-file {path}: cannot write: {exc.strerror or exc}",
                    EXIT_FAILED)
    said(f"otlp: {written.spans:,} span(s) of {written.runs:,} run(s) written to {path}")
    return 0


def _annotate(results: ResultSet, *, data_on_stdout: bool) -> None:
    """Print a GitHub Actions ``::error`` line per failing scenario after everything else:
    on standard output, or on standard error when standard output carries the rows (the
    runner reads workflow commands from both)."""
    from harness_lab.runner.annotations import github_annotations

    stream = sys.stderr if data_on_stdout else sys.stdout
    stream.flush()
    for line in github_annotations(results, workspace=os.environ.get("GITHUB_WORKSPACE")):
        print(line, file=stream)


def _report_snapshots(results: ResultSet, paths: Sequence[str], update: bool,
                      stream: TextIO) -> None:
    """After a run: how many snapshots were written, and those no scenario uses (removed
    under ``--update-snapshots``)."""
    from harness_lab.runner.run import Selector, discover
    from harness_lab.runner.snapshot import unused_report, unused_snapshots

    written = sum(1 for r in results
                  if r.extra.get("snapshot") in ("written", "updated", "replaced"))
    if written:
        print(f"{written} snapshot(s) written", file=stream)
    files = discover([Selector.parse(p).path for p in paths])
    for line in unused_report(unused_snapshots(files, remove=update), removed=update,
                              flag="--update-snapshots"):
        print(line, file=stream)


RUN_TABLE_COLUMNS = ("scenario", "intent", "run_state", "release_outcome", "fallback_type",
                     "db_status", "verdict")
"""The columns of ``harness-lab run``'s table (and markdown, with the first difference)."""


def _run_columns() -> list[Any]:
    from harness_lab.terminal.styles import (
        fallback_style,
        release_style,
        state_style,
        verdict_style,
    )
    from harness_lab.terminal.tables import Column

    return [Column("scenario", "scenario", name=True), Column("intent", "intent", optional=True),
            Column("run_state", "run_state", style=state_style),
            Column("release_outcome", "release", row_style=release_style),
            Column("fallback_type", "fallback", style=fallback_style),
            Column("db_status", "db_status", style=state_style, optional="fit"),
            Column("verdict", "result", style=verdict_style)]


def write_results(results: ResultSet, fmt: str, out: str | None, *,
                  wall_times: Sequence[float] | None = None,
                  started_at: datetime | None = None) -> int:
    """Write ``results`` as ``fmt`` to ``out`` (standard output when None); 0, or
    :data:`EXIT_USAGE` when ``out`` cannot be written (the rows then go to standard output).
    JUnit XML reports the seconds each result took (``wall_times``, in order) and when the
    run started."""
    from harness_lab.runner.results import EXPORT_COLUMNS, first_difference

    if fmt == "junit":
        text = _junit(results, wall_times, started_at)
    elif fmt in ("table", "markdown", "html"):
        rows = [{**r.row(), "verdict": r.verdict, "difference": first_difference(r)}
                for r in results]
        if fmt == "table":
            if not out:
                from harness_lab.terminal.tables import print_table

                print_table(rows, _run_columns(), sys.stdout)
                return 0
            text = format_rows(rows, RUN_TABLE_COLUMNS, "table")
        elif fmt == "markdown":
            text = format_rows(rows, (*RUN_TABLE_COLUMNS, "difference"), "markdown")
        else:
            text = _html_page(results)
    else:
        text = format_rows(results.export_rows(), EXPORT_COLUMNS, fmt)
    return emit("run", text, out, or_stdout=True)


def _junit(results: ResultSet, wall_times: Sequence[float] | None,
           started_at: datetime | None) -> str:
    import socket

    from harness_lab.runner.junit import junit_xml

    return junit_xml(results, wall_times=wall_times, timestamp=started_at,
                     hostname=socket.gethostname())


def _html_page(results: ResultSet) -> str:
    from harness_lab.report.notebook import results_html

    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>harness-lab run</title></head><body>\n"
            f"{results_html(results)}\n</body></html>\n")


def _cmd_validate(args: argparse.Namespace) -> int:
    from harness_lab.scenarios.discovery import discover
    from harness_lab.scenarios.validate import validate_files

    paths = args.paths or list(DEFAULT_PATHS)
    if usage_problem("validate", paths, None):
        return EXIT_USAGE
    files = discover(paths)
    if not files:
        print(no_scenarios_message("validate", paths, ()), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    found = validate_files(files)
    for problems in found.problems.values():
        for item in problems:
            print(printable(str(item)), file=sys.stderr)
    bad = len(found.problems)
    print(f"{found.scenarios} scenario(s) valid, {bad} file(s) with problems",
          file=sys.stderr if bad else sys.stdout)
    return EXIT_USAGE if bad else 0


def _cmd_show(args: argparse.Namespace) -> int:
    plan = selected_plan("show", args.scenario, (), None)
    if isinstance(plan, int):
        return plan
    width = width_of(sys.stdout)
    status = 0
    for entry in plan:
        result = entry.run()
        if entry.loaded is None:  # a file that does not load: under run, an ERROR row
            print(result.error, file=sys.stderr)
        else:
            _show(result, width)
        status = status or (0 if result.ok else EXIT_FAILED)
    return status


def _show(result: ScenarioResult, width: int) -> None:
    """The scenario's heading and verdict, wrapped to ``width`` (they are read whole), then
    its timeline."""
    print(filled(printable(f"== {result.scenario}: {result.description}"), width, "   "))
    print(filled(f"   {_states(result)}; expected {result.expected_text}; "
                 f"invariants {result.invariants_text}", width, "   "))
    r = result.record
    if r is not None:
        _timeline(r.sse_events, r.trace, "", width)
    elif result.partial_sse or result.partial_trace:
        _timeline(result.partial_sse, result.partial_trace, " (until the crash)", width)


def _states(result: ScenarioResult) -> str:
    r = result.record
    if r is not None:
        return (f"{r.run_state.value} / {r.release_outcome.value} / "
                f"{r.fallback_type.value if r.fallback_type else '-'} / db "
                f"{r.stored_status.value if r.stored_status else '-'}")
    if result.crashed:
        status = (result.stored_row or {}).get("status") or "-"
        return f"crashed ({result.extra.get('crash')}) / db {status}"
    return "no record"


def _timeline(sse: Sequence[SseEvent], trace: Sequence[TraceEvent], note: str,
              width: int) -> None:
    """The SSE events and trace lines, each cut to ``width`` (the terminal's, or whole in a
    pipe): the data of an event is its JSON text, which can run to hundreds of characters."""
    print(f"-- SSE events{note}")
    for e in sse:
        print(cut(f"   t={e.t:9.3f}  {e.kind.value:<9} "
                   f"{json.dumps(dict(e.data), default=str)}", width))
    print(f"-- trace{note}")
    for t in trace:
        detail = json.dumps(dict(t.detail), default=str) if t.detail else ""
        print(cut(f"   t={t.t:9.3f}  {t.phase.value:<10} {t.type.value:<24} "
                   f"{t.status.value:<9} {detail}".rstrip(), width))


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness_lab.scenarios.schema import schema_text

    if usage_problem("schema", [], args.out):
        return EXIT_USAGE
    if problem := format_problem("--out", args.out, ("json",)):
        return fail("schema", problem)
    text = schema_text()
    code = emit("schema", text, args.out)
    if args.out and not code:
        print(f"wrote {args.out} ({len(text):,} bytes)", file=sys.stderr)
    return code


def register(sub: Any) -> None:
    """Add ``harness-lab run``, ``validate``, ``show`` and ``schema``."""
    run = add_command(sub, "run", func=_cmd_run)
    run.add_argument("paths", nargs="*",
                     help="files or directories; FILE[variant] picks one matrix variant "
                          "(default: scenarios/)")
    run.add_argument("--format", choices=FORMATS, default=None,
                     help="output format; junit: JUnit XML for CI (default: from the --out "
                          "extension, else table); under GITHUB_ACTIONS=true each failure is "
                          "also an ::error annotation")
    run.add_argument("--out", help="write the rows to this file (format from its extension: "
                                   ".csv, .json, .md, .html, .xml for JUnit); the summary "
                                   "still goes to the terminal; its directory must exist")
    run.add_argument("--tag", action="append", help="only scenarios with this tag (repeatable)")
    run.add_argument("--otlp", metavar="URL",
                     help="also send every run as an OpenTelemetry trace to this OTLP/HTTP "
                          "endpoint (e.g. http://127.0.0.1:4318; needs the otel extra; "
                          "docs/otel.md)")
    run.add_argument("--otlp-file", metavar="PATH",
                     help="also write every run as OTLP JSON to this file, the OpenTelemetry "
                          "Collector file exporter's format, one trace per line (no extra "
                          "needed; harness-lab audit reads it back; docs/otel.md)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    run.add_argument("-v", "--verbose", action="store_true",
                     help="list every mismatch and broken invariant under each failure")
    run.add_argument("--update-snapshots", action="store_true",
                     help="write the snapshots of scenarios with `snapshot: true` instead of "
                          "comparing with them, and remove snapshots no scenario uses")
    from harness_lab.logs.options import add_log_options

    add_log_options(run)
    val = add_command(sub, "validate", func=_cmd_validate)
    val.add_argument("paths", nargs="*",
                     help="files or directories; FILE[variant] checks one matrix variant "
                          "(default: scenarios/)")
    show = add_command(sub, "show", func=_cmd_show)
    show.add_argument("scenario", nargs="+", metavar="PATH",
                      help="a scenario file, FILE[variant] or a directory")
    schema = add_command(sub, "schema", func=_cmd_schema)
    schema.add_argument("--out", metavar="FILE",
                        help="write the schema to FILE instead of standard output; its "
                             "directory must exist")
