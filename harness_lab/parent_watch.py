"""A child process that ends itself when the process that started it is gone.

A process killed with ``kill -9`` (or a test run stopped midway) cannot stop its children,
and a child left running would go on working for nobody: a sweep's worker would play its
chunk to the end and commit it into the database after the sweep died, a ``harness-lab
serve`` started by ``conform`` or a test would hold its port for ever. Such a child therefore
watches its parent: on every system a daemon thread checks twice a second that its parent is
still the one that started it and exits at once otherwise, and on Linux, when the child was
started from its parent's main thread, the kernel sends it SIGKILL the moment that process
ends (``prctl(PR_SET_PDEATHSIG)``). The kernel's signal follows the *thread* that started the
child, so a child started from another thread (a sweep run from a thread pool, say) relies on
the watching thread alone, lest it die with that thread.

A parent asks a ``harness-lab`` command to watch it by putting its pid in the environment
variable :data:`PARENT_ENV` (:func:`watched_by_this_process` gives the pair).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping

__all__ = ["CHECK_EVERY_S", "PARENT_ENV", "watch_parent", "watch_parent_named_in",
           "watched_by_this_process"]

CHECK_EVERY_S = 0.5
"""How often a child checks that its parent is still there."""

PARENT_ENV = "HARNESS_LAB_PARENT_PID"
"""The environment variable naming the parent a ``harness-lab`` command ends with."""

_PR_SET_PDEATHSIG = 1


def watch_parent(parent_pid: int, from_main_thread: bool = False) -> None:
    """Make this process end when ``parent_pid`` is no longer its parent.

    ``from_main_thread`` says the parent started this process from its main thread (see the
    module's docstring); a sweep's workers run this as their pool's initializer.
    """
    if from_main_thread and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the thread below still watches
            pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid,), name="parent-watch",
                     daemon=True).start()


def watch_parent_named_in(environ: Mapping[str, str] = os.environ) -> bool:
    """Watch the parent :data:`PARENT_ENV` names (``PID``, or ``PID:main`` when it started
    this process from its main thread), if it names one; whether it did."""
    pid, _, thread = environ.get(PARENT_ENV, "").partition(":")
    if not pid.isdigit():
        return False
    watch_parent(int(pid), from_main_thread=thread == "main")
    return True


def watched_by_this_process() -> dict[str, str]:
    """The environment entry that makes a child ``harness-lab`` command, started from the
    calling thread, end with this process."""
    main = threading.current_thread() is threading.main_thread()
    return {PARENT_ENV: f"{os.getpid()}:main" if main else str(os.getpid())}


def _watch(parent_pid: int) -> None:
    while True:
        time.sleep(CHECK_EVERY_S)
        if os.getppid() != parent_pid:
            os._exit(1)
