"""Work spread over local worker processes, where a worker that dies costs only its own work.

Sweeps and the explorer hand their chunks to :func:`in_workers`: joblib's loky processes
(one pool, reused across calls), at most one chunk per worker in flight. A worker killed
(out of memory, ``kill -9``, a crash in native code) breaks the pool and fails every chunk
then running; a fresh pool takes the chunks still to run, and each chunk that failed so
runs once more, alone: with no other chunk in flight, a chunk that kills its worker again
is surely the one that does, and it alone comes back as what ``lost`` makes of it (error
rows, an inconclusive verdict). A chunk that raises comes back so at once: it would raise
again. Every worker watches this process (:func:`~harness_lab.parent_watch.watch_parent`),
so none goes on working after it is gone; stopped early (Ctrl-C), the running workers are
ended and waited for before the caller goes on.
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, TypeVar

__all__ = ["IDLE_WORKER_S", "Call", "available_cores", "in_workers", "ran_again",
           "why_lost"]

IDLE_WORKER_S = 300
"""Seconds an idle worker of the pool waits for more work before it exits."""

Result = TypeVar("Result")

Call = tuple[tuple[Any, ...], Mapping[str, Any]]
"""The positional and keyword arguments of one call of the job."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it): the
    default number of workers of sweeps, the explorer and audits."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not on Linux
        return max(os.cpu_count() or 1, 1)


def in_workers(job: Callable[..., Result], calls: Sequence[Call], workers: int,
               lost: Callable[[int, BaseException], Result],
               again: Callable[[int, Call], Call] | None = None
               ) -> Iterator[tuple[int, Result]]:
    """``job(*args, **kwargs)`` for each of ``calls`` on ``workers`` processes, yielding
    ``(index, result)`` as calls complete (those that complete together in index order).

    A call whose worker process died runs once more, alone: as ``again(index, call)``
    makes it, when given (the call marked as a second run, and the caller told), else as it
    was. A call that raises, or whose worker died on that second run too, yields
    ``lost(index, exception)`` instead.
    """
    from joblib.externals.loky import get_reusable_executor
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    from harness_lab.parent_watch import watch_parent

    todo = deque(range(len(calls)))
    retry: deque[int] = deque()  # calls whose worker died, each to run once more, alone
    retried: set[int] = set()
    running: dict[Future[Result], int] = {}
    main = threading.current_thread() is threading.main_thread()
    executor = None

    def submit(pool: Any, index: int, call: Call) -> Future[Result]:
        args, kwargs = call
        return pool.submit(job, *args, **kwargs)

    try:
        while todo or retry or running:  # the same pool while it works, a fresh one after
            executor = get_reusable_executor(max_workers=workers, timeout=IDLE_WORKER_S,
                                             initializer=watch_parent,
                                             initargs=(os.getpid(), main))
            if retry:  # a call whose worker died runs again alone, once the others are done
                if not running:
                    index = retry.popleft()
                    call = calls[index] if again is None else again(index, calls[index])
                    running[submit(executor, index, call)] = index
            else:
                while todo and len(running) < workers:
                    index = todo.popleft()
                    running[submit(executor, index, calls[index])] = index
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.__getitem__):
                index = running.pop(future)
                try:
                    result = future.result()
                except TerminatedWorkerError as exc:
                    if index not in retried:
                        retried.add(index)
                        retry.append(index)
                        continue
                    result = lost(index, exc)
                except Exception as exc:
                    result = lost(index, exc)
                yield index, result
    finally:
        if running and executor is not None:  # stopped early: the running work is abandoned,
            # its workers ended and waited for, so nothing is written after the caller returns
            executor.shutdown(wait=True, kill_workers=True)


def why_lost(exc: BaseException) -> str:
    """One line saying why a call came back without its result: for a worker process that
    died, that and its exit code as loky gives it (``SIGKILL(-9)``; the standard library's
    pool gives none); otherwise the exception and the first line of its message."""
    from concurrent.futures.process import BrokenProcessPool

    text = str(exc).strip()
    died = _DIED.search(text)
    if died:
        return f"its worker process died (exit {died['codes']})"
    if isinstance(exc, BrokenProcessPool):
        return "its worker process died"
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def ran_again(chunks: int, unit: tuple[str, str] = ("chunk", "chunks")) -> str:
    """How a summary says that ``chunks`` chunks (``unit``: what they are called, one and
    many) ran again after a worker process died:
    ``1 chunk ran again after a worker process died``."""
    return f"{chunks:,} {unit[chunks != 1]} ran again after a worker process died"


_DIED = re.compile(r"exit codes of the workers are \{(?P<codes>[^}]*)\}")
