"""A throwaway PostgreSQL server for tests: ``initdb`` and ``pg_ctl`` on a free port.

The cluster lives in a temporary directory and is removed at the end of the session. The
server refuses to run as root, so as root the cluster belongs to ``nobody`` and its commands
run as that user. Tests that need it skip, saying why, when the server's programs are
missing (``apt-get install postgresql``; ``.ci/run`` installs it, and under CI a skip fails).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "pg_bin", "postgres_server", "postgres_url"]


def pg_bin(program: str) -> str | None:
    """The path of a PostgreSQL server program (initdb, pg_ctl), or None."""
    found = shutil.which(program)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_owner(cmd: list[str], uid: int | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          user=uid, group=None if uid is None else pwd.getpwuid(uid).pw_gid,
                          extra_groups=None if uid is None else [], cwd="/")


class PostgresServer:
    """A PostgreSQL cluster in a temporary directory: its URL, and stop and start, so a test
    can take the database away from a running program and give it back."""

    def __init__(self, initdb: str, pg_ctl: str) -> None:
        self.pg_ctl = pg_ctl
        self.uid = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else None
        self.home = Path(tempfile.mkdtemp(prefix="harness-lab-pg-"))
        self.data = self.home / "data"
        if self.uid is not None:
            self.home.chmod(0o755)
            os.chown(self.home, self.uid, pwd.getpwuid(self.uid).pw_gid)
        self.port = _free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        done = _as_owner([initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust",
                          "-E", "UTF8", "--no-sync", "--no-instructions"], self.uid)
        assert done.returncode == 0, f"initdb failed: {done.stderr}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (f"-p {self.port} -k {self.home} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        done = _as_owner([self.pg_ctl, "-D", str(self.data), "-o", options, "-l",
                          str(self.home / "log"), "-w", "-t", "60", "start"], self.uid)
        assert done.returncode == 0, f"pg_ctl start failed: {done.stderr} {done.stdout}"

    def fresh_database(self) -> str:
        """The URL of a new, empty database on this server (the session's one is shared)."""
        import uuid

        from sqlalchemy import create_engine, text

        name = f"db_{uuid.uuid4().hex[:12]}"
        engine = create_engine(self.url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.execute(text(f"CREATE DATABASE {name}"))
        finally:
            engine.dispose()
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        """Stop the server at once (its clients' connections break), if it runs."""
        if (self.data / "postmaster.pid").exists():
            _as_owner([self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                      self.uid)

    @contextmanager
    def hung(self) -> Iterator[None]:
        """The server and its backends stopped (SIGSTOP) for the block, then resumed: its
        connections stay open and nothing answers, as a database that hangs."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        processes = [postmaster, *_children(postmaster)]
        for pid in processes:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in processes:
                os.kill(pid, signal.SIGCONT)

    def remove(self) -> None:
        """Stop the server and delete the cluster."""
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def _children(pid: int) -> list[int]:
    """The ids of the processes whose parent is ``pid`` (Linux's ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running throwaway PostgreSQL server; a test that stops it starts it again."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("needs the PostgreSQL server programs initdb and pg_ctl "
                    "(apt-get install postgresql)")
    server = PostgresServer(initdb, pg_ctl)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """The SQLAlchemy URL (psycopg 3) of a fresh, empty PostgreSQL database."""
    return postgres_server.url
