"""The database a command will write to, opened and tried before any work starts.

A command that persists runs (a sweep with ``--persist``, say) calls :func:`open_writable`
first: an unparsable URL, a dialect whose driver is not installed, a SQLite path in a missing
directory or on a directory, a file that is not a database, a read-only or locked database
all fail here, as one :class:`StoreError` line naming the URL and the reason, instead of as a
traceback (or as runs silently not stored) after the work ran.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import false, update
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from harness_lab.redact import shown_url
from harness_lab.states import StoredRunStatus
from harness_lab.store.errors import StoreError
from harness_lab.store.sql import DRIVER_REFUSALS, SqlRunStore, diagnosis_run, one_line

__all__ = ["check_sqlite_file", "missing_driver", "open_writable", "parse_url", "sqlite_path"]

_DRIVERS = {"postgresql": "psycopg with: pip install 'harness_lab[live]' (psycopg2 for a "
                          "postgresql+psycopg2:// URL)",
            "mysql": "mysqlclient (or PyMySQL)", "mssql": "pyodbc", "oracle": "oracledb"}


def missing_driver(url: URL, exc: ImportError) -> str:
    """Why ``url`` cannot be opened when its driver is not installed, and what to install."""
    backend = url.get_backend_name()
    return (f"the {backend} driver is not installed ({exc}); install "
            f"{_DRIVERS.get(backend, 'its driver')}")


def parse_url(url: str | URL) -> URL:
    """``url`` parsed, or a StoreError saying what a database URL looks like."""
    try:
        return make_url(url)
    except (ArgumentError, ValueError) as exc:
        text = str(url)
        hint = (f"for a SQLite file write sqlite:///{text}" if "://" not in text
                else "e.g. sqlite:///runs.db or postgresql://user@host/db")
        raise StoreError(f"{text!r} is not a database URL ({hint}): {exc}") from exc


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL, or None for an in-memory database or another dialect."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database
    if url.query.get("uri") in ("true", "1") and database is not None:
        if "mode=memory" in database or url.query.get("mode") == "memory":
            return None
        database = database.removeprefix("file:")
    if database in (None, "", ":memory:"):
        return None
    return Path(database)


def open_writable(url: str | URL, *, in_memory: bool = True) -> SqlRunStore:
    """A store on ``url`` whose tables exist and that has just accepted a write.

    Raises StoreError (one line, naming the URL) when it cannot be: the URL does not parse,
    the dialect or its driver is missing, a SQLite file's directory is missing or the path is
    a directory or not a regular file, the file is not a database, or the database refuses
    writes (read-only, locked past the driver's timeout). ``in_memory=False`` refuses an
    in-memory database too (for work spread over processes, each of which would get its own,
    lost at its end). The write tried is an UPDATE that matches no row, in a transaction
    that commits nothing.
    """
    parsed = parse_url(url)
    shown = shown_url(url)
    path = sqlite_path(parsed)
    if path is not None:
        check_sqlite_file(shown, path)
    elif parsed.get_backend_name() == "sqlite" and not in_memory:
        raise StoreError(f"{shown} is an in-memory database: each worker would write its own "
                         "and lose it; give a file, e.g. sqlite:///runs.db")
    try:
        store = SqlRunStore(parsed)
    except NoSuchModuleError as exc:
        raise StoreError(f"{shown}: no SQLAlchemy dialect named "
                         f"{parsed.drivername!r}") from exc
    except ImportError as exc:
        raise StoreError(f"{shown}: {missing_driver(parsed, exc)}") from exc
    except DRIVER_REFUSALS as exc:
        raise StoreError(f"cannot open {shown}: {one_line(exc)}") from exc
    try:
        with store.engine.begin() as conn:
            conn.execute(update(diagnosis_run).where(false())
                         .values(status=StoredRunStatus.RUNNING.value))
    except DRIVER_REFUSALS as exc:
        store.close()
        raise StoreError(f"cannot write to {shown}: {one_line(exc)}") from exc
    return store


def check_sqlite_file(shown: str, path: Path) -> None:
    """Refuse (StoreError, beginning with ``shown``) a SQLite path that cannot become a
    database file: a directory, a path in a missing directory, not a regular file."""
    if path.is_dir():
        raise StoreError(f"{shown}: {path} is a directory, not a database file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise StoreError(f"{shown}: the directory {parent} does not exist")
    if path.exists() and not path.is_file():
        raise StoreError(f"{shown}: {path} is not a regular file")
