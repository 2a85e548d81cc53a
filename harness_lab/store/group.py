"""GroupCommitStore: an SQL run store that commits many runs in one transaction.

A sweep that persists every run spends most of its time in per-statement and per-commit
overhead: three transactions and seven statements for each run. A group commit keeps the
runs of a group in memory, answers the RunStore protocol from there exactly as the SQL store
would (the same guards, the same returned rows), and writes the group with one ``executemany``
per table in a single transaction. The database ends up with the same rows, in the same
order, as run-by-run transactions would leave; a run still in flight when its group is
written is stored as its RUNNING row and completed later in its own transaction.

What changes is *when* rows become durable: at the end of the group rather than at each
run's step. A run that crashes before its group is written still leaves its RUNNING row,
since every in-flight run is written with the group. If the group's transaction fails, its
runs are written one transaction each, so one bad run cannot lose the others; the ones that
still fail are kept in :attr:`GroupCommitStore.failures` with their error.

The store holds one driver connection for its life (released by :meth:`close`): the
per-run session read and the group's writes go straight to the driver, without a pool
checkout and a result object per statement.
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import (
    Insert,
    Select,
    Table,
    bindparam,
    exists,
    func,
    insert,
    literal_column,
    select,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement, ColumnElement

from harness_lab.store.base import RunCompletion, RunStart, SessionContext
from harness_lab.store.errors import (
    EVENT_COLUMNS,
    StoreError,
    check_completion,
    check_history_limit,
    check_intent,
    check_start,
    complete_row,
    event_values,
    invocation_row,
    refuse_duplicates,
    require_running,
    running_row,
)
from harness_lab.store.sql import (
    DRIVER_REFUSALS,
    SqlRunStore,
    diagnosis_run,
    one_line,
    tool_invocation,
    trace_event,
)
from harness_lab.trace import TraceEvent

__all__ = ["GroupCommitStore"]

_R = diagnosis_run.c
_EMPTY_SESSION = SessionContext((), None)


def _bound_insert(table: Table, **extra: ColumnElement[Any]) -> Insert:
    return insert(table).values({**{c.name: bindparam(f"p_{c.name}") for c in table.c
                                    if c.name not in extra}, **extra})


# The whole row at once; the ordinal is computed row by row inside the transaction, as the
# run-by-run insert computes it, so insertion order survives concurrent writers.
_INSERT_RUNS = _bound_insert(diagnosis_run, ordinal=select(
    func.coalesce(func.max(_R.ordinal), literal_column("0")) + literal_column("1")
).scalar_subquery())
_INSERT_INVOCATIONS = _bound_insert(tool_invocation)
_INSERT_EVENTS = _bound_insert(trace_event)
_ANY_OF_SESSION: Select[tuple[bool]] = select(
    exists().where(_R.session_id == bindparam("p_session_id")))


class _DriverSql:
    """A statement compiled once for the engine's dialect, executed straight on the driver.

    Batches of plain rows skip SQLAlchemy's per-row parameter processing: the columns here
    are text, integers and floats, which every driver takes as they are.
    """

    __slots__ = ("sql", "names", "positional")

    def __init__(self, stmt: ClauseElement, dialect: Dialect) -> None:
        compiled = stmt.compile(dialect=dialect)
        assert isinstance(compiled, SQLCompiler)
        names = list(compiled.positiontup or [] if compiled.positional else compiled.params)
        if not all(n.startswith("p_") for n in names):  # every value must come from a row
            raise ValueError(f"statement binds values of its own: {names}")
        self.sql = str(compiled)
        self.positional = bool(compiled.positional)
        self.names = [n.removeprefix("p_") for n in names]

    def rows(self, rows: list[dict[str, Any]]) -> list[Any]:
        """The driver's parameters for ``rows`` (dicts keyed by column name)."""
        names = self.names
        if self.positional:
            return [tuple([row[n] for n in names]) for row in rows]
        return [{f"p_{n}": row[n] for n in names} for row in rows]

    def value_rows(self, rows: list[tuple[Any, ...]], columns: tuple[str, ...]) -> list[Any]:
        """The driver's parameters for ``rows`` (tuples of values in ``columns`` order)."""
        if self.positional and tuple(self.names) == columns:
            return rows  # already in the statement's order
        at = [columns.index(n) for n in self.names]
        if self.positional:
            return [tuple([row[i] for i in at]) for row in rows]
        return [{f"p_{n}": row[i] for n, i in zip(self.names, at, strict=True)} for row in rows]


