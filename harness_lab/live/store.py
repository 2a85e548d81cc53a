"""The live server's run store: the SQL store, runs dated by the wall clock, writes serialised
for an SQLite file."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, literal, select
from sqlalchemy.pool import StaticPool

from harness_lab.live.instances import OwnedRunStore
from harness_lab.store.base import RunCompletion, RunStart, SessionContext
from harness_lab.store.sql import (
    DRIVER_REFUSALS,
    SqlRunStore,
    diagnosis_run,
    make_engine,
    one_line,
)
from harness_lab.trace import TraceEvent

__all__ = ["DEFAULT_DB", "LiveStore", "database_url", "open_store", "store_problem"]

DEFAULT_DB = "harness_lab.db"
"""The SQLite file ``serve`` stores runs in unless ``--db`` says otherwise."""


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
"""How a URL's scheme starts a ``--db`` value (two letters at least: ``C:`` is a drive)."""


def database_url(db: str) -> str:
    """``db`` as an SQLAlchemy URL: a URL as given, a path as an SQLite file URL.

    ValueError when it names a SQLite file that cannot be one (a directory, a path in a
    missing directory), as a sweep's ``--persist`` says it, before anything starts, and when
    it reads as a URL that lost its ``//`` (``postgresql:db``), which would else become a
    SQLite file of that name.
    """
    from harness_lab.redact import shown_url
    from harness_lab.store.errors import StoreError
    from harness_lab.store.target import check_sqlite_file, parse_url, sqlite_path

    if "://" not in db and _SCHEME.match(db):
        raise ValueError(f"--db {shown_url(db)}: a database URL without its // (a URL reads "
                         f"DIALECT://..., e.g. postgresql://user@host/db); for a SQLite file "
                         f"of that name write ./{db}")
    url = db if "://" in db else f"sqlite:///{Path(db).expanduser().absolute()}"
    try:
        path = sqlite_path(parse_url(url))
        if path is not None:
            check_sqlite_file(f"--db {shown_url(db)}", path)
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    return url


class LiveStore:
    """The SQL store as ``serve`` uses it: runs dated by the wall clock, writes serialised on
    SQLite.

    ``created_at`` and ``finished_at`` are stored as Unix time (seconds), not as the run's
    clock (which counts from the server's start), so history and the previous turn, ordered by
    ``created_at``, hold across restarts and across servers sharing one database. A run's
    ``finished_at`` is its ``created_at`` plus the ``monotonic`` seconds since, so a wall clock
    set back meanwhile (a time sync) never dates a finish before its start. SQLite has
    one writer, and a queue in the process is fairer to hundreds of runs than SQLite's
    busy-wait on its file lock; PostgreSQL takes concurrent writes.

    ``probe`` is the engine :func:`store_problem` asks (by default the store's own): one
    connection of its own, so a health check asks the database even while hundreds of runs
    hold every connection of the store's pool.
    """

    def __init__(self, inner: SqlRunStore, *, serial: bool,
                 wall: Callable[[], float] = time.time, probe: Engine | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.wall = wall
        self.monotonic = monotonic
        # each run in flight: (its created_at, the monotonic clock then); a run's own thread
        # adds and removes its entry
        self._began: dict[str, tuple[float, float]] = {}
        self.probe = probe if probe is not None else inner.engine
        self._lock: threading.Lock | nullcontext[None] = (
            threading.Lock() if serial else nullcontext())

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """As the SQL store's."""
        with self._lock:
            return self.inner.read_session(session_id, history_limit)

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """As the SQL store's, the row dated now by the wall clock."""
        start = replace(start, created_at=self.wall())
        began = self.monotonic()
        with self._lock:
            self.inner.insert_running(start, started)
        self._began[start.run_id] = (start.created_at, began)

    def record_intent(self, run_id: str, intent: str) -> None:
        """As the SQL store's."""
        with self._lock:
            self.inner.record_intent(run_id, intent)

    def complete(self, completion: RunCompletion) -> Mapping[str, Any]:
        """As the SQL store's, ``finished_at`` dated now: the run's ``created_at`` plus the
        monotonic time since (the wall clock's now for a run this store did not start)."""
        began = self._began.pop(completion.run_id, None)
        finished = (self.wall() if began is None
                    else began[0] + (self.monotonic() - began[1]))
        completion = replace(completion, finished_at=finished)
        with self._lock:
            return self.inner.complete(completion)

    def get_run(self, run_id: str) -> Mapping[str, Any] | None:
        """As the SQL store's."""
        with self._lock:
            return self.inner.get_run(run_id)

    def trace(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """As the SQL store's."""
        with self._lock:
            return self.inner.trace(run_id)

    def close(self) -> None:
        """Release the engines' connections."""
        if self.probe is not self.inner.engine:
            self.probe.dispose()
        self.inner.close()


def open_store(url: str, owner: str | None = None) -> LiveStore:
    """The SQL store at ``url`` (tables created if missing), as ``serve`` uses it; given
    ``owner`` (a serve instance id), each RUNNING row notes that it runs it.

    A store ``serve`` could read but not write (a read-only file or URI, a read-only
    PostgreSQL transaction mode) is refused here, before the server starts: one write that
    changes nothing is tried and rolled back.
    """
    store = SqlRunStore(url) if owner is None else OwnedRunStore(url, owner)
    try:
        with store.engine.begin() as conn:
            conn.execute(delete(diagnosis_run).where(literal(1) == literal(0)))
    except BaseException:
        store.close()
        raise
    engine = store.engine
    probe = (engine if isinstance(engine.pool, StaticPool)  # one in-memory database
             else make_engine(engine.url, pool_size=1, max_overflow=0, pool_timeout=1))
    return LiveStore(store, serial=engine.dialect.name == "sqlite", probe=probe)


def store_problem(store: LiveStore) -> str | None:
    """Why the store does not answer a query now (one line), or None when it does."""
    try:
        with store.probe.connect() as conn:
            conn.execute(select(literal(1)))
    except DRIVER_REFUSALS as exc:
        return one_line(exc)
    return None
