"""The ``harness-lab`` command line: run, validate, show and schema (and the lab's tools).

Exit codes are listed in :data:`EXIT_CODES` (and under ``harness-lab --help``).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from harness_lab.scenarios.results import ResultSet
    from harness_lab.scenarios.runner import ScenarioResult
    from harness_lab.sse import SseEvent
    from harness_lab.trace import TraceEvent

__all__ = ["COMMAND_EXIT_CODES", "EXIT_BROKEN_PIPE", "EXIT_CODES", "EXIT_FAILED",
           "EXIT_NO_SCENARIOS", "EXIT_USAGE", "HelpFormatter", "build_parser", "exit_codes",
           "format_rows", "main", "no_scenarios_message", "selected_results", "usage_problem"]

DEFAULT_PATHS = ("scenarios",)

EXIT_FAILED = 1
"""An expectation or invariant did not hold, or a scenario errored."""
EXIT_USAGE = 2
"""A usage error (or, under ``validate``, a malformed file)."""
EXIT_NO_SCENARIOS = 5
"""No scenario was selected (the code pytest uses for "no tests collected")."""
EXIT_BROKEN_PIPE = 141
"""Standard output was closed before everything was written (128 + SIGPIPE, as a shell has it)."""

EXIT_CODES = """\
exit codes:
  0    every expectation and invariant held
  1    one did not, or a scenario errored or could not be loaded
  2    usage error: a missing path, or an --out that is a directory or lies in a
       directory that does not exist (checked before anything runs);
       under validate, a malformed file; a missing optional package (the message
       names the extra to install)
  5    no scenario selected: no scenario file under the paths (files inside a
       cassettes/ directory are never scenarios), or none carries the --tag
  141  standard output was closed early (e.g. piped into head); the rest is dropped
"""
"""Every exit code of the command line, as ``harness-lab --help`` prints them."""

_NOTHING = "no scenario selected: no scenario file under the paths, or none carries the --tag"
_PIPE = "standard output was closed early (e.g. piped into head); the rest is dropped"
_PATHS = "usage error: a missing path or an unknown matrix variant"
_OUT = ("usage error: a missing path, an unknown matrix variant, or an --out that is a "
        "directory or lies in a directory that does not exist (checked before anything runs)")
COMMAND_EXIT_CODES: dict[str, dict[int, str]] = {
    "run": {0: "every expectation and invariant held",
            1: "one did not, or a scenario errored or could not be loaded",
            2: f"{_OUT}; or a --log-dir where no run log can be written", 5: _NOTHING,
            EXIT_BROKEN_PIPE: _PIPE},
    "validate": {0: "every file is valid",
                 2: "a file is malformed (each problem is named by file, line and field); "
                    "or a missing path",
                 5: "no scenario file under the paths", EXIT_BROKEN_PIPE: _PIPE},
    "show": {0: "every expectation and invariant of the shown scenarios held",
             1: "one did not, or a file could not be loaded", 2: _PATHS,
             EXIT_BROKEN_PIPE: _PIPE},
    "report": {0: "every expectation and invariant held (the report is written either way)",
               1: "one did not, or a scenario errored", 2: _OUT, 5: _NOTHING},
    "explore": {0: "no variant contradicts SPEC §4 or breaks an invariant",
                1: "a variant does", 2: f"{_OUT}; or no file under the paths can be explored",
                EXIT_BROKEN_PIPE: _PIPE},
    "sweep": {0: "every sample ran and every output was written",
              1: "samples were lost, runs not stored or an output not written (each said)",
              2: "usage error: a malformed scenario or sweep block, a bad option, an output "
                 "path that cannot be written (checked before any sample runs), or a missing "
                 "optional package",
              130: "interrupted (Ctrl-C): what was stored is listed"},
    "init": {0: "the directory was written",
             2: "usage error: the directory holds files already (nothing is overwritten)"},
}
"""Each command's own exit codes, printed under its help by :func:`exit_codes`."""


def exit_codes(command: str) -> str:
    """The ``exit codes:`` epilog of ``harness-lab COMMAND --help``."""
    return exit_codes_epilog(COMMAND_EXIT_CODES[command])


def exit_codes_epilog(codes: Mapping[int, str]) -> str:
    """An ``exit codes:`` epilog listing ``codes`` (exit code: meaning), a line each."""
    import textwrap

    lines = ["exit codes:"]
    for code, meaning in codes.items():
        lines += textwrap.wrap(meaning, 74, initial_indent=f"  {code:<5}",
                               subsequent_indent=" " * 7)
    return "\n".join(lines) + "\n"


