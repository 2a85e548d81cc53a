"""What every command of ``harness-lab`` shares: exit codes and their epilogs, the help
formatter, output formats, and running what the paths and tags select.

Every command module imports from here; this module imports no command module and not the
dispatcher. Exit codes are listed in :data:`EXIT_CODES` (and under ``harness-lab --help``).
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.atomic import write_atomically
from harness_lab.redact import shown_url
from harness_lab.terminal.console import printable

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.runner.results import ResultSet
    from harness_lab.runner.run import PlannedRun, ScenarioResult

__all__ = ["COMMAND_EXIT_CODES", "DEFAULT_PATHS", "EXIT_BROKEN_PIPE", "EXIT_CODES", "EXIT_FAILED",
           "EXIT_INTERRUPTED", "EXIT_NO_SCENARIOS", "EXIT_USAGE", "FORMATS", "SUMMARIES",
           "HelpFormatter", "add_command", "emit", "exit_codes", "fail", "filled",
           "format_problem", "format_rows",
           "mapping_failure", "nearest_path", "no_scenarios_message", "otlp_option",
           "otlp_send", "out_problem", "output_format", "port_number", "read_mapping",
           "said", "selected_plan", "selected_results", "usage_problem"]

EXIT_FAILED = 1
"""An expectation or invariant did not hold, or a scenario errored."""
EXIT_USAGE = 2
"""A usage error (or, under ``validate``, a malformed file)."""
EXIT_NO_SCENARIOS = 5
"""No scenario was selected (the code pytest uses for "no tests collected")."""
EXIT_BROKEN_PIPE = 141
"""Standard output was closed before everything was written (128 + SIGPIPE, as a shell has it)."""
EXIT_INTERRUPTED = 130
"""Interrupted by Ctrl-C (128 + SIGINT, as a shell has it)."""

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
  130  interrupted (Ctrl-C or SIGTERM): the command stops where it was, without a
       traceback
  141  standard output was closed early (e.g. piped into head); the rest is dropped
"""
"""Every exit code of the command line, as ``harness-lab --help`` prints them."""

SUMMARIES = {
    "run": "run scenarios and print one row per scenario run",
    "validate": "check scenario files without running them",
    "show": "print one scenario's SSE events and trace timeline",
    "schema": "print the JSON Schema of scenario files (for editors; see docs/scenarios.md)",
    "report": "run scenarios and write a self-contained HTML report",
    "record": "record a scenario's cassette against an endpoint",
    "sweep": "Monte Carlo sweep of a scenario's outcome distribution",
    "explore": "run every fault variant of a scenario and judge it against SPEC §4",
    "init": "create a starter scenario directory to copy from",
    "explain": "answer doc §15's troubleshooting questions for a run",
    "diff": "compare two run logs (or a log and a fresh run); exit 1 on a regression",
    "audit": "check stored runs (a log, an export, a database) against the invariants",
    "calibrate": "fit a sweep's latencies and fault rates from stored runs",
    "serve": "serve the harness over HTTP and SSE on the wall clock",
    "conform": "play the scenario files against a live harness; print parity with simulation",
    "providers": "serve a scenario's scripted providers over HTTP",
}
"""Every command's one-line help, in the order ``harness-lab --help`` lists them."""

_NOTHING = "no scenario selected: no scenario file under the paths, or none carries the --tag"
_PIPE = "standard output was closed early (e.g. piped into head); the rest is dropped"
_PATHS = "usage error: a missing path or an unknown matrix variant"
_OUT = ("usage error: a missing path, an unknown matrix variant, or an --out that is a "
        "directory or lies in a directory that does not exist (checked before anything runs)")
