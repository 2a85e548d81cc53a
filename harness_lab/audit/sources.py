"""Where audited runs come from: a run log, a JSON Lines export of rows, or a SQL database
(OTLP JSON traces: :mod:`harness_lab.audit.otlp`).

Each source yields :class:`RunRows`: one run's ``diagnosis_run`` row, its trace and tool
invocation rows, and its SSE events when the source has them (None: not recorded). The
export format and the column mapping of a database are described in ``docs/logs.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_lab.audit.rebuild import parse_line
from harness_lab.bounded_json import MAX_JSON_BYTES, JsonInputError
from harness_lab.bounds import CONNECT_TIMEOUT_S
from harness_lab.record import RunRecord
from harness_lab.redact import shown_url

__all__ = ["BATCH", "CONNECT_TIMEOUT_S", "DEFAULT_MAPPING", "STATEMENT_TIMEOUT_S", "TABLES",
           "MappingError", "RunRows", "SourceError", "SqlReader", "check_mapping", "count_sql",
           "export_lines", "iter_sql", "json_lines", "json_value", "read_engine", "read_export",
           "reading", "records_of_log"]

TABLES = ("diagnosis_run", "trace_event", "tool_invocation", "sse_event")
"""The tables (``table`` values of an export line) a source may hold."""

DEFAULT_MAPPING: dict[str, dict[str, Any]] = {name: {"table": name, "columns": {}}
                                              for name in TABLES[:3]}
"""The toolkit's own schema: each table and column under its own name."""


class SourceError(ValueError):
    """A source that cannot be audited; the message names the file (and line) or table."""


class MappingError(SourceError):
    """A mapping of names that cannot be used; the message names the place in it
    (``mapping.TABLE.KEY``), the command line the file it was read from."""


@dataclass(slots=True)
class RunRows:
    """One run as rows; for a file, the ``source`` and, by table, where each row is in it
    (its line, and in OTLP JSON its span)."""

    row: dict[str, Any]
    trace: list[dict[str, Any]] = field(default_factory=list)
    invocations: list[dict[str, Any]] = field(default_factory=list)
    sse: list[dict[str, Any]] | None = None
    source: str | None = None
    places: dict[str, list[str]] = field(default_factory=dict)

    def where(self, table: str, index: int) -> str:
        """``source:place: `` of the ``index``-th row of ``table`` as given, or nothing when
        the rows do not come from a file."""
        places = self.places.get(table, ())
        if self.source is None or index >= len(places):
            return ""
        return f"{self.source}:{places[index]}: "


def records_of_log(path: str | Path
                   ) -> Iterator[tuple[str, RunRecord | None, RunRows | None, str]]:
    """(run id, record, rows, scenario) of each run of a log: the whole record where it has
    one, the stored row and partial trace of a crashed run otherwise; the scenario's name,
    with the turn when it played several (``sessions-carry, turn 1 of 2``). What reading
    notes (the log was interrupted, its last line cut short) is said on standard error, as
    for every command that reads a log."""
    from harness_lab.logs.reader import LogError
    from harness_lab.logs.sources import read_noted

    try:
        log = read_noted(path)
    except LogError as exc:
        raise SourceError(str(exc)) from None
    for entry in log.entries:
        result = entry.result
        turns = len(result.turns) + 1
        names = [f"{result.scenario}, turn {k} of {turns}" if turns > 1 else result.scenario
                 for k in range(1, turns + 1)]
        for turn, name in zip(result.turns, names, strict=False):
            yield turn.run_id, turn, None, name
        if result.record is not None:
            yield result.record.run_id, result.record, None, names[-1]
        elif result.stored_row:
            rows = RunRows(dict(result.stored_row),
                           [e.to_dict() for e in result.partial_trace], [],
                           [e.to_dict() for e in result.partial_sse], str(path))
            rows.places = {table: [str(entry.line)] * n for table, n in (
                ("diagnosis_run", 1), ("trace_event", len(rows.trace)),
                ("sse_event", len(result.partial_sse)))}
            yield str(result.stored_row.get("run_id")), None, rows, names[-1]


