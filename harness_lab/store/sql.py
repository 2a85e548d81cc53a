"""The SQL run store (doc §12), on SQLAlchemy Core: embedded SQLite by default, any URL works.

Three tables live in :data:`metadata`: ``diagnosis_run`` (the :data:`RUN_COLUMNS`, then an
``ordinal`` that keeps insertion order among runs created at the same instant),
``tool_invocation`` (one row per canonical invocation, ``scope`` as JSON text) and
``trace_event`` (one row per trace event, ``detail`` as JSON text). Reports may read them
directly, e.g. ``pandas.read_sql_table("diagnosis_run", store.engine)``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Engine,
    Float,
    ForeignKey,
    MetaData,
    Select,
    Table,
    Text,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError, SQLAlchemyError
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeEngine

from harness_lab.bounds import CONNECT_TIMEOUT_S
from harness_lab.states import IntentType, ReleaseOutcome, StoredRunStatus
from harness_lab.store.base import (
    COMPLETION_COLUMNS,
    RUN_COLUMNS,
    RunCompletion,
    RunStart,
    SessionContext,
)
from harness_lab.store.errors import (
    StoreError,
    check_completion,
    check_history_limit,
    check_intent,
    check_start,
    decoded,
    event_row,
    invocation_row,
    previous_turn_from_row,
    require_running,
    turn_from_row,
)
from harness_lab.trace import TraceEvent

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DRIVER_REFUSALS",
    "SqlRunStore",
    "StoreError",
    "create_tables",
    "make_engine",
    "diagnosis_run",
    "metadata",
    "one_line",
    "tool_invocation",
    "trace_event",
]

metadata = MetaData()
"""The MetaData holding the run store's three tables."""

_TYPES: dict[str, type[TypeEngine[Any]]] = {
    "duration_ms": Float, "created_at": Float, "finished_at": Float,
    **dict.fromkeys(("input_tokens", "output_tokens", "total_tokens", "agent_steps",
                     "tool_calls"), BigInteger),
}
_REQUIRED = frozenset({"session_id", "query", "status", "created_at"})


def _run_column(name: str) -> Column[Any]:
    return Column(name, _TYPES.get(name, Text), primary_key=name == "run_id",
                  nullable=name not in _REQUIRED and name != "run_id",
                  index=name == "session_id")


diagnosis_run = Table(
    "diagnosis_run", metadata,
    *(_run_column(name) for name in RUN_COLUMNS),
    # indexed: each new row reads MAX(ordinal), which would otherwise scan the whole table
    Column("ordinal", BigInteger, nullable=False, index=True),
)
"""One row per run: RUNNING from its start, completed in one transaction (doc §12)."""