_OUT_HELP = ("write the rows to this file (format from its extension: .csv, .json, .md, .html); "
             "the summary still goes to the terminal; its directory must exist")

FORMATS = ("table", "csv", "json", "markdown", "html")
"""The output formats of ``run --format``."""


def format_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    """Render rows as ``table``, ``csv``, ``json`` or ``markdown``.

    ``csv`` and ``json`` keep every value as it is (a list or mapping in a csv cell is its
    JSON text); ``table`` and ``markdown`` are for people: numbers rounded (three significant
    figures, thousands separated) and a multi-line value's lines joined with ``; `` or
    ``<br>``, so each row stays one line.
    """
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _csv_cell(row.get(c)) for c in columns})
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in columns} for row in rows], indent=2) + "\n"
    if fmt == "markdown":
        return _markdown([[_cell(row.get(c), "<br>") for c in columns] for row in rows], columns)
    from harness_lab.terminal.tables import Column, print_table

    buf = io.StringIO()
    print_table(rows, [Column(c, c) for c in columns], buf, plain=True)
    return buf.getvalue()


def _markdown(cells: Sequence[Sequence[str]], columns: Sequence[str]) -> str:
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in cells]
    return "\n".join([head, rule, *body]) + "\n"


def _cell(value: Any, joiner: str) -> str:
    from harness_lab.terminal.tables import human

    return joiner.join(value.splitlines()) if isinstance(value, str) else human(value)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, default=str)
    return value


def usage_problem(command: str, paths: Sequence[str], out: str | None) -> str | None:
    """The usage error of ``harness-lab COMMAND``: missing ``paths`` or an ``--out`` that
    cannot be written (a directory, or a file in a directory that does not exist); or None."""
    missing = [p for p in paths if not _selected_path(p).exists()]
    if missing:
        return f"harness-lab {command}: no such file or directory: {', '.join(missing)}"
    if out is None:
        return None
    target = Path(out)
    if target.is_dir():
        return f"harness-lab {command}: --out {out} is a directory; give a file name"
    if not target.parent.is_dir():
        return (f"harness-lab {command}: --out {out}: the directory {target.parent} "
                "does not exist; create it first")
    return None


def _selected_path(text: str) -> Path:
    from harness_lab.scenarios.runner import Selector

    return Selector.parse(text).path


def no_scenarios_message(command: str, paths: Iterable[str], tags: Sequence[str]) -> str:
    """What ``harness-lab COMMAND`` says when ``paths`` (and ``tags``) select no scenario."""
    tagged = f" with the tag(s) {', '.join(tags)}" if tags else ""
    return (f"harness-lab {command}: no scenario selected under {', '.join(paths)}{tagged} "
            f"(exit {EXIT_NO_SCENARIOS})")


def _emit(text: str, out: str | None, stream: TextIO) -> int:
    if not out:
        stream.write(text)
        return 0
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"harness-lab run: cannot write --out {out}: {exc.strerror or exc}; "
              "the rows follow on standard output", file=sys.stderr)
        stream.write(text)
        return EXIT_USAGE
    return 0


