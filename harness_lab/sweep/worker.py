"""What a sweep's local worker process does first: end itself when the sweep is gone.

A sweep killed with ``kill -9`` cannot stop its workers, and a worker left running would
play its chunk to the end and commit it into the database after the sweep died. Each worker
therefore watches the process that started it: on every system a daemon thread checks twice
a second that its parent is still the sweep and exits at once otherwise, and on Linux, when
the pool was started from the sweep's main thread, the kernel sends it SIGKILL the moment
that process ends (``prctl(PR_SET_PDEATHSIG)``). The kernel's signal follows the *thread*
that started the worker, so a pool started from another thread (a sweep run from a thread
pool, say) relies on the watching thread alone, lest the worker die with that thread.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["CHECK_EVERY_S", "watch_parent"]

CHECK_EVERY_S = 0.5
"""How often a worker checks that the sweep's process is still its parent."""

_PR_SET_PDEATHSIG = 1


def watch_parent(parent_pid: int, from_main_thread: bool = False) -> None:
    """Make this process end when ``parent_pid`` (the sweep) is no longer its parent.

    Runs as the initializer of each worker of the pool; ``from_main_thread`` says the pool
    was started from the sweep's main thread (see the module's docstring).
    """
    if from_main_thread and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the thread below still watches
            pass
    if os.getppid() != parent_pid:  # the sweep died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid,), name="sweep-parent-watch",
                     daemon=True).start()


def _watch(parent_pid: int) -> None:
    while True:
        time.sleep(CHECK_EVERY_S)
        if os.getppid() != parent_pid:
            os._exit(1)