def export_lines(record: RunRecord) -> list[dict[str, Any]]:
    """One run as export lines (what :func:`read_export` reads): its row, trace,
    invocations and SSE events, each with its ``table``."""
    lines: list[dict[str, Any]] = [{"table": "diagnosis_run", **dict(record.stored_row or {})}]
    lines += [{"table": "trace_event", **e.to_dict()} for e in record.trace]
    lines += [{"table": "tool_invocation", **i.to_dict()} for i in record.invocations]
    lines += [{"table": "sse_event", "run_id": record.run_id, **e.to_dict()}
              for e in record.sse_events]
    return lines


def json_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line of a JSON Lines file, each read within
    :data:`~harness_lab.bounded_json.MAX_JSON_BYTES` characters, so a line of gigabytes is
    refused having read no more than that; SourceError for a line beyond it, a file that is
    not UTF-8 or cannot be read."""
    with reading(path), open(path, encoding="utf-8") as f:
        for number, text in enumerate(iter(lambda: f.readline(MAX_JSON_BYTES + 1), ""), 1):
            if len(text) > MAX_JSON_BYTES:
                raise SourceError(f"{path}:{number}: a line longer than {MAX_JSON_BYTES:,} "
                                  "characters, more than this toolkit reads")
            if text.strip():
                yield number, text


@contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """Inside: a file that is not UTF-8 or cannot be read is a SourceError naming ``path``."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None


def json_value(text: str, path: str | Path, line: int | None = None) -> Any:
    """:func:`~harness_lab.audit.rebuild.parse_line`'s value of ``text``, line ``line`` of
    ``path`` (None: all of it); SourceError, naming both, for JSON this toolkit does not read."""
    try:
        return parse_line(text, source=str(path), line=line)
    except JsonInputError as exc:
        raise SourceError(str(exc)) from None


def read_export(path: str | Path) -> dict[str, RunRows]:
    """The runs of a JSON Lines export, by run id, in the order their rows first appear.

    Each line is an object with ``table`` (one of :data:`TABLES`) and that table's columns;
    a run's SSE events are None when the export has no ``sse_event`` line for it.
    """
    runs: dict[str, RunRows] = {}
    orphans: dict[str, list[tuple[str, dict[str, Any], int]]] = defaultdict(list)
    for number, text in json_lines(path):
        line = json_value(text, path, number)
        if not isinstance(line, dict) or line.get("table") not in TABLES:
            raise SourceError(f"{path}:{number}: not an export line (an object with "
                              f"'table' one of {', '.join(TABLES)})")
        table = line.pop("table")
        run_id = line.get("run_id")
        if not isinstance(run_id, str):
            raise SourceError(f"{path}:{number}: {table} line without a run_id")
        if table == "diagnosis_run":
            if run_id in runs:
                raise SourceError(f"{path}:{number}: a second diagnosis_run row for {run_id}")
            runs[run_id] = RunRows(line, source=str(path), places={table: [str(number)]})
        else:
            orphans[run_id].append((table, line, number))
    for run_id, rows in orphans.items():
        run = runs.get(run_id)
        if run is None:
            raise SourceError(f"{path}: rows of run {run_id} without its diagnosis_run row")
        for table, line, number in rows:
            if table == "trace_event":
                run.trace.append(line)
            elif table == "tool_invocation":
                run.invocations.append(line)
            else:
                if run.sse is None:
                    run.sse = []
                run.sse.append(line)
            run.places.setdefault(table, []).append(str(number))
    return runs


BATCH = 500
"""Runs read at a time from a database: memory stays bounded by a batch, not the table."""

STATEMENT_TIMEOUT_S = 120
"""Seconds one query may take (PostgreSQL; SQLite waits this long for a lock)."""