COMMAND_EXIT_CODES: dict[str, dict[int, str]] = {
    "run": {0: "every expectation and invariant held",
            1: "one did not, or a scenario errored or could not be loaded, or the runs "
               "could not be sent to --otlp or written to --otlp-file, or the run log "
               "stopped being writable (said)",
            2: f"{_OUT}; or a --log-dir where no run log can be written, or an --otlp "
               "URL that is not http(s) or a missing otel extra, or an --otlp-file that "
               "cannot be written as --out cannot", 5: _NOTHING,
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
                1: "a variant does, or variants were not run: their worker process died "
                   "each time they ran (said; they are inconclusive)",
                2: f"{_OUT}; or no file under the paths can be explored",
                EXIT_BROKEN_PIPE: _PIPE},
    "sweep": {0: "every sample ran and every output was written",
              1: "samples were lost, runs not stored or an output not written (each said)",
              2: "usage error: a malformed scenario or sweep block, a bad option, an output "
                 "path that cannot be written (checked before any sample runs), or a missing "
                 "optional package",
              130: "interrupted (Ctrl-C or SIGTERM): what was stored is listed"},
    "init": {0: "the directory was written",
             2: "usage error: the directory holds files already (nothing is overwritten)"},
    "explain": {0: "every run was explained",
                1: "a scenario could not be loaded or run, so it has no record to explain",
                2: "usage error: a missing path, a file that is not a log before #, or a "
                   "scenario or run id the log does not hold"},
    "diff": {0: "nothing regressed",
             1: "a scenario regressed (a new failure, or an outcome changed while its file did "
                "not)",
             2: "usage error: a file that is not a run log, a missing path, neither NEW nor "
                "--run or both"},
    "audit": {0: "every run holds every invariant it could be checked on",
              1: "a run broke an invariant, or a run's rows could not be read, or a run was "
                 "not audited (its worker process died twice)",
              2: "usage error: a source that cannot be read or holds no run (unless "
                 "--allow-empty), or a mapping file that is not JSON or YAML"},
    "calibrate": {0: "the block was written",
                  2: "the source cannot be read or holds no finished run"},
    "serve": {0: "the server was stopped (Ctrl-C, SIGTERM or SIGHUP) and every run in flight "
                 "was ended",
              2: "usage error: no providers (--scenario or --provider-url), a scenario that "
                 "does not load, a --db that cannot be opened or lies in a missing directory, "
                 "an address that cannot be listened on (all checked before serving), or the "
                 "live extra not installed"},
    "conform": {0: "every applicable scenario passed",
                1: "a scenario failed or errored (each row says what differed)",
                2: "usage error: a missing path, a bad adapter file, no URL and no --serve, "
                   "a URL no request can go to or where nothing answers, a --db serve "
                   "could not open",
                5: "no scenario selected"},
}
"""Each command's own exit codes, printed under its help by :func:`exit_codes`."""


def add_command(sub: Any, name: str, doc: str | None = None, *,
                func: Callable[[argparse.Namespace], int],
                **options: Any) -> argparse.ArgumentParser:
    """The parser of ``harness-lab NAME``, which runs ``func``: its help from
    :data:`SUMMARIES`, its description the text of ``doc`` (the command module's docstring)
    as one paragraph and, unless ``options`` give an epilog, its exit codes."""
    if doc is not None:
        options["description"] = " ".join(doc.split())
    if name in COMMAND_EXIT_CODES:
        options.setdefault("epilog", exit_codes(name))
    parser: argparse.ArgumentParser = sub.add_parser(name, help=SUMMARIES[name], **options)
    parser.set_defaults(func=func)
    return parser


def fail(command: str, message: str, code: int = EXIT_USAGE) -> int:
    """Say ``harness-lab COMMAND: MESSAGE`` on standard error, the password of any URL in
    it hidden (:func:`~harness_lab.redact.shown_url`) and its control characters escaped
    (:func:`~harness_lab.terminal.console.printable`), wrapped to a terminal's width
    (:func:`said`); return ``code``."""
    said(f"harness-lab {command}: {printable(shown_url(message))}")
    return code


