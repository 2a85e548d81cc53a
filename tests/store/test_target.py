"""The database a command writes to, tried before any work: each refusal is one line."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect

from harness_lab.store.errors import StoreError
from harness_lab.store.target import open_writable, sqlite_path


def refusal(url: str, **kw: bool) -> str:
    """The one-line message ``open_writable(url)`` refuses ``url`` with."""
    with pytest.raises(StoreError) as caught:
        open_writable(url, **kw)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_writable_file_database_is_opened_with_its_tables(tmp_path: Path) -> None:
    store = open_writable(f"sqlite:///{tmp_path / 'runs.db'}", in_memory=False)
    tables = set(inspect(store.engine).get_table_names())
    store.close()
    assert {"diagnosis_run", "tool_invocation", "trace_event"} <= tables


def test_an_unparsable_url_is_refused_saying_what_a_url_looks_like() -> None:
    assert refusal("runs.db").startswith(
        "'runs.db' is not a database URL (for a SQLite file write sqlite:///runs.db): ")
    assert refusal("sqlite//runs.db").startswith(
        "'sqlite//runs.db' is not a database URL (for a SQLite file write sqlite:///")
    assert refusal("://runs.db").startswith(
        "'://runs.db' is not a database URL (e.g. sqlite:///runs.db or postgresql://")


def test_an_unknown_dialect_is_refused_by_name() -> None:
    assert refusal("nosuchdb://host/db") == "nosuchdb://host/db: no SQLAlchemy dialect named " \
                                            "'nosuchdb'"


def test_postgresql_without_its_driver_is_refused_naming_the_driver() -> None:
    # psycopg comes with the test extra; pg8000, another driver of SQLAlchemy's, with none
    assert importlib.util.find_spec("pg8000") is None
    message = refusal("postgresql+pg8000://user@localhost/runs")
    assert message.startswith("postgresql+pg8000://user@localhost/runs: the postgresql driver "
                              "is not installed (No module named 'pg8000')")


def test_a_database_in_a_missing_directory_is_refused_naming_the_directory(
        tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    assert refusal(f"sqlite:///{missing / 'runs.db'}") == (
        f"sqlite:///{missing / 'runs.db'}: the directory {missing} does not exist")
    assert not missing.exists()


def test_a_directory_as_database_is_refused(tmp_path: Path) -> None:
    assert refusal(f"sqlite:///{tmp_path}") == (
        f"sqlite:///{tmp_path}: {tmp_path} is a directory, not a database file")


def test_a_fifo_as_database_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "runs.db"
    os.mkfifo(fifo)
    assert refusal(f"sqlite:///{fifo}").endswith(f"{fifo} is not a regular file")


def test_a_file_that_is_not_a_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"not a database, " * 512)
    assert refusal(f"sqlite:///{notes}") == (
        f"cannot open sqlite:///{notes}: DatabaseError: file is not a database")
    assert notes.read_bytes() == b"not a database, " * 512


def a_database(path: Path) -> Path:
    """A SQLite file holding the run tables."""
    open_writable(f"sqlite:///{path}").close()
    return path


def test_a_database_opened_read_only_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    db = a_database(tmp_path / "runs.db")
    message = refusal(f"sqlite:///file:{db}?mode=ro&uri=true")
    assert message.endswith("OperationalError: attempt to write a readonly database")


def test_a_read_only_database_file_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        db = a_database(tmp_path / "runs.db")
        db.chmod(0o444)
        assert "readonly database" in refusal(f"sqlite:///{db}")
        return
    # root writes to any file: the check runs as nobody, in a directory nobody may enter
    # (the interpreter is root's, so the process imports first and then drops its rights)
    shared = Path(tempfile.mkdtemp(prefix="readonly-"))
    try:
        shared.chmod(0o755)
        db = a_database(shared / "runs.db")
        db.chmod(0o444)
        nobody = pwd.getpwnam("nobody").pw_uid
        code = ("import os, sys\n"
                "from harness_lab.store.errors import StoreError\n"
                "from harness_lab.store.target import open_writable\n"
                "open_writable('sqlite://').close()\n"  # the driver loaded, as root
                f"os.setgroups([]); os.setgid({nobody}); os.setuid({nobody})\n"
                "try:\n"
                "    open_writable(sys.argv[1]).close(); print('opened')\n"
                "except StoreError as exc:\n"
                "    print(exc)\n")
        done = subprocess.run([sys.executable, "-c", code, f"sqlite:///{db}"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "readonly database" in done.stdout
        assert "\n" not in done.stdout.strip()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A database another connection holds an exclusive lock on."""
    db = a_database(tmp_path / "runs.db")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield db
    holder.rollback()
    holder.close()


def test_a_locked_database_is_refused_once_the_drivers_wait_is_over(locked: Path) -> None:
    wait = f"sqlite:///{locked}?timeout=0.2"  # the URL's wait, not the driver's default 5 s
    assert refusal(wait).endswith("OperationalError: database is locked")


def test_an_in_memory_database_is_refused_where_work_spans_processes() -> None:
    assert refusal("sqlite://", in_memory=False).startswith(
        "sqlite:// is an in-memory database: each worker would write its own")
    open_writable("sqlite://").close()


def test_the_file_of_a_sqlite_url_is_found_in_each_spelling(tmp_path: Path) -> None:
    from sqlalchemy.engine import make_url

    db = tmp_path / "runs.db"
    assert sqlite_path(make_url(f"sqlite:///{db}")) == db
    assert sqlite_path(make_url(f"sqlite:///file:{db}?mode=ro&uri=true")) == db
    assert sqlite_path(make_url("sqlite://")) is None
    assert sqlite_path(make_url("sqlite:///:memory:")) is None
    assert sqlite_path(make_url("postgresql://h/db")) is None
