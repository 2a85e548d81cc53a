"""read_log: a run log back as scenario results, RunRecords and DataFrames.

Reading is line by line (memory bounded by the largest line, not the file). A malformed
line raises :class:`LogError` naming the file and line; a log without its footer (a killed
run) is read with a note, its torn last line, if any, dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.bounded_json import JsonInputError, parse_json
from harness_lab.logs.codec import result_from_data
from harness_lab.logs.version import FORMAT_VERSION
from harness_lab.record import RunRecord
from harness_lab.runner.run import ScenarioResult

if TYPE_CHECKING:
    from harness_lab.runner.results import ResultSet

__all__ = ["Log", "LogEntry", "LogError", "MAX_LINE_BYTES", "read_log"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line a log may have (a run with a very long trace is some hundred KiB)."""


class LogError(ValueError):
    """A file is not a readable run log; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One run of a log: the scenario result and what the log adds about it."""

    seq: int
    result: ScenarioResult
    variant: str | None
    sha256: str | None
    wall_s: float
    virtual_s: float | None
    line: int

    @property
    def scenario(self) -> str:
        """The scenario (variant) name."""
        return self.result.scenario

    @property
    def record(self) -> RunRecord | None:
        """The run's record (None when the scenario errored before or crashed during it)."""
        return self.result.record


@dataclass(frozen=True, slots=True)
class Log:
    """A run log read back: header, entries in order, footer (None when it was interrupted)
    and notes about what reading found."""

    path: Path
    header: Mapping[str, Any]
    entries: tuple[LogEntry, ...]
    footer: Mapping[str, Any] | None
    notes: tuple[str, ...] = field(default=())

    @property
    def complete(self) -> bool:
        """True when the log has its footer."""
        return self.footer is not None

    @property
    def wall_s(self) -> float | None:
        """Wall-clock seconds from the header's start to the footer's finish; None when the
        log has no footer or either time does not parse."""
        if self.footer is None:
            return None
        try:
            began = datetime.fromisoformat(str(self.header.get("started_at")))
            ended = datetime.fromisoformat(str(self.footer.get("finished_at")))
        except ValueError:
            return None
        return (ended - began).total_seconds()

    @property
    def results(self) -> ResultSet:
        """The scenario results, as ``harness-lab run`` had them."""
        from harness_lab.runner.results import ResultSet

        return ResultSet(e.result for e in self.entries)

    @property
    def records(self) -> list[RunRecord]:
        """The run records (of the scenarios that have one), in order."""
        return [e.result.record for e in self.entries if e.result.record is not None]

    def find(self, ref: str) -> LogEntry:
        """The entry whose scenario name or run id is ``ref`` (a run id of an earlier turn
        finds its scenario's entry); raise KeyError naming close matches, or the scenarios
        when several hold the run id (each scenario numbers its runs from ``run-000001``)."""
        for e in self.entries:
            if e.scenario == ref:
                return e
        holding = [e for e in self.entries
                   if ref in [t.run_id for t in e.result.turns]
                   + ([e.record.run_id] if e.record is not None else [])]
        if len(holding) == 1:
            return holding[0]
        if holding:
            first = ", ".join(e.scenario for e in holding[:3])
            more = f" and {len(holding) - 3:,} more" if len(holding) > 3 else ""
            raise KeyError(f"{self.path}: {len(holding):,} scenarios ran a run {ref!r} (each "
                           f"numbers its runs from run-000001); name the scenario instead: "
                           f"{first}{more}")
        import difflib

        names = [e.scenario for e in self.entries]
        close = difflib.get_close_matches(ref, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"{self.path}: no scenario or run id {ref!r} in the log "
                       f"({len(names)} run(s)){hint}")


def read_log(path: str | os.PathLike[str]) -> Log:
    """Read a run log written by ``harness-lab run`` (or the pytest plugin, or a sweep).

    Raise :class:`LogError` naming the file and line for anything that is not a run log of
    a format version this toolkit reads; a missing footer is a note, not an error.
    """
    where = Path(path)
    if where.is_dir():
        raise LogError(f"{where}: is a directory; give a log file (*.jsonl)")
    header: dict[str, Any] | None = None
    footer: dict[str, Any] | None = None
    entries: list[LogEntry] = []
    notes: list[str] = []
    try:
        for number, line, torn in _parsed(where):
            if torn:
                notes.append(f"line {number} was cut short (the writer stopped mid-line: "
                             "killed, or its disk full); dropped")
                break
            if header is None:
                header = _header(where, number, line)
            elif footer is not None:
                raise LogError(f"{where}:{number}: a line after the footer")
            elif line["kind"] == "run":
                entries.append(_entry(where, number, line))
            elif line["kind"] == "footer":
                _check_line(where, number, line)
                footer = line
            else:
                raise LogError(f"{where}:{number}: unknown line kind {line['kind']!r} "
                               "(expected 'run' or 'footer')")
    except UnicodeDecodeError as exc:
        raise LogError(f"{where}: not UTF-8 text ({exc.reason}); not a run log") from None
    except OSError as exc:
        raise LogError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if header is None:
        raise LogError(f"{where}: empty; not a run log")
    if footer is None:
        notes.append(f"no footer: the run was interrupted after {len(entries)} run(s); "
                     "what it logged is read")
    elif footer.get("runs") != len(entries):
        notes.append(f"the footer counts {footer.get('runs')} run(s), the log holds "
                     f"{len(entries)}")
    return Log(where, header, tuple(entries), footer, tuple(notes))