def said(text: str, indent: str = "  ") -> None:
    """Print ``text`` on standard error, each of its lines wrapped to the terminal's width
    with ``indent`` before the lines it continues on (unwrapped when standard error is not a
    terminal and ``COLUMNS`` is unset, so a log keeps a line a message)."""
    from harness_lab.terminal.console import width_of

    width = max(width_of(sys.stderr), 40)
    print("\n".join(filled(line, width, indent) if len(line) > width else line
                    for line in text.splitlines()), file=sys.stderr)


def port_number(text: str) -> int:
    """An option's TCP port (argparse ``type``): 0 to 65535, 0 for a free one; a usage error
    otherwise, before anything tries to listen."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: a free one), got {port}")
    return port


def otlp_option(command: str, url: str | None) -> str | int | None:
    """A command's ``--otlp URL`` as its traces URL, checked before anything runs (None when
    not given): a bad URL is said, its exit code returned; a missing ``otel`` extra raises the
    ModuleNotFoundError that :func:`~harness_lab.cli.dispatch.main` names."""
    if not url:
        return None
    from harness_lab.otel.endpoint import checked_endpoint

    try:
        return checked_endpoint(url)
    except ValueError as exc:
        return fail(command, f"--otlp: {exc}")


def otlp_send(command: str, runs: Sequence[tuple[str | None, RunRecord]], url: str,
              epoch: float) -> int:
    """Send ``runs`` (scenario name, record) to the traces URL ``url`` as one trace each,
    virtual second 0 placed at ``epoch``, and say how many spans went; 0, or
    :data:`EXIT_FAILED` (said) when they could not be sent."""
    from harness_lab.otel.export import OtlpExportError, export_records

    try:
        sent = export_records([record for _, record in runs], endpoint=url, epoch=epoch,
                              scenarios=[name for name, _ in runs])
    except OtlpExportError as exc:
        return fail(command, f"--otlp: {exc}", EXIT_FAILED)
    print(f"otlp: {sent.spans:,} span(s) of {sent.runs:,} run(s) sent to {shown_url(url)}",
          file=sys.stderr)
    return 0


def emit(command: str, text: str, out: str | None, *, or_stdout: bool = False) -> int:
    """Write ``text`` to the ``--out`` file ``out`` (standard output when None); 0, or
    :data:`EXIT_USAGE` (said) when ``out`` cannot be written, the text then going to standard
    output with ``or_stdout``."""
    if not out:
        sys.stdout.write(text)
        return 0
    try:
        write_atomically(out, text)
    except OSError as exc:
        tail = "; the rows follow on standard output" if or_stdout else ""
        fail(command, f"cannot write --out {out}: {exc.strerror or exc}{tail}")
        if or_stdout:
            sys.stdout.write(text)
        return EXIT_USAGE
    return 0


def exit_codes(command: str) -> str:
    """The ``exit codes:`` epilog of ``harness-lab COMMAND --help``: each of its
    :data:`COMMAND_EXIT_CODES` (exit code: meaning), a line each, which
    :class:`HelpFormatter` wraps to the terminal under the meaning."""
    lines = ["exit codes:"]
    lines += [f"  {code:<5}{meaning}" for code, meaning in COMMAND_EXIT_CODES[command].items()]
    return "\n".join(lines) + "\n"


def filled(text: str, width: int, indent: str = "") -> str:
    """``text`` wrapped to ``width`` columns, each line after the first starting with
    ``indent``, never breaking a word or at a hyphen (a path or ``key=value`` stays whole)."""
    import textwrap

    return textwrap.fill(text, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


FORMATS = ("table", "csv", "json", "markdown", "html", "junit")
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
        return _markdown([[_cell(row.get(c)) for c in columns] for row in rows], columns)
    from harness_lab.terminal.tables import Column, print_table

    buf = io.StringIO()
    print_table(rows, [Column(c, c) for c in columns], buf, plain=True)
    return buf.getvalue()


def _markdown(cells: Sequence[Sequence[str]], columns: Sequence[str]) -> str:
    body = ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in cells]
    return "\n".join(["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|", *body]) + "\n"


def _cell(value: Any) -> str:
    from harness_lab.terminal.tables import human

    if isinstance(value, str):
        return "<br>".join(map(printable, value.splitlines()))
    return human(value)


def _csv_cell(value: Any) -> Any:
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, default=str)
    return "" if value is None else value


def usage_problem(command: str, paths: Sequence[str], out: str | None) -> int:
    """Say the usage error of ``harness-lab COMMAND`` and return :data:`EXIT_USAGE`: missing
    ``paths`` or an ``--out`` that cannot be written (a directory, or a file in a directory
    that does not exist); 0 when there is none."""
    from harness_lab.runner.run import Selector

    missing = [p for p in paths if not Selector.parse(p).path.exists()]
    if missing:
        hint = ("; name scenario files or directories, or make a starter directory with "
                "`harness-lab init`" if tuple(missing) == DEFAULT_PATHS else "")
        named = ", ".join(f"{p} (did you mean {near}?)" if (near := nearest_path(p)) else p
                          for p in missing)
        return fail(command, f"no such file or directory: {named}{hint}")
    problem = out_problem("--out", out) if out is not None else None
    return fail(command, problem) if problem else 0


DEFAULT_PATHS = ("scenarios",)
"""What the commands that take scenario paths run when given none."""


def nearest_path(path: str) -> str | None:
    """The entry beside the missing ``path`` its user most likely meant (a name one typo or
    a ``.yaml`` away, a ``FILE[variant]`` keeping its variant), or None."""
    import difflib

    from harness_lab.runner.run import Selector

    selector = Selector.parse(path)
    given = selector.path
    variant = "" if selector.variant is None else f"[{selector.variant}]"
    folder = given.parent
    try:
        names = [entry.name for entry in itertools.islice(folder.iterdir(), _MOST_ENTRIES)]
    except OSError:
        return None
    for suffix in (".yaml", ".yml"):
        if given.name + suffix in names:
            return str(given.with_name(given.name + suffix)) + variant
    close = difflib.get_close_matches(given.name, names, n=1, cutoff=0.8)
    return str(given.with_name(close[0])) + variant if close else None


_MOST_ENTRIES = 10_000
"""The most entries of a directory :func:`nearest_path` reads (a huge one is not searched
through)."""


def out_problem(flag: str, path: str) -> str | None:
    """Why the output file ``path`` of option ``flag`` cannot be written: a directory, or a
    file in a directory that does not exist; None when it can be."""
    target = Path(path)
    if target.is_dir():
        return f"{flag} {path} is a directory; give a file name"
    if not target.parent.is_dir():
        return f"{flag} {path}: the directory {target.parent} does not exist; create it first"
    return None


def no_scenarios_message(command: str, paths: Iterable[str], tags: Sequence[str]) -> str:
    """What ``harness-lab COMMAND`` says when ``paths`` (and ``tags``) select no scenario."""
    paths = list(paths)
    tagged = f" with the tag(s) {', '.join(tags)}{_tags_there(paths, tags)}" if tags else ""
    return (f"harness-lab {command}: no scenario selected under {', '.join(paths)}{tagged} "
            f"(exit {EXIT_NO_SCENARIOS})")


def selected_plan(command: str, paths: Sequence[str], tags: Sequence[str],
                  out: str | None) -> list[PlannedRun] | int:
    """The run plan of what ``paths`` and ``tags`` select, none of it run yet, or the exit
    code to stop with (said): a usage error (a missing path, an unknown ``FILE[variant]``, an
    ``--out`` that cannot be written), or nothing selected."""
    from harness_lab.runner.run import SelectionError, plan_paths

    problem = usage_problem(command, paths, out)
    if problem:
        return problem
    try:
        plan = plan_paths(paths, tags=tags)
    except SelectionError as exc:
        return fail(command, str(exc))
    if not plan:
        print(no_scenarios_message(command, paths, tags), file=sys.stderr)
        return EXIT_NO_SCENARIOS
    return plan


def _tags_there(paths: Sequence[str], tags: Sequence[str]) -> str:
    """For ``--tag`` values that selected nothing: the tag(s) most likely meant among those
    the scenarios under ``paths`` carry, as a sentence to add (empty: none is close)."""
    if not tags:
        return ""
    import difflib

    from harness_lab.runner.run import plan_paths

    there = sorted({tag for p in plan_paths(paths) if p.loaded is not None
                    for tag in p.loaded.scenario.tags})
    meant = [near for tag in tags for near in difflib.get_close_matches(tag, there, n=1)]
    return f"; did you mean --tag {' --tag '.join(meant)}?" if meant else ""


def selected_results(command: str, paths: Sequence[str], tags: Sequence[str],
                     out: str | None, *, progress_enabled: bool | None = None,
                     on_result: Callable[[ScenarioResult], None] | None = None,
                     update_snapshots: bool = False,
                     wall_times: list[float] | None = None) -> ResultSet | int:
    """The results of running what ``paths`` and ``tags`` select, or the exit code to stop
    with: a usage error before anything runs (a missing path, an unknown ``FILE[variant]``,
    an ``--out`` that cannot be written), or nothing selected.

    A progress bar counting scenario runs is drawn on a terminal (``progress_enabled`` None:
    when standard error is one); ``on_result`` is called with each result (the run log);
    ``update_snapshots`` writes snapshots instead of comparing with them; ``wall_times``, when
    given, gets the seconds each scenario took to run, in order.
    """
    from harness_lab.runner.run import run_plan
    from harness_lab.terminal.progress import progress, progress_wanted

    plan = selected_plan(command, paths, tags, out)
    if isinstance(plan, int):
        return plan
    enabled = progress_wanted() if progress_enabled is None else progress_enabled
    with progress(len(plan), "scenario runs", enabled=enabled) as advance:
        started = [time.perf_counter()]

        def ran(result: ScenarioResult) -> None:
            if wall_times is not None:
                now = time.perf_counter()
                wall_times.append(now - started[0])
                started[0] = now
            if on_result is not None:
                on_result(result)
            advance(1)

        return run_plan(plan, update_snapshots=update_snapshots, on_result=ran)


def output_format(given: str | None, out: str | None) -> str:
    """The output format: ``given``, else the one the ``out`` file's extension names (``.csv``,
    ``.json``, ``.md``, ``.html``, ``.xml``: JUnit), else ``table`` (as promptfoo picks its
    output format)."""
    if given is not None:
        return given
    return _EXTENSION_FORMATS.get(Path(out or "").suffix.lower(), "table")


def format_problem(flag: str, path: str | None, writes: Sequence[str]) -> str | None:
    """Why the file ``path`` of option ``flag`` would hold another format than its extension
    names (a known one: ``.csv``, ``.json``, ``.md``, ``.html``, ``.xml``) when the command
    writes only ``writes``; None when it names one of them or no known format."""
    if path is None:
        return None
    suffix = Path(path).suffix.lower()
    named = _EXTENSION_FORMATS.get(suffix)
    if named is None or named in writes:
        return None
    kinds = ", ".join(writes[:-1]) + (" or " if len(writes) > 1 else "") + writes[-1]
    return (f"{flag} {path}: this writes {kinds}, not the {named} a {suffix} file holds; "
            f"name the file for what it holds")


_EXTENSION_FORMATS = {".csv": "csv", ".json": "json",
                      ".md": "markdown", ".markdown": "markdown", ".html": "html",
                      ".htm": "html", ".xml": "junit"}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that wraps a one-paragraph description to the width, keeps text written line by
    line (the exit codes) line by line, wrapping a table row (an indented line, with the
    lines indented under its text that continue it) under its text, never breaking a word
    or at a hyphen, and shows each option's default (when it has one worth showing: not
    None, False or an empty list, and the help does not already say it)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text.strip():
            return argparse.HelpFormatter._fill_text(self, text, width, indent)
        import textwrap

        lines = []
        for row, hang in _table_rows(text.splitlines()):
            lines += textwrap.wrap(row, width, initial_indent=indent,
                                   subsequent_indent=indent + " " * hang,
                                   break_long_words=False, break_on_hyphens=False) or [""]
        return "\n".join(lines) + ("\n" if text.endswith("\n") else "")

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_long_words=False,
                             break_on_hyphens=False)

    def _metavar_formatter(self, action: argparse.Action, default_metavar: str
                           ) -> Callable[[int], tuple[str, ...]]:
        if _long_choices(action):  # named by its destination; the help lists the choices
            name = action.dest.upper()
            return lambda size: (name,) * size
        return super()._metavar_formatter(action, default_metavar)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if _long_choices(action):
            assert action.choices is not None
            text = f"{text}; one of: {', '.join(map(str, action.choices))}"
        default = action.default
        if (re.search(r"\bdefault\b", text) or default in (None, False, argparse.SUPPRESS)
                or default == [] or not action.option_strings):
            return text  # no default, or the help states it in its own words
        return f"{text} (default: %(default)s)"


_CHOICES_WIDTH = 40
"""The widest ``{a,b,c}`` an option's choices are shown as; longer lists go in its help."""