def selected_results(command: str, paths: Sequence[str], tags: Sequence[str],
                     out: str | None, *, progress_enabled: bool | None = None,
                     progress: Callable[..., Any] | None = None,
                     on_result: Callable[[ScenarioResult], None] | None = None,
                     update_snapshots: bool = False) -> ResultSet | int:
    """The results of running what ``paths`` and ``tags`` select, or the exit code to stop
    with: a usage error before anything runs (a missing path, an unknown ``FILE[variant]``,
    an ``--out`` that cannot be written), or nothing selected.

    A progress bar counting scenario runs is drawn on a terminal (``progress_enabled`` None:
    when standard error is one); ``on_result`` is called with each result (the run log);
    ``update_snapshots`` writes snapshots instead of comparing with them.
    """
    from harness_lab.scenarios.results import ResultSet
    from harness_lab.scenarios.runner import SelectionError, plan_paths
    from harness_lab.terminal.progress import progress as bar
    from harness_lab.terminal.progress import progress_wanted

    problem = usage_problem(command, paths, out)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    try:
        plan = plan_paths(paths, tags=tags)
    except SelectionError as exc:
        print(f"harness-lab {command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not plan:
        print(no_scenarios_message(command, paths, tags), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    enabled = progress_wanted() if progress_enabled is None else progress_enabled
    results = ResultSet()
    with (progress or bar)(len(plan), "scenario runs", enabled=enabled) as advance:
        for entry in plan:
            results.append(entry.run(update_snapshots=update_snapshots))
            if on_result is not None:
                on_result(results[-1])
            advance(1)
    return results


def _cmd_run(args: argparse.Namespace) -> int:
    import time

    from harness_lab.logs.options import run_log
    from harness_lab.terminal.progress import progress, progress_wanted

    fmt = output_format(args.format, args.out)
    log = run_log("run", args)
    if isinstance(log, int):
        return log
    start = time.perf_counter()
    results = selected_results("run", args.paths or list(DEFAULT_PATHS), args.tag or (),
                               args.out, progress_enabled=progress_wanted(quiet=args.quiet),
                               progress=progress, on_result=log.add if log else None,
                               update_snapshots=args.update_snapshots)
    if isinstance(results, int):
        return results
    logged = log.close() if log is not None else None
    elapsed = time.perf_counter() - start
    written = write_results(results, fmt, args.out)
    people = fmt == "table" and not args.out
    if people:
        sys.stdout.flush()
    from harness_lab.terminal.summary import print_summary

    stream = sys.stdout if people else sys.stderr
    print_summary(results, stream, elapsed_s=elapsed)
    _report_snapshots(results, args.paths or list(DEFAULT_PATHS), args.update_snapshots,
                      stream)
    if logged is not None and not args.quiet:
        print(f"log: {logged}", file=sys.stderr)
    if args.out and not written:
        print(f"wrote {len(results)} row(s) as {fmt} to {args.out}", file=sys.stderr)
    return written or (EXIT_FAILED if not results.ok else 0)


def _report_snapshots(results: ResultSet, paths: Sequence[str], update: bool,
                      stream: TextIO) -> None:
    """After a run: how many snapshots were written, and those no scenario uses (removed
    under ``--update-snapshots``)."""
    from harness_lab.scenarios.runner import Selector, discover
    from harness_lab.scenarios.snapshot import unused_report, unused_snapshots

    written = sum(1 for r in results if r.extra.get("snapshot") in ("written", "updated"))
    if written:
        print(f"{written} snapshot(s) written", file=stream)
    files = discover([Selector.parse(p).path for p in paths])
    for line in unused_report(unused_snapshots(files, remove=update), removed=update,
                              flag="--update-snapshots"):
        print(line, file=stream)


def output_format(given: str | None, out: str | None) -> str:
    """The output format: ``given``, else the one the ``out`` file's extension names (``.csv``,
    ``.json``, ``.md``, ``.html``), else ``table`` (as promptfoo picks its output format)."""
    if given is not None:
        return given
    if not out:
        return "table"
    return _EXTENSION_FORMATS.get(Path(out).suffix.lower(), "table")


_EXTENSION_FORMATS = {".csv": "csv", ".json": "json",
                      ".md": "markdown", ".markdown": "markdown", ".html": "html",
                      ".htm": "html"}

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
            Column("db_status", "db_status", style=state_style),
            Column("verdict", "result", style=verdict_style)]


def write_results(results: ResultSet, fmt: str, out: str | None) -> int:
    """Write ``results`` as ``fmt`` to ``out`` (standard output when None); 0, or
    :data:`EXIT_USAGE` when ``out`` cannot be written (the rows then go to standard output)."""
    from harness_lab.scenarios.results import EXPORT_COLUMNS, first_difference

    if fmt in ("table", "markdown", "html"):
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
    return _emit(text, out, sys.stdout)


def _html_page(results: ResultSet) -> str:
    import html

    from harness_lab.report.notebook import results_html

    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape('harness-lab run')}</title></head><body>\n"
            f"{results_html(results)}\n</body></html>\n")


