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
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["pg_bin", "postgres_url"]


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


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The SQLAlchemy URL (psycopg 3) of a fresh, empty PostgreSQL database."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("needs the PostgreSQL server programs initdb and pg_ctl "
                    "(apt-get install postgresql)")
    uid = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else None
    home = Path(tempfile.mkdtemp(prefix="harness-lab-pg-"))
    data = home / "data"
    if uid is not None:
        home.chmod(0o755)
        os.chown(home, uid, pwd.getpwuid(uid).pw_gid)
    port = _free_port()
    try:
        done = _as_owner([initdb, "-D", str(data), "-U", "postgres", "--auth=trust",
                          "-E", "UTF8", "--no-sync", "--no-instructions"], uid)
        assert done.returncode == 0, f"initdb failed: {done.stderr}"
        options = (f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        done = _as_owner([pg_ctl, "-D", str(data), "-o", options, "-l", str(home / "log"),
                          "-w", "-t", "60", "start"], uid)
        assert done.returncode == 0, f"pg_ctl start failed: {done.stderr} {done.stdout}"
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            _as_owner([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], uid)
        shutil.rmtree(home, ignore_errors=True)
