"""The live server's run store: the SQL store, its writes serialised for an SQLite file."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_lab.store.base import RunCompletion, RunStart, SessionContext
from harness_lab.store.sql import SqlRunStore
from harness_lab.trace import TraceEvent

__all__ = ["DEFAULT_DB", "SerialStore", "database_url", "open_store"]

DEFAULT_DB = "harness_lab.db"
"""The SQLite file ``serve`` stores runs in unless ``--db`` says otherwise."""


def database_url(db: str) -> str:
    """``db`` as an SQLAlchemy URL: a URL as given, a path as an SQLite file URL.

    ValueError when the file's directory does not exist (said before anything starts).
    """
    if "://" in db:
        return db
    path = Path(db).expanduser()
    if path.is_dir():
        raise ValueError(f"--db {db}: is a directory, not a database file")
    if not path.parent.is_dir():
        raise ValueError(f"--db {db}: the directory {str(path.parent)!r} does not exist")
    return f"sqlite:///{path.resolve()}"


class SerialStore:
    """A store whose calls run one at a time: SQLite has one writer, and a queue in the
    process is fairer to hundreds of runs than SQLite's busy-wait on its file lock."""

    def __init__(self, inner: SqlRunStore) -> None:
        self.inner = inner
        self._lock = threading.Lock()

    def read_session(self, session_id: str, history_limit: int) -> SessionContext:
        """As the SQL store's, one call at a time."""
        with self._lock:
            return self.inner.read_session(session_id, history_limit)

    def insert_running(self, start: RunStart, started: TraceEvent) -> None:
        """As the SQL store's, one call at a time."""
        with self._lock:
            self.inner.insert_running(start, started)

    def record_intent(self, run_id: str, intent: str) -> None:
        """As the SQL store's, one call at a time."""
        with self._lock:
            self.inner.record_intent(run_id, intent)

    def complete(self, completion: RunCompletion) -> Mapping[str, Any]:
        """As the SQL store's, one call at a time."""
        with self._lock:
            return self.inner.complete(completion)

    def get_run(self, run_id: str) -> Mapping[str, Any] | None:
        """As the SQL store's, one call at a time."""
        with self._lock:
            return self.inner.get_run(run_id)

    def trace(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """As the SQL store's, one call at a time."""
        with self._lock:
            return self.inner.trace(run_id)

    def close(self) -> None:
        """Release the engine's connections."""
        self.inner.close()


def open_store(url: str) -> SqlRunStore | SerialStore:
    """The SQL store at ``url`` (tables created if missing), serialised for SQLite."""
    store = SqlRunStore(url)
    return SerialStore(store) if store.engine.dialect.name == "sqlite" else store
