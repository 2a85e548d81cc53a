"""Where audited runs come from: a run log, a JSON Lines export of rows, or a SQL database.

Each source yields :class:`RunRows`: one run's ``diagnosis_run`` row, its trace and tool
invocation rows, and its SSE events when the source has them (None: not recorded). The
export format and the column mapping of a database are described in ``docs/logs.md``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_lab.record import RunRecord

__all__ = ["BATCH", "DEFAULT_MAPPING", "TABLES", "RunRows", "SourceError", "export_lines",
           "iter_sql", "read_export", "records_of_log"]

TABLES = ("diagnosis_run", "trace_event", "tool_invocation", "sse_event")
"""The tables (``table`` values of an export line) a source may hold."""

DEFAULT_MAPPING: dict[str, dict[str, Any]] = {name: {"table": name, "columns": {}}
                                              for name in TABLES[:3]}
"""The toolkit's own schema: each table and column under its own name."""


class SourceError(ValueError):
    """A source that cannot be audited; the message names the file (and line) or table."""


@dataclass(slots=True)
class RunRows:
    """One run as rows."""

    row: dict[str, Any]
    trace: list[dict[str, Any]] = field(default_factory=list)
    invocations: list[dict[str, Any]] = field(default_factory=list)
    sse: list[dict[str, Any]] | None = None


def records_of_log(path: str | Path) -> Iterator[tuple[str, RunRecord | None, RunRows | None]]:
    """(run id, record, rows) of each run of a log: the whole record where it has one, the
    stored row and partial trace of a crashed run otherwise."""
    from harness_lab.logs.reader import LogError, read_log

    try:
        log = read_log(path)
    except LogError as exc:
        raise SourceError(str(exc)) from None
    for entry in log.entries:
        result = entry.result
        for turn in result.turns:
            yield turn.run_id, turn, None
        if result.record is not None:
            yield result.record.run_id, result.record, None
        elif result.stored_row:
            rows = RunRows(dict(result.stored_row),
                           [e.to_dict() for e in result.partial_trace], [],
                           [e.to_dict() for e in result.partial_sse])
            yield str(result.stored_row.get("run_id")), None, rows


def export_lines(record: RunRecord) -> list[dict[str, Any]]:
    """One run as export lines (what :func:`read_export` reads): its row, trace,
    invocations and SSE events, each with its ``table``."""
    lines: list[dict[str, Any]] = [{"table": "diagnosis_run", **dict(record.stored_row or {})}]
    lines += [{"table": "trace_event", **e.to_dict()} for e in record.trace]
    lines += [{"table": "tool_invocation", **i.to_dict()} for i in record.invocations]
    lines += [{"table": "sse_event", "run_id": record.run_id, **e.to_dict()}
              for e in record.sse_events]
    return lines


def read_export(path: str | Path) -> dict[str, RunRows]:
    """The runs of a JSON Lines export, by run id, in the order their rows first appear.

    Each line is an object with ``table`` (one of :data:`TABLES`) and that table's columns;
    a run's SSE events are None when the export has no ``sse_event`` line for it.
    """
    runs: dict[str, RunRows] = {}
    orphans: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    try:
        with open(path, encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise SourceError(f"{path}:{number}: not JSON ({exc.msg})") from None
                if not isinstance(line, dict) or line.get("table") not in TABLES:
                    raise SourceError(f"{path}:{number}: not an export line (an object with "
                                      f"'table' one of {', '.join(TABLES)})")
                table = line.pop("table")
                run_id = line.get("run_id")
                if not isinstance(run_id, str):
                    raise SourceError(f"{path}:{number}: {table} line without a run_id")
                if table == "diagnosis_run":
                    if run_id in runs:
                        raise SourceError(f"{path}:{number}: a second diagnosis_run row for "
                                          f"{run_id}")
                    runs[run_id] = RunRows(line)
                else:
                    orphans[run_id].append((table, line))
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for run_id, rows in orphans.items():
        run = runs.get(run_id)
        if run is None:
            raise SourceError(f"{path}: rows of run {run_id} without its diagnosis_run row")
        for table, line in rows:
            if table == "trace_event":
                run.trace.append(line)
            elif table == "tool_invocation":
                run.invocations.append(line)
            else:
                if run.sse is None:
                    run.sse = []
                run.sse.append(line)
    return runs


BATCH = 500
"""Runs read at a time from a database: memory stays bounded by a batch, not the table."""


def _names(mapping: Mapping[str, Any], logical: str) -> tuple[str, dict[str, str]]:
    spec = mapping.get(logical) or DEFAULT_MAPPING[logical]
    columns: Mapping[str, str] = spec.get("columns") or {}
    return str(spec.get("table", logical)), dict(columns)


def _query(conn: Any, table: str, where: str | None = None, size: int = 0) -> Any:
    from sqlalchemy import bindparam, text

    quote = conn.dialect.identifier_preparer.quote
    sql = f"SELECT * FROM {quote(table)}"  # noqa: S608 (quoted names, bound values)
    if where is None:
        return text(sql)
    clause = text(f"{sql} WHERE {quote(where)} IN :ids")
    return clause.bindparams(bindparam("ids", expanding=True)) if size else clause


def _renamed(row: Any, columns: Mapping[str, str]) -> dict[str, Any]:
    back = {theirs: ours for ours, theirs in columns.items()}
    return {back.get(k, k): v for k, v in row._mapping.items()}


def iter_sql(url: str, mapping: Mapping[str, Any] | None = None) -> Iterator[RunRows]:
    """The runs of a database, in its ``diagnosis_run`` order, :data:`BATCH` at a time: its
    ``diagnosis_run``, ``trace_event`` and ``tool_invocation`` tables, or the tables and
    columns ``mapping`` names for them (``{"diagnosis_run": {"table": "chat_run",
    "columns": {"status": "run_status"}}}``: each of our column names to the database's)."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError

    given = mapping or {}
    try:
        engine = create_engine(url)
    except (SQLAlchemyError, ValueError, ImportError) as exc:
        raise SourceError(f"{url}: not a database URL SQLAlchemy can open ({exc})") from None
    run_table, run_cols = _names(given, "diagnosis_run")
    children = [(name, *_names(given, name)) for name in ("trace_event", "tool_invocation")]
    try:
        with engine.connect() as conn, engine.connect() as reader:
            runs = conn.execution_options(stream_results=True).execute(_query(conn, run_table))
            while True:
                batch = [_renamed(r, run_cols) for r in runs.fetchmany(BATCH)]
                if not batch:
                    break
                found = {str(r["run_id"]): RunRows(r) for r in batch}
                for name, table, cols in children:
                    key = cols.get("run_id", "run_id")
                    rows = reader.execute(_query(reader, table, key, len(found)),
                                          {"ids": list(found)})
                    for r in rows:
                        child = _renamed(r, cols)
                        run = found.get(str(child["run_id"]))
                        if run is not None:
                            (run.trace if name == "trace_event" else run.invocations).append(
                                child)
                yield from found.values()
    except SQLAlchemyError as exc:
        first = str(exc).strip().splitlines()[0]
        raise SourceError(f"{url}: cannot read the run tables ({first})") from None
    finally:
        engine.dispose()