tool_invocation = Table(
    "tool_invocation", metadata,
    Column("invocation_id", Text, primary_key=True),
    Column("run_id", Text, ForeignKey("diagnosis_run.run_id"), nullable=False, index=True),
    Column("seq", BigInteger, nullable=False),
    Column("tool", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("normalized_scope", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("evidence_status", Text),
    Column("error_code", Text),
    Column("error", Text),
    Column("items", BigInteger, nullable=False),
    Column("size_bytes", BigInteger, nullable=False),
    Column("information_gain", Text),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("call_id", Text),
)
"""One row per CanonicalInvocation; the columns are the keys of ``to_dict()``."""

trace_event = Table(
    "trace_event", metadata,
    Column("run_id", Text, ForeignKey("diagnosis_run.run_id"), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("t", Float, nullable=False),
    Column("type", Text, nullable=False),
    Column("phase", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("detail", Text, nullable=False),
)
"""One row per TraceEvent; the columns are the keys of ``to_dict()``."""

DRIVER_REFUSALS: tuple[type[Exception], ...] = (SQLAlchemyError, OverflowError,
                                                UnicodeEncodeError)
"""What a write can fail with: the database's errors, and a driver refusing a value it
cannot bind (an integer beyond 64 bits, a lone surrogate), which SQLAlchemy does not wrap."""


def one_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, without SQLAlchemy's statement and links."""
    orig = getattr(exc, "orig", None)
    cause = orig if isinstance(orig, BaseException) else exc
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0] if lines else ''}"


_RUN_SELECT = [diagnosis_run.c[name] for name in RUN_COLUMNS]
_RUNNING = StoredRunStatus.RUNNING.value

# Statements are built once and bound per call: building a statement costs far more than
# executing its cached compiled form.
_R = diagnosis_run.c
_INSERT_RUN = insert(diagnosis_run).values(
    run_id=bindparam("p_run_id"), session_id=bindparam("p_session_id"),
    query=bindparam("p_query"), status=_RUNNING, created_at=bindparam("p_created_at"),
    ordinal=select(func.coalesce(func.max(_R.ordinal), 0) + 1).scalar_subquery())
_INSERT_EVENT = insert(trace_event)
# pg_advisory_xact_lock's key: any constant no other program on the database uses for a lock
_ORDINAL_LOCK = text("SELECT pg_advisory_xact_lock(7231504913)")
_INSERT_INVOCATION = insert(tool_invocation)
_STATUS_OF = select(_R.status).where(_R.run_id == bindparam("p_run_id"))
_SET_INTENT = (update(diagnosis_run)
               .where(_R.run_id == bindparam("p_run_id"), _R.status == _RUNNING)
               .values(intent=bindparam("p_intent")))
_COMPLETE = (update(diagnosis_run)
             .where(_R.run_id == bindparam("p_run_id"), _R.status == _RUNNING)
             .values({name: bindparam(f"p_{name}") for name in COMPLETION_COLUMNS}))
_ROW_OF = select(*_RUN_SELECT).where(_R.run_id == bindparam("p_run_id"))
_OLDEST_FIRST = (_R.created_at, _R.ordinal)
_LATEST_FIRST = (_R.created_at.desc(), _R.ordinal.desc())
_ALL_RUNS = select(*_RUN_SELECT).order_by(*_OLDEST_FIRST)
_HISTORY = (select(*_RUN_SELECT)
            .where(_R.session_id == bindparam("p_session_id"), _R.status != _RUNNING)
            .order_by(*_LATEST_FIRST).limit(bindparam("p_limit")))
_PREVIOUS = (select(*_RUN_SELECT)
             .where(_R.session_id == bindparam("p_session_id"),
                    _R.intent == IntentType.DIAGNOSIS.value,
                    _R.status == StoredRunStatus.SUCCESS.value,
                    _R.release_outcome == ReleaseOutcome.SUCCESS.value,
                    _R.published_result.is_not(None))
             .order_by(*_LATEST_FIRST).limit(1))


def make_engine(url: str | URL, **pool: Any) -> Engine:
    """The engine the SQL store uses for ``url`` (``pool``: SQLAlchemy's pool options): an
    in-memory SQLite database is one shared connection, a file is in WAL mode, PostgreSQL
    connections time out after :data:`CONNECT_TIMEOUT_S` unless the URL says otherwise."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        return create_engine(parsed, poolclass=StaticPool,
                             connect_args={"check_same_thread": False})
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
        # a server that accepts the connection and never answers is an error, not a hang
        connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
    engine = create_engine(parsed, connect_args=connect_args, **pool)
    if parsed.get_backend_name() == "sqlite":
        # A file database in WAL mode with synchronous=NORMAL: every commit is still atomic
        # and survives a crash of the process (the lifecycle's RUNNING-row guarantee), at a
        # small fraction of the cost of a full fsync per transaction.
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


WAL_SWITCH_WAIT_S = 5.0
"""How long a new SQLite connection tries to put its file in WAL mode while another
connection holds it (pysqlite's own default wait for a lock)."""


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        _wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def _wal(cursor: Any) -> None:
    """Put the file in WAL mode. SQLite refuses the switch at once while another connection
    holds the file (its busy wait does not cover it): two processes opening one fresh file
    together would see "database is locked". The switch is tried again for up to
    :data:`WAL_SWITCH_WAIT_S`; by then the other one has made the file WAL, and the pragma
    only reads that."""
    deadline = time.monotonic() + WAL_SWITCH_WAIT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def create_tables(engine: Engine, tables: MetaData) -> None:
    """Create the missing tables of ``tables`` and their indexes, also when another process
    creates them at the same moment (its CREATE lands between this one's check and its own
    CREATE). Each such collision means the other process made one more of them, so there are
    at most as many as there are tables and indexes."""
    attempts = 1 + sum(1 + len(table.indexes) for table in tables.tables.values())
    for attempt in range(attempts):
        try:
            tables.create_all(engine)
            return
        except (OperationalError, ProgrammingError, IntegrityError) as exc:
            if not _made_meanwhile(exc) or attempt == attempts - 1:
                raise


def _made_meanwhile(exc: SQLAlchemyError) -> bool:
    """Whether a CREATE failed because another process made the same table or index since
    this one looked: SQLite and PostgreSQL say it "already exists", or PostgreSQL's catalogue
    refuses the second type of the same name (a unique violation of ``pg_type``)."""
    text = str(exc)
    return "already exists" in text or "pg_type_typname_nsp_index" in text


class SqlRunStore:
    """A RunStore on SQLAlchemy Core; ``sqlite://`` (the default) is one shared in-memory DB.

    Pass ``engine`` to use an engine built elsewhere; ``url`` is then ignored. The tables are
    created if missing.
    """

    def __init__(self, url: str | URL = "sqlite://", *, engine: Engine | None = None) -> None:
        self.engine: Engine = engine if engine is not None else make_engine(url)
        # SQLite has one writer at a time; PostgreSQL's concurrent transactions take a lock
        # that lasts until their commit, so no two RUNNING rows get the same ordinal
        self._serialise_ordinals = self.engine.dialect.name == "postgresql"
        create_tables(self.engine, metadata)
        for index in diagnosis_run.indexes:  # a table made by an older release may lack one
            try:
                index.create(self.engine, checkfirst=True)
            except (OperationalError, ProgrammingError, IntegrityError) as exc:
                if not _made_meanwhile(exc):
                    raise

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> SqlRunStore:
        """A store in the SQLite file at ``path`` (created if missing)."""
        return cls(URL.create("sqlite", database=str(Path(path))))

    def close(self) -> None:
        """Release the engine's connections."""
        self.engine.dispose()

    @contextmanager
    def _writing(self, run_id: str, action: str) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except DRIVER_REFUSALS as exc:
            raise StoreError(f"run {run_id!a}: {action} failed: {one_line(exc)}",
                             run_id) from exc

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """Commit the RUNNING row and the RUN_STARTED event in one transaction."""
        check_start(start, started)
        event = event_row(started)
        with self._writing(start.run_id, "insert_running") as conn:
            if self._serialise_ordinals:  # concurrent MAX(ordinal) + 1 must not read alike
                conn.execute(_ORDINAL_LOCK)
            conn.execute(_INSERT_RUN, {"p_run_id": start.run_id,
                                       "p_session_id": start.session_id,
                                       "p_query": start.query,
                                       "p_created_at": start.created_at})
            conn.execute(_INSERT_EVENT, [event])
            self._with_running_row(conn, start)

    def _with_running_row(self, conn: Connection, start: RunStart) -> None:
        """Write what a subclass keeps with each RUNNING row, in its transaction (nothing
        here; the live server records which of its processes runs the run)."""

    def record_intent(self, run_id: str, intent: str) -> None:
        """Record the routed intent on the RUNNING row."""
        value = check_intent(run_id, intent)
        with self._writing(run_id, "record_intent") as conn:
            done = conn.execute(_SET_INTENT, {"p_run_id": run_id, "p_intent": value})
            if done.rowcount != 1:
                self._require_running(conn, run_id)  # raises the precise StoreError

    def complete(self, completion: RunCompletion) -> dict[str, Any]:
        """Write the completion, invocations and trace in one transaction; return the row."""
        check_completion(completion)
        run_id = completion.run_id
        invocations = [invocation_row(inv) for inv in completion.invocations]
        events = [event_row(ev) for ev in completion.trace]
        values = {f"p_{name}": getattr(completion, name) for name in COMPLETION_COLUMNS}
        values["p_run_id"] = run_id
        with self._writing(run_id, "complete") as conn:
            done = conn.execute(_COMPLETE, values)
            if done.rowcount != 1:
                self._require_running(conn, run_id)  # raises the precise StoreError
                raise StoreError(f"run {run_id} is no longer RUNNING", run_id)
            if invocations:
                conn.execute(_INSERT_INVOCATION, invocations)
            if events:
                conn.execute(_INSERT_EVENT, events)
            row = conn.execute(_ROW_OF, {"p_run_id": run_id}).one()
        return dict(row._mapping)

    @staticmethod
    def _require_running(conn: Connection, run_id: str) -> None:
        require_running(run_id, conn.execute(_STATUS_OF, {"p_run_id": run_id}
                                             ).scalar_one_or_none())

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored diagnosis_run row as a dict of exactly RUN_COLUMNS, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(_ROW_OF, {"p_run_id": run_id}).one_or_none()
        return None if row is None else dict(row._mapping)

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """The session's last ``history_limit`` finished turns and its PreviousTurn."""
        check_history_limit(history_limit)
        try:
            with self.engine.connect() as conn:
                turns = [dict(row._mapping) for row in conn.execute(
                    _HISTORY, {"p_session_id": session_id, "p_limit": history_limit})]
                last = conn.execute(_PREVIOUS, {"p_session_id": session_id}).one_or_none()
        except DRIVER_REFUSALS as exc:
            raise StoreError(f"session {session_id!a}: read failed: {one_line(exc)}") from exc
        return SessionContext(
            history=tuple(turn_from_row(row) for row in reversed(turns)),
            previous_turn=None if last is None else previous_turn_from_row(dict(last._mapping)),
        )

    def runs(self) -> list[dict[str, Any]]:
        """Every diagnosis_run row (RUN_COLUMNS), oldest first."""
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(_ALL_RUNS)]

    def invocations(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Invocation rows shaped like ``CanonicalInvocation.to_dict()``, by run then seq."""
        query = self._by_run(tool_invocation, run_id)
        with self.engine.connect() as conn:
            return [decoded(dict(row._mapping), "scope") for row in conn.execute(query)]

    def trace(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Trace rows shaped like ``TraceEvent.to_dict()``, by run then seq."""
        query = self._by_run(trace_event, run_id)
        with self.engine.connect() as conn:
            return [decoded(dict(row._mapping), "detail") for row in conn.execute(query)]

    @staticmethod
    def _by_run(table: Table, run_id: str | None) -> Select[Any]:
        query = (select(*table.c).join(diagnosis_run, _R.run_id == table.c.run_id)
                 .order_by(*_OLDEST_FIRST, table.c.seq))
        return query if run_id is None else query.where(table.c.run_id == run_id)