def _parsed(path: Path) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line number, parsed object, torn) of each non-blank line, each bounded in length,
    looking one line ahead: a last line without its newline that is not JSON is torn (the
    writer stopped mid-line)."""
    pending: tuple[int, str] | None = None
    with open(path, encoding="utf-8", errors="strict") as f:
        for number, text in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), ""), 1):
            if len(text) > MAX_LINE_BYTES:
                raise LogError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES} "
                               "characters; not a run log")
            if text.strip():
                if pending is not None:
                    yield _parse(path, *pending, last=False)
                pending = number, text
    if pending is not None:
        yield _parse(path, *pending, last=True)


def _parse(path: Path, number: int, text: str, *, last: bool
           ) -> tuple[int, dict[str, Any], bool]:
    """One line through the bounded JSON reader: nesting, 128-bit integers (a run's usage
    sums 64-bit counts) and finite numbers checked, so a hostile line is a named error,
    never a traceback."""
    try:
        line = parse_json(text, source=str(path), line=number, wide_ints=True)
    except JsonInputError as exc:
        if exc.message.startswith("not JSON"):
            if last and not text.endswith("\n"):
                return number, {}, True
            if number == 1:
                raise LogError(f"{path}: not a run log (its first line is not JSON)") from None
        raise LogError(str(exc)) from None
    if not isinstance(line, dict) or "kind" not in line:
        raise LogError(f"{path}:{number}: not a log line (an object with a 'kind')")
    return number, line, False


def _header(path: Path, number: int, line: dict[str, Any]) -> dict[str, Any]:
    if line.get("kind") != "header":
        raise LogError(f"{path}:{number}: the first line is not a log header "
                       f"(kind {line.get('kind')!r}); not a run log")
    version = line.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise LogError(f"{path}:{number}: format_version: expected an integer, got "
                       f"{version!r}")
    if version > FORMAT_VERSION:
        raise LogError(f"{path}:{number}: format_version {version} is newer than this "
                       f"toolkit reads ({FORMAT_VERSION}); upgrade harness-lab")
    if version < 1:
        raise LogError(f"{path}:{number}: format_version: expected 1 or more, got {version}")
    _check_line(path, number, line)
    return line


def _entry(path: Path, number: int, line: dict[str, Any]) -> LogEntry:
    _check_line(path, number, line)
    try:
        result = result_from_data(line)
        entry = LogEntry(line["seq"], result, line["variant"], line["sha256"],
                         line["wall_s"], line["virtual_s"], number)
    except KeyError as exc:
        raise LogError(f"{path}:{number}: a run line without the field {exc.args[0]!r}"
                       ) from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise LogError(f"{path}:{number}: scenario {line.get('scenario')!r}: {exc}") from None
    if result.verdict != line["verdict"]:  # read back, a failure must never become a pass
        raise LogError(f"{path}:{number}: scenario {result.scenario!r}: verdict: the line says "
                       f"{line['verdict']!r}, but its error, mismatches and invariants make "
                       f"it {result.verdict!r}")
    return entry


def _check_line(path: Path, number: int, line: dict[str, Any]) -> None:
    """Raise :class:`LogError` naming the file, line and each field of a header, run or
    footer line whose values are not of the types the log's schema
    (:mod:`harness_lab.logs.schema`) gives them, before any of it is read; fields the schema
    does not name are left alone, as a newer writer of the same format version may add some."""
    from pydantic import BaseModel, ValidationError

    from harness_lab.logs.schema import Footer, Header, RunLine

    kind = line["kind"]
    models: dict[str, type[BaseModel]] = {"header": Header, "run": RunLine, "footer": Footer}
    model = models[kind]
    known = {k: v for k, v in line.items() if k in model.model_fields}
    try:
        model.model_validate(known, strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        missing = [e for e in errors if e["type"] == "missing"]
        if missing:
            what = "a run line" if kind == "run" else f"the {kind}"
            raise LogError(f"{path}:{number}: {what} without the field "
                           f"{_dotted(missing[0]['loc'])!r}") from None
        scenario = line.get("scenario")
        named = f"scenario {scenario!r}: " if isinstance(scenario, str) else ""
        problems = "; ".join(f"{_dotted(e['loc'])}: {e['msg']}" for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise LogError(f"{path}:{number}: {named}{problems}{more}") from None


def _dotted(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the log's field path (``mismatches[0].field``)."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text
