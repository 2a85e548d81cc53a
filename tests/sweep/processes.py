"""Sweeps run as a user runs them, in a process of their own, for the tests that kill them."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

WAIT_S = 60.0
"""The longest any wait below lasts before the test fails (a bound, never a measurement)."""


def start_sweep(args: Sequence[str]) -> subprocess.Popen[str]:
    """``harness-lab sweep ARGS`` started in a session of its own (Ctrl-C reaches only it),
    with SIGINT neither ignored nor blocked, as a terminal starts it, whatever the process
    running the suite inherited (a shell's background job ignores it) or a test before
    did to it."""
    return subprocess.Popen([sys.executable, "-m", "harness_lab", "sweep", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after :data:`WAIT_S`."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {WAIT_S} s for {what}")
        time.sleep(0.05)


def completed_runs(db: Path) -> int:
    """Completed diagnosis_run rows of the SQLite file ``db`` (0 while it has none)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM diagnosis_run "
                                    "WHERE status != 'RUNNING'").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not there yet
        return 0


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def kill_a_worker(pid: int) -> None:
    """Wait until the process ``pid`` has its two loky worker processes, and SIGKILL one."""

    def workers() -> list[int]:
        return [c for c in children(pid)
                if "popen_loky" in Path(f"/proc/{c}/cmdline").read_text(errors="replace")]

    wait_for(lambda: len(workers()) == 2, "the two worker processes")
    os.kill(workers()[0], signal.SIGKILL)


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def semaphores_of(pid: int) -> list[str]:
    """The loky semaphores process ``pid`` made that are still in /dev/shm."""
    shm = Path("/dev/shm")
    return sorted(p.name for p in shm.glob(f"sem.loky-{pid}-*")) if shm.is_dir() else []


def kill_session(proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    """Send ``sig`` to the sweep alone (kill -9) or, for SIGINT, to its whole session as a
    terminal's Ctrl-C does."""
    if sig is signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
