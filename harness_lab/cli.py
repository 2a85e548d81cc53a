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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from harness_lab.scenarios.results import ResultSet
    from harness_lab.scenarios.runner import ScenarioResult
    from harness_lab.sse import SseEvent
    from harness_lab.trace import TraceEvent

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_CODES", "EXIT_FAILED", "EXIT_NO_SCENARIOS", "EXIT_USAGE",
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
       under validate, a malformed file
  5    no scenario selected: no scenario file under the paths (files inside a
       cassettes/ directory are never scenarios), or none carries the --tag
  141  standard output was closed early (e.g. piped into head); the rest is dropped
"""
"""The exit codes of ``run``, ``validate``, ``show`` and ``report``, as the help prints them."""

_OUT_HELP = ("write to this file instead of standard output; its directory must exist "
             "(otherwise exit 2 before anything runs)")


def format_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    """Render rows as ``table``, ``csv``, ``json`` or ``markdown``.

    ``csv`` and ``json`` keep every value as it is; ``table`` joins a multi-line value's
    lines with ``; `` and ``markdown`` with ``<br>``, so each row stays one line.
    """
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row.get(c) is None else row.get(c) for c in columns})
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in columns} for row in rows], indent=2) + "\n"
    if fmt == "markdown":
        return _markdown([[_cell(row.get(c), "<br>") for c in columns] for row in rows], columns)
    return _table([[_cell(row.get(c), "; ") for c in columns] for row in rows], columns)


def _markdown(cells: Sequence[Sequence[str]], columns: Sequence[str]) -> str:
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in cells]
    return "\n".join([head, rule, *body]) + "\n"


def _table(cells: Sequence[Sequence[str]], columns: Sequence[str]) -> str:
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]

    def fmt_line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    lines = [fmt_line(list(columns)), fmt_line(["-" * w for w in widths])]
    lines += [fmt_line(line) for line in cells]
    return "\n".join(lines) + "\n"


def _cell(value: Any, joiner: str) -> str:
    return "-" if value is None else joiner.join(str(value).splitlines())


def usage_problem(command: str, paths: Sequence[str], out: str | None) -> str | None:
    """The usage error of ``harness-lab COMMAND``: missing ``paths`` or an ``--out`` that
    cannot be written (a directory, or a file in a directory that does not exist); or None."""
    missing = [p for p in paths if not Path(p).exists()]
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
                     out: str | None) -> ResultSet | int:
    """The results of running what ``paths`` and ``tags`` select, or the exit code to stop
    with: a usage error before anything runs, or nothing selected."""
    from harness_lab.scenarios import run_paths

    problem = usage_problem(command, paths, out)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    results = run_paths(paths, tags=tags)
    if not results:
        print(no_scenarios_message(command, paths, tags), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    return results


def _cmd_run(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ROW_COLUMNS

    results = selected_results("run", args.paths or list(DEFAULT_PATHS), args.tag or (),
                               args.out)
    if isinstance(results, int):
        return results
    written = _emit(format_rows(results.rows(), ROW_COLUMNS, args.format), args.out, sys.stdout)
    failed = [r for r in results if not r.ok]
    if args.format == "table" and not args.out:
        sys.stdout.flush()
        print(f"\n{len(results)} scenario run(s), {len(failed)} failed", file=sys.stderr)
    return written or (EXIT_FAILED if failed else 0)


def _cmd_validate(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, load_file
    from harness_lab.scenarios.runner import scenario_files

    files = scenario_files(args.paths)
    if not files:
        print(no_scenarios_message("validate", args.paths, ()), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    bad = 0
    count = 0
    for path in files:
        try:
            count += len(load_file(path))
        except ScenarioError as exc:
            bad += 1
            for problem in exc.problems:
                print(problem, file=sys.stderr)
    print(f"{count} scenario(s) valid, {bad} file(s) with problems",
          file=sys.stderr if bad else sys.stdout)
    return EXIT_USAGE if bad else 0


def _cmd_show(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, ScenarioRun, load_file

    if not Path(args.scenario).is_file():
        print(f"harness-lab show: no such scenario file: {args.scenario}", file=sys.stderr)
        return EXIT_USAGE
    try:
        loaded = load_file(args.scenario)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED  # under run the same file is an ERROR row
    status = 0
    for item in loaded:
        result = ScenarioRun(item).run()
        _show(result)
        status = status or (0 if result.ok else EXIT_FAILED)
    return status


def _show(result: ScenarioResult) -> None:
    print(f"== {result.scenario}: {result.description}")
    print(f"   {_states(result)}; expected {result.expected_text}; "
          f"invariants {result.invariants_text}")
    r = result.record
    if r is not None:
        _timeline(r.sse_events, r.trace, "")
    elif result.partial_sse or result.partial_trace:
        _timeline(result.partial_sse, result.partial_trace, " (until the crash)")


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


def _timeline(sse: Sequence[SseEvent], trace: Sequence[TraceEvent], note: str) -> None:
    print(f"-- SSE events{note}")
    for e in sse:
        print(f"   t={e.t:9.3f}  {e.kind.value:<9} {json.dumps(dict(e.data), default=str)}")
    print(f"-- trace{note}")
    for t in trace:
        detail = json.dumps(dict(t.detail), default=str) if t.detail else ""
        print(f"   t={t.t:9.3f}  {t.phase.value:<10} {t.type.value:<24} "
              f"{t.status.value:<9} {detail}")


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import Scenario

    print(json.dumps(Scenario.model_json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="harness-lab", description="Run, check and explore diagnosis-harness scenarios.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenarios and print one row per scenario run",
                         epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("paths", nargs="*", help="files or directories (default: scenarios/)")
    run.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table")
    run.add_argument("--out", help=_OUT_HELP)
    run.add_argument("--tag", action="append", help="only scenarios with this tag")
    run.set_defaults(func=_cmd_run)
    val = sub.add_parser("validate", help="check scenario files without running them",
                         epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    val.add_argument("paths", nargs="+")
    val.set_defaults(func=_cmd_validate)
    show = sub.add_parser("show", help="print one scenario's SSE events and trace timeline",
                          epilog=EXIT_CODES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("scenario")
    show.set_defaults(func=_cmd_show)
    schema = sub.add_parser("schema", help="print the JSON Schema of scenario files")
    schema.set_defaults(func=_cmd_schema)
    for module in _COMMAND_MODULES:
        register: Callable[[Any], None] = importlib.import_module(module).register
        register(sub)
    return parser


# Modules adding subcommands; each has ``register(subparsers)``.
_COMMAND_MODULES = (
    "harness_lab.report.cli",
    "harness_lab.recorded.cli",
    "harness_lab.sweep.cli",
    "harness_lab.explore.cli",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``harness-lab``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    return code


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