def _cmd_validate(args: argparse.Namespace) -> int:
    from harness_lab.scenarios.discovery import discover
    from harness_lab.scenarios.validate import validate_files

    paths = args.paths or list(DEFAULT_PATHS)
    problem = usage_problem("validate", paths, None)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    files = discover(paths)
    if not files:
        print(no_scenarios_message("validate", paths, ()), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    found = validate_files(files)
    for problems in found.problems.values():
        for item in problems:
            print(item, file=sys.stderr)
    bad = len(found.problems)
    print(f"{found.scenarios} scenario(s) valid, {bad} file(s) with problems",
          file=sys.stderr if bad else sys.stdout)
    return EXIT_USAGE if bad else 0


def _cmd_show(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, ScenarioRun, load_file
    from harness_lab.scenarios.discovery import SelectionError, Selector, discover, select
    from harness_lab.terminal.console import width_of

    problem = usage_problem("show", args.scenario, None)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    width = width_of(sys.stdout)
    status = 0
    shown = 0
    for selector in map(Selector.parse, args.scenario):
        for path in discover([selector.path]):
            try:
                loaded = select(selector, load_file(path))
            except ScenarioError as exc:
                print(exc, file=sys.stderr)
                status = status or EXIT_FAILED  # under run the same file is an ERROR row
                continue
            except SelectionError as exc:
                print(f"harness-lab show: {exc}", file=sys.stderr)
                return EXIT_USAGE
            for item in loaded:
                result = ScenarioRun(item).run()
                _show(result, width)
                shown += 1
                status = status or (0 if result.ok else EXIT_FAILED)
    if not shown and not status:
        print(no_scenarios_message("show", args.scenario, ()), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    return status


def _fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, ending in ``…`` when cut."""
    return line if len(line) <= width else line[:max(width - 1, 0)] + "…"


def _show(result: ScenarioResult, width: int) -> None:
    print(_fit(f"== {result.scenario}: {result.description}", width))
    print(_fit(f"   {_states(result)}; expected {result.expected_text}; "
               f"invariants {result.invariants_text}", width))
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
        print(_fit(f"   t={e.t:9.3f}  {e.kind.value:<9} "
                   f"{json.dumps(dict(e.data), default=str)}", width))
    print(f"-- trace{note}")
    for t in trace:
        detail = json.dumps(dict(t.detail), default=str) if t.detail else ""
        print(_fit(f"   t={t.t:9.3f}  {t.phase.value:<10} {t.type.value:<24} "
                   f"{t.status.value:<9} {detail}".rstrip(), width))


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness_lab.scenarios.schema import schema_text

    problem = usage_problem("schema", [], args.out)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    text = schema_text()
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"harness-lab schema: cannot write --out {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.out} ({len(text):,} bytes)", file=sys.stderr)
    return 0


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that wraps a one-paragraph description to the width, keeps text written line by
    line (the exit codes) line by line, continuing a too-long line under its text, and shows
    each option's default (when it has one worth showing: not None, False or an empty
    list)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text.strip():
            return argparse.HelpFormatter._fill_text(self, text, width, indent)
        import re
        import textwrap

        lines = []
        for line in text.splitlines():
            if len(indent + line) <= width:
                lines.append(indent + line)
                continue
            hang = re.match(r"\s*\S+\s+", line)  # a table row: continue under its text
            lines += textwrap.wrap(line, width, initial_indent=indent,
                                   subsequent_indent=indent + " " * (hang.end() if hang else 0))
        return "\n".join(lines) + ("\n" if text.endswith("\n") else "")

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or default in (None, False, argparse.SUPPRESS)
                or default == [] or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """Every parser of the command line: help formatted by :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand.

    With ``only``, the subcommands of other modules are listed by name and help but not
    imported (``harness-lab --help`` and ``harness-lab validate`` then load no heavy module).
    """
    from harness_lab import __version__

    parser = _Parser(prog="harness-lab",
                     description="Run, check and explore diagnosis-harness scenarios.",
                     epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"harness-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    run = sub.add_parser("run", help="run scenarios and print one row per scenario run",
                         epilog=exit_codes("run"))
    run.add_argument("paths", nargs="*",
                     help="files or directories; FILE[variant] picks one matrix variant "
                          "(default: scenarios/)")
    run.add_argument("--format", choices=FORMATS, default=None,
                     help="output format (default: from the --out extension, else table)")
    run.add_argument("--out", help=_OUT_HELP)
    run.add_argument("--tag", action="append", help="only scenarios with this tag (repeatable)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    run.add_argument("--update-snapshots", action="store_true",
                     help="write the snapshots of scenarios with `snapshot: true` instead of "
                          "comparing with them, and remove snapshots no scenario uses")
    from harness_lab.logs.options import add_log_options

    add_log_options(run)
    run.set_defaults(func=_cmd_run)
    val = sub.add_parser("validate", help="check scenario files without running them",
                         epilog=exit_codes("validate"))
    val.add_argument("paths", nargs="*",
                     help="files or directories; FILE[variant] checks one matrix variant "
                          "(default: scenarios/)")
    val.set_defaults(func=_cmd_validate)
    show = sub.add_parser("show", help="print one scenario's SSE events and trace timeline",
                          epilog=exit_codes("show"))
    show.add_argument("scenario", nargs="+", metavar="PATH",
                      help="a scenario file, FILE[variant] or a directory")
    show.set_defaults(func=_cmd_show)
    schema = sub.add_parser("schema", help="print the JSON Schema of scenario files (for "
                                           "editors; see docs/scenarios.md)")
    schema.add_argument("--out", metavar="FILE",
                        help="write the schema to FILE instead of standard output; its "
                             "directory must exist")
    schema.set_defaults(func=_cmd_schema)
    for name, (module, summary) in _COMMAND_MODULES.items():
        if only is None or only == name:
            register: Callable[[Any], None] = importlib.import_module(module).register
            register(sub)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return parser


# Modules adding subcommands (each has ``register(subparsers)``), with the one-line help
# ``harness-lab --help`` shows without importing them.
_COMMAND_MODULES = {
    "report": ("harness_lab.report.cli", "run scenarios and write a self-contained HTML report"),
    "record": ("harness_lab.recorded.cli", "record a scenario's cassette against an endpoint"),
    "sweep": ("harness_lab.sweep.cli", "Monte Carlo sweep of a scenario's outcome distribution"),
    "explore": ("harness_lab.explore.cli",
                "run every fault variant of a scenario and judge it against SPEC §4"),
    "init": ("harness_lab.scaffold", "create a starter scenario directory to copy from"),
    "explain": ("harness_lab.explanation.cli",
                "answer doc §15's troubleshooting questions for a run"),
    "diff": ("harness_lab.logs.diff_cli",
             "compare two run logs (or a log and a fresh run); exit 1 on a regression"),
    "audit": ("harness_lab.audit.cli",
              "check stored runs (a log, an export, a database) against the invariants"),
    "calibrate": ("harness_lab.audit.calibrate_cli",
                  "fit a sweep's latencies and fault rates from stored runs"),
    "serve": ("harness_lab.live.serve_cli",
              "serve the harness over HTTP and SSE on the wall clock"),
    "conform": ("harness_lab.live.conform_cli",
                "play the scenario files against a live harness; print parity with simulation"),
    "providers": ("harness_lab.live.providers_cli",
                  "serve a scenario's scripted providers over HTTP"),
}


_BUILT_IN_COMMANDS = ("run", "validate", "show", "schema")
"""The subcommands :func:`build_parser` defines itself."""


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``harness-lab``."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = _command_of(words)
    if command is not None and command not in _BUILT_IN_COMMANDS + tuple(_COMMAND_MODULES):
        import difflib

        close = difflib.get_close_matches(command, _BUILT_IN_COMMANDS + tuple(_COMMAND_MODULES),
                                          n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        print(f"harness-lab: unknown command {command!r}{hint} (harness-lab --help lists "
              "the commands)", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(only=command or "")
    args = parser.parse_args(words)
    args.argv = words  # the command line as typed, which a run log records
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except ModuleNotFoundError as exc:
        extra = OPTIONAL_MODULES.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"harness-lab {args.command}: this needs the optional package {exc.name!r}; "
              f"install it with: pip install 'harness_lab[{extra}]'", file=sys.stderr)
        return EXIT_USAGE
    return code


OPTIONAL_MODULES = {"distributed": "dask", "dask": "dask", "nbclient": "notebook",
                    "nbformat": "notebook", "ipykernel": "notebook", "jupyterlab": "notebook",
                    "tqdm": "notebook", "hypothesis": "test", "starlette": "live",
                    "uvicorn": "live", "psycopg": "live"}
"""The optional packages a command may need, and the extra of ``pyproject.toml`` that
installs each: a command missing one ends in one line naming the extra (exit 2)."""


def _drop_stdout() -> None:
    """Point standard output at the null device, so the final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # an in-process stream without a file descriptor: nothing is flushed to a pipe
    finally:
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