class _Group:
    """The rows of one group, in the order the runs started."""

    __slots__ = ("runs", "invocations", "events", "event_keys", "invocation_ids", "sessions",
                 "settled")

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self.invocations: dict[str, list[dict[str, Any]]] = {}
        self.events: dict[str, list[tuple[Any, ...]]] = {}  # EVENT_COLUMNS values
        self.event_keys: set[tuple[str, int]] = set()
        self.invocation_ids: set[str] = set()
        self.sessions: set[str] = set()
        self.settled = 0


class GroupCommitStore:
    """A RunStore over ``inner`` that writes ``every`` completed runs per transaction.

    Reads see every write: a read that touches a run or a session of the group in memory
    writes the group first. :meth:`flush` writes the group now; :meth:`close` writes it and
    closes ``inner``.
    """

    def __init__(self, inner: SqlRunStore, *, every: int = 256) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, not {every}")
        self.inner = inner
        self.engine = inner.engine
        self.every = every
        self.failures: dict[str, str] = {}
        """Runs whose rows could not be written, with the store's error."""
        self._group = _Group()
        self._lock = threading.RLock()
        dialect = self.engine.dialect
        self._runs_sql = _DriverSql(_INSERT_RUNS, dialect)
        self._invocations_sql = _DriverSql(_INSERT_INVOCATIONS, dialect)
        self._events_sql = _DriverSql(_INSERT_EVENTS, dialect)
        self._any_sql = _DriverSql(_ANY_OF_SESSION, dialect)
        self._errors: tuple[type[BaseException], ...] = (dialect.loaded_dbapi.Error,
                                                         *DRIVER_REFUSALS)
        self._connection: Any = None  # the driver connection, checked out on first use

    def _driver(self) -> Any:
        """The held driver connection (checked out of the engine's pool on first use)."""
        if self._connection is None:
            self._connection = self.engine.raw_connection()
        return self._connection

    @property
    def pending(self) -> int:
        """Runs held in memory, not yet written."""
        return len(self._group.runs)

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """The session's finished turns and PreviousTurn, as the SQL store reads them."""
        with self._lock:
            if session_id in self._group.sessions:
                self.flush()
        check_history_limit(history_limit)
        query = self._any_sql
        with self._lock:
            try:
                conn = self._driver()
                cursor = conn.cursor()
                try:
                    cursor.execute(query.sql, query.rows([{"session_id": session_id}])[0])
                    found = cursor.fetchone()
                finally:
                    cursor.close()
                conn.rollback()  # end the read's transaction, where the driver opened one
            except self._errors as exc:
                self._reset()
                raise StoreError(f"session {session_id!a}: read failed: {one_line(exc)}"
                                 ) from exc
        seen = found is not None and bool(found[0])
        if not seen:  # a session with no row yet: nothing to read
            return _EMPTY_SESSION
        return self.inner.read_session(session_id, history_limit)

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """Hold the RUNNING row and the RUN_STARTED event in the group."""
        check_start(start, started)
        event = event_values(started)
        with self._lock:
            group = self._group
            if start.run_id in group.runs:
                raise StoreError(f"run {start.run_id} already has a diagnosis_run row",
                                 start.run_id)
            row = running_row(start)
            group.runs[start.run_id] = row
            group.events[start.run_id] = [event]
            group.invocations[start.run_id] = []
            group.event_keys.add((start.run_id, started.seq))
            group.sessions.add(start.session_id)

    def record_intent(self, run_id: str, intent: str) -> None:
        """Record the routed intent on the RUNNING row."""
        value = check_intent(run_id, intent)
        with self._lock:
            row = self._group.runs.get(run_id)
            if row is None:
                self.flush()
                self.inner.record_intent(run_id, value)
                return
            require_running(run_id, row["status"])
            row["intent"] = value

    def complete(self, completion: RunCompletion) -> dict[str, Any]:
        """Settle the run in the group and return its completed row; write a full group."""
        check_completion(completion)
        run_id = completion.run_id
        with self._lock:
            group = self._group
            row = group.runs.get(run_id)
            if row is None:
                self.flush()
                return self.inner.complete(completion)
            require_running(run_id, row["status"])
            invocations = [invocation_row(inv) for inv in completion.invocations]
            events = [event_values(ev) for ev in completion.trace]
            ids = [inv["invocation_id"] for inv in invocations]
            keys = [(ev[0], ev[1]) for ev in events]
            refuse_duplicates(run_id, "invocation", ids, group.invocation_ids.__contains__)
            refuse_duplicates(run_id, "trace event", keys, group.event_keys.__contains__)
            complete_row(row, completion)
            group.invocation_ids.update(ids)
            group.event_keys.update(keys)
            group.invocations[run_id].extend(invocations)
            group.events[run_id].extend(events)
            group.settled += 1
            done = dict(row)
            if group.settled >= self.every:
                self.flush()
            return done

    def flush(self) -> dict[str, str]:
        """Write the group now; return the runs of it that could not be written."""
        with self._lock:
            group, self._group = self._group, _Group()
            if not group.runs:
                return {}
            runs = list(group.runs)
            try:
                self._write(group, runs)
                return {}
            except self._errors:
                pass  # find the runs at fault: each alone in its own transaction
            failed: dict[str, str] = {}
            for run_id in runs:
                try:
                    self._write(group, [run_id])
                except self._errors as exc:
                    failed[run_id] = f"run {run_id}: group commit failed: {one_line(exc)}"
            self.failures.update(failed)
            return failed

    def _write(self, group: _Group, runs: list[str]) -> None:
        """Write ``runs`` of ``group`` in one transaction of the held connection."""
        conn = self._driver()
        try:
            cursor = conn.cursor()
            try:
                sql = self._runs_sql
                cursor.executemany(sql.sql, sql.rows([group.runs[r] for r in runs]))
                sql = self._invocations_sql
                invocations = [row for r in runs for row in group.invocations[r]]
                if invocations:
                    cursor.executemany(sql.sql, sql.rows(invocations))
                sql = self._events_sql
                events = [row for r in runs for row in group.events[r]]
                cursor.executemany(sql.sql, sql.value_rows(events, EVENT_COLUMNS))
            finally:
                cursor.close()
            conn.commit()
        except self._errors:
            self._rollback()
            raise

    def _rollback(self) -> None:
        try:
            self._driver().rollback()
        except self._errors:
            self._reset()  # a connection that cannot roll back is dropped, not reused

    def _reset(self) -> None:
        """Drop the held connection (invalidated in the pool); the next use checks out anew."""
        conn, self._connection = self._connection, None
        if conn is not None:
            try:
                conn.invalidate()
            except self._errors:
                pass

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored diagnosis_run row (the group is written first)."""
        self.flush()
        return self.inner.get_run(run_id)

    def runs(self) -> list[dict[str, Any]]:
        """Every diagnosis_run row, oldest first (the group is written first)."""
        self.flush()
        return self.inner.runs()

    def invocations(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Invocation rows by run then seq (the group is written first)."""
        self.flush()
        return self.inner.invocations(run_id)

    def trace(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Trace rows by run then seq (the group is written first)."""
        self.flush()
        return self.inner.trace(run_id)

    def close(self) -> None:
        """Write the group, return the held connection and release the engine's connections."""
        with self._lock:
            try:
                self.flush()
            finally:
                conn, self._connection = self._connection, None
                if conn is not None:
                    conn.close()  # back to the pool, which the inner store then disposes
                self.inner.close()