def _long_choices(action: argparse.Action) -> bool:
    """True when ``action`` has no metavar and its choices, shown as ``{a,b,c}``, would be
    wider than :data:`_CHOICES_WIDTH` (a line of usage that cannot wrap)."""
    return (action.metavar is None and action.choices is not None
            and len(",".join(map(str, action.choices))) + 2 > _CHOICES_WIDTH)


def _table_rows(lines: Sequence[str]) -> list[tuple[str, int]]:
    """``lines`` as rows to wrap, each with the column its continuation lines start at: an
    indented line (``  2    usage error: ...``) is a table row whose text starts after its
    first word, and the lines after it indented exactly that far continue it (joined to it
    with a space); any other line is a row of its own, continued under its first word."""
    rows: list[tuple[str, int]] = []
    for line in lines:
        lead = len(line) - len(line.lstrip())
        if rows and line.strip() and rows[-1][0][:1].isspace() and lead == rows[-1][1]:
            rows[-1] = (f"{rows[-1][0]} {line.strip()}", rows[-1][1])
            continue
        first = re.match(r"\s*\S+\s+", line)
        rows.append((line.rstrip(), first.end() if first else 0))
    return rows


def read_mapping(path: str | None) -> dict[str, Any] | None:
    """The ``--mapping`` file's object, JSON or (``.yaml``, ``.yml``) YAML, read within the
    bounded readers' limits (None without one); ValueError when it is not one."""
    if path is None:
        return None
    if path.endswith((".yaml", ".yml")):
        from harness_lab.scenarios.safe_yaml import load_yaml

        _, data = load_yaml(Path(path), "a mapping file")
    else:
        from harness_lab.bounded_json import MAX_JSON_BYTES, parse_json

        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(MAX_JSON_BYTES + 1)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                             ) from None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
        data = parse_json(text, source=path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the mapping is not an object")
    return data


def mapping_failure(command: str, mapping: str | None, exc: Exception) -> int:
    """Say why a source could not be read, as :func:`fail` does, naming the ``--mapping``
    file first when the mapping read from it is what is wrong; return the usage exit code."""
    from harness_lab.audit.sources import MappingError

    if isinstance(exc, MappingError) and mapping is not None:
        return fail(command, f"{mapping}: {exc}")
    return fail(command, str(exc))