def check_mapping(mapping: Mapping[str, Any]) -> None:
    """Raise :class:`MappingError` naming what is wrong with a column mapping: each known
    table maps to ``{"table": NAME, "columns": {OURS: THEIRS}}``, names being strings and
    ours the columns of the run store's table."""
    from harness_lab.store.sql import diagnosis_run, tool_invocation, trace_event

    if not isinstance(mapping, Mapping):
        raise MappingError("the mapping must be an object of tables")
    ours = {t.name: t.c.keys() for t in (diagnosis_run, trace_event, tool_invocation)}
    for logical, spec in mapping.items():
        if logical not in TABLES[:3]:
            raise MappingError(f"mapping: unknown table {logical!r} (one of "
                               f"{', '.join(TABLES[:3])})")
        if not isinstance(spec, Mapping):
            raise MappingError(f"mapping.{logical}: an object with 'table' and 'columns'")
        unknown = sorted(str(k) for k in spec if k not in ("table", "columns"))
        if unknown:
            raise MappingError(f"mapping.{logical}: unknown key {unknown[0]!r}")
        if not isinstance(spec.get("table", logical), str):
            raise MappingError(f"mapping.{logical}.table: a table name (a string)")
        columns = spec.get("columns", {})
        if not isinstance(columns, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in columns.items()):
            raise MappingError(f"mapping.{logical}.columns: an object of column names, ours "
                               "to the database's (strings)")
        strange = sorted(k for k in columns if k not in ours[logical])
        if strange:
            raise MappingError(f"mapping.{logical}.columns: unknown column {strange[0]!r} "
                               f"(ours are {', '.join(ours[logical])})")


