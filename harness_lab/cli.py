"""The ``harness-lab`` command line: run, validate, show and schema (and the lab's tools).

Exit codes: 0 when every expectation and invariant held, 1 when one did not (or a scenario
errored), 2 for a usage error or, under ``validate``, a malformed file.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

__all__ = ["format_rows", "main"]

DEFAULT_PATHS = ("scenarios",)


def format_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    """Render rows as ``table``, ``csv``, ``json`` or ``markdown``."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row.get(c) is None else row.get(c) for c in columns})
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in columns} for row in rows], indent=2) + "\n"
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    if fmt == "markdown":
        head = "| " + " | ".join(columns) + " |"
        rule = "|" + "|".join("---" for _ in columns) + "|"
        body = ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in cells]
        return "\n".join([head, rule, *body]) + "\n"
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]
    def fmt_line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()
    lines = [fmt_line(list(columns)), fmt_line(["-" * w for w in widths])]
    lines += [fmt_line(line) for line in cells]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _emit(text: str, out: str | None, stream: TextIO) -> None:
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        stream.write(text)


def _cmd_run(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ROW_COLUMNS, run_paths

    paths = args.paths or list(DEFAULT_PATHS)
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        print(f"harness-lab run: no such file or directory: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    results = run_paths(paths, tags=args.tag or ())
    rows = [r.row() for r in results]
    _emit(format_rows(rows, ROW_COLUMNS, args.format), args.out, sys.stdout)
    failed = [r for r in results if not r.ok]
    if args.format == "table" and not args.out:
        print(f"\n{len(results)} scenario run(s), {len(failed)} failed", file=sys.stderr)
    return 1 if failed else 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, discover, load_file

    bad = 0
    count = 0
    for path in discover(args.paths):
        try:
            count += len(load_file(path))
        except ScenarioError as exc:
            bad += 1
            for problem in exc.problems:
                print(problem, file=sys.stderr)
    print(f"{count} scenario(s) valid, {bad} file(s) with problems",
          file=sys.stderr if bad else sys.stdout)
    return 2 if bad else 0


def _cmd_show(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, ScenarioRun, load_file

    try:
        loaded = load_file(args.scenario)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
    status = 0
    for item in loaded:
        result = ScenarioRun(item).run()
        print(f"== {result.scenario}: {result.description}")
        if result.record is None:
            print(f"   no record: {result.error or result.extra.get('crash')}")
            status = 1
            continue
        r = result.record
        print(f"   {r.run_state.value} / {r.release_outcome.value} / "
              f"{r.fallback_type.value if r.fallback_type else '-'} / db "
              f"{r.stored_status.value if r.stored_status else '-'}; expected "
              f"{result.expected_text}; invariants {result.invariants_text}")
        print("-- SSE events")
        for e in r.sse_events:
            print(f"   t={e.t:9.3f}  {e.kind.value:<9} {json.dumps(dict(e.data), default=str)}")
        print("-- trace")
        for t in r.trace:
            detail = json.dumps(dict(t.detail), default=str) if t.detail else ""
            print(f"   t={t.t:9.3f}  {t.phase.value:<10} {t.type.value:<24} "
                  f"{t.status.value:<9} {detail}")
        status = status or (0 if result.ok else 1)
    return status


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import Scenario

    print(json.dumps(Scenario.model_json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="harness-lab", description="Run, check and explore diagnosis-harness scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenarios and print one row per scenario run")
    run.add_argument("paths", nargs="*", help="files or directories (default: scenarios/)")
    run.add_argument("--format", choices=("table", "csv", "json", "markdown"), default="table")
    run.add_argument("--out", help="write the rows to this file")
    run.add_argument("--tag", action="append", help="only scenarios with this tag")
    run.set_defaults(func=_cmd_run)
    val = sub.add_parser("validate", help="check scenario files without running them")
    val.add_argument("paths", nargs="+")
    val.set_defaults(func=_cmd_validate)
    show = sub.add_parser("show", help="print one scenario's SSE events and trace timeline")
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
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