def read_engine(url: str) -> Any:
    """An engine that reads: a SQLite file must exist (nothing is created by reading), a
    server must answer within :data:`CONNECT_TIMEOUT_S` and each statement within
    :data:`STATEMENT_TIMEOUT_S`. Raise :class:`SourceError` naming the URL for one that
    cannot be opened (a malformed URL, an unknown dialect, a missing driver)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from harness_lab.store.target import missing_driver

    try:
        return _read_engine(url)
    except SourceError:
        raise
    except ImportError as exc:
        raise SourceError(f"{shown_url(url)}: {missing_driver(make_url(url), exc)}") from None
    except (SQLAlchemyError, ValueError) as exc:
        raise SourceError(f"{shown_url(url)}: not a database URL SQLAlchemy can open "
                          f"({exc})") from None


def _read_engine(url: str) -> Any:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    backend = parsed.get_backend_name()
    args: dict[str, Any] = {}
    if backend == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            if not Path(database).is_file():
                raise SourceError(f"{shown_url(url)}: no such database file {database}")
            parsed = parsed.set(database=f"file:{Path(database).resolve()}",
                                query={**parsed.query, "mode": "ro", "uri": "true"})
        args = {"timeout": STATEMENT_TIMEOUT_S}
    elif backend == "postgresql":
        args = {"connect_timeout": CONNECT_TIMEOUT_S,
                "options": f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}"}
    elif backend in ("mysql", "mariadb"):
        args = {"connect_timeout": CONNECT_TIMEOUT_S}
    return create_engine(parsed, connect_args=args)


def _names(mapping: Mapping[str, Any], logical: str) -> tuple[str, dict[str, str]]:
    spec = mapping.get(logical) or DEFAULT_MAPPING[logical]
    columns: Mapping[str, str] = spec.get("columns") or {}
    return str(spec.get("table", logical)), dict(columns)


def _query(conn: Any, table: str, where: str | None = None) -> Any:
    from sqlalchemy import bindparam, text

    quote = conn.dialect.identifier_preparer.quote
    sql = f"SELECT * FROM {quote(table)}"  # noqa: S608 (quoted names, bound values)
    if where is None:
        return text(sql)
    return text(f"{sql} WHERE {quote(where)} IN :ids").bindparams(
        bindparam("ids", expanding=True))


def _keys(result: Any, columns: Mapping[str, str]) -> list[str]:
    """Our names of a result's columns (``columns`` maps ours to the database's)."""
    back = {theirs: ours for ours, theirs in columns.items()}
    return [back.get(k, k) for k in result.keys()]


def _opened(url: str, mapping: Mapping[str, Any] | None) -> tuple[Any, Mapping[str, Any]]:
    """The engine of ``url`` and the checked mapping (SourceError for either)."""
    given = mapping or {}
    check_mapping(given)
    return read_engine(url), given


def _unreadable(url: str, exc: Exception) -> SourceError:
    from harness_lab.store.sql import one_line

    return SourceError(f"{shown_url(url)}: cannot read the run tables: {one_line(exc)}")


def count_sql(url: str, mapping: Mapping[str, Any] | None = None) -> int:
    """How many runs (``diagnosis_run`` rows, or those of the table ``mapping`` names) a
    database holds."""
    from sqlalchemy import func, select, table
    from sqlalchemy.exc import SQLAlchemyError

    engine, given = _opened(url, mapping)
    try:
        with engine.connect() as conn:
            query = select(func.count()).select_from(table(_names(given, "diagnosis_run")[0]))
            return int(conn.execute(query).scalar_one())
    except SQLAlchemyError as exc:
        raise _unreadable(url, exc) from None
    finally:
        engine.dispose()


class SqlReader:
    """A database opened for reading runs: its run rows :data:`BATCH` at a time, and the
    trace and invocation rows of a batch (the tables and columns of ``mapping``, see
    :func:`iter_sql`). Several processes may each open their own on one database."""

    def __init__(self, url: str, mapping: Mapping[str, Any] | None = None) -> None:
        """Open ``url`` (SourceError when it cannot be, or the mapping is wrong)."""
        self.url = url
        self.engine, given = _opened(url, mapping)
        self.run_table, self.run_columns = _names(given, "diagnosis_run")
        self.children = [(name, *_names(given, name))
                         for name in ("trace_event", "tool_invocation")]
        self._reader: Any = None

    def run_batches(self) -> Iterator[list[dict[str, Any]]]:
        """The run rows, in the table's order, :data:`BATCH` at a time, under our names."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self.engine.connect() as conn:
                runs = conn.execution_options(stream_results=True).execute(
                    _query(conn, self.run_table))
                with runs:  # a reader that stops early closes the server-side cursor too
                    keys = _keys(runs, self.run_columns)
                    for part in runs.partitions(BATCH):
                        batch = [dict(zip(keys, r, strict=True)) for r in part]
                        if "run_id" not in batch[0]:
                            theirs = self.run_columns.get("run_id", "run_id")
                            raise SourceError(f"{shown_url(self.url)}: table {self.run_table} "
                                              f"has no column {theirs} (the run id; map it "
                                              "with --mapping)")
                        yield batch
        except SQLAlchemyError as exc:
            raise _unreadable(self.url, exc) from None

    def with_children(self, batch: list[dict[str, Any]]) -> list[RunRows]:
        """The runs of a batch of run rows, each with its trace and invocation rows."""
        from sqlalchemy.exc import SQLAlchemyError

        found = {str(r["run_id"]): RunRows(r) for r in batch}
        try:
            if self._reader is None:
                self._reader = self.engine.connect()
            reader = self._reader
            for name, table, cols in self.children:
                key = cols.get("run_id", "run_id")
                result = reader.execute(_query(reader, table, key), {"ids": list(found)})
                keys = _keys(result, cols)
                for r in result.fetchall():
                    child = dict(zip(keys, r, strict=True))
                    run = found.get(str(child.get("run_id")))
                    if run is not None:
                        (run.trace if name == "trace_event" else run.invocations).append(child)
        except SQLAlchemyError as exc:
            raise _unreadable(self.url, exc) from None
        return list(found.values())

    def close(self) -> None:
        """Close the connections."""
        if self._reader is not None:
            self._reader.close()
        self.engine.dispose()


def iter_sql(url: str, mapping: Mapping[str, Any] | None = None) -> Iterator[RunRows]:
    """The runs of a database, in its ``diagnosis_run`` order, :data:`BATCH` at a time: its
    ``diagnosis_run``, ``trace_event`` and ``tool_invocation`` tables, or the tables and
    columns ``mapping`` names for them (``{"diagnosis_run": {"table": "chat_run",
    "columns": {"status": "run_status"}}}``: each of our column names to the database's)."""
    reader = SqlReader(url, mapping)
    try:
        for batch in reader.run_batches():
            yield from reader.with_children(batch)
    finally:
        reader.close()
