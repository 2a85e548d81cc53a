"""Audit runs across worker processes, in the source's order, with a bounded number of
batches in flight so memory does not grow with the source.

A database is read by the workers themselves: this process streams the run rows a batch at
a time and each worker, on its own connection, reads the batch's trace and invocation rows,
rebuilds and checks its runs. Runs already in memory (an export) are handed out as rows.

A worker process that dies (killed, out of memory) costs no more than it must: the batches
then in flight run once more, each alone on a fresh pool, and only a batch whose worker dies
again is lost, its runs ``unreadable`` with a note saying they were not audited and why, as
:func:`harness_lab.pool.in_workers` does for sweeps and the explorer.
"""

from __future__ import annotations

import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any

from harness_lab.audit.checked import AuditedRun, audited
from harness_lab.audit.sources import BATCH, SqlReader
from harness_lab.pool import why_lost

__all__ = ["IN_FLIGHT", "audited_in_workers", "audited_sql_in_workers"]

IN_FLIGHT = 2
"""Batches (of :data:`~harness_lab.audit.sources.BATCH` runs) queued per worker beyond the
one it works on."""

_reader: SqlReader | None = None  # a worker's own connection to the database


def _audit_rows(batch: list[tuple[str, Any]]) -> list[AuditedRun]:
    """Each run of a batch of (run id, rows) audited (in a worker)."""
    return [audited(run_id, None, rows) for run_id, rows in batch]


def _start(database: tuple[str, Mapping[str, Any] | None] | None) -> None:
    """Start a worker: Ctrl-C is left to the reading process, which stops the workers; a
    database is opened on the worker's own connection."""
    global _reader  # noqa: PLW0603 (one per worker process)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if database is not None:
        _reader = SqlReader(*database)


def _audit_run_rows(batch: list[dict[str, Any]]) -> list[AuditedRun]:
    """Each run of a batch of run rows read whole and audited (in a worker)."""
    assert _reader is not None, "the worker's database is opened by _start"
    return [audited(str(rows.row["run_id"]), None, rows) for rows in _reader.with_children(batch)]


def audited_in_workers(runs: Iterable[tuple[str, Any]], workers: int,
                       again: Callable[[], None] | None = None) -> Iterator[AuditedRun]:
    """Each run of (run id, rows) audited by ``workers`` processes, in ``runs``' order;
    ``again()`` is told of each batch that runs again, its worker process having died."""
    items = iter(runs)
    batches = iter(lambda: list(islice(items, BATCH)), [])
    return _in_workers(batches, _audit_rows, workers, None, again)


def audited_sql_in_workers(url: str, mapping: Mapping[str, Any] | None, workers: int,
                           again: Callable[[], None] | None = None) -> Iterator[AuditedRun]:
    """Each run of a database audited by ``workers`` processes, in its run table's order;
    ``again`` as for :func:`audited_in_workers`."""
    reader = SqlReader(url, mapping)
    try:
        yield from _in_workers(reader.run_batches(), _audit_run_rows, workers, (url, mapping),
                               again)
    finally:
        reader.close()


def _in_workers(batches: Iterator[list[Any]], task: Callable[[list[Any]], list[AuditedRun]],
                workers: int, database: tuple[str, Mapping[str, Any] | None] | None,
                again: Callable[[], None] | None = None) -> Iterator[AuditedRun]:
    """Each run of ``batches`` audited by ``task`` on ``workers`` processes, in order.

    A worker process that dies breaks the pool, failing every batch in flight: each of them
    runs once more on a fresh pool, alone and in order (``again()`` told of it), and one
    whose worker dies again, surely the one that kills it, comes back as its runs not
    audited; then a fresh pool audits the rest.
    """
    while True:
        redo: list[tuple[list[Any], list[AuditedRun] | None]] = []
        yield from _until_broken(batches, task, workers, database, redo)
        if not redo:
            return
        for batch, runs in redo:
            if runs is None:
                if again is not None:
                    again()
                runs = _alone(batch, task, database)
            yield from runs


def _pool(workers: int, database: tuple[str, Mapping[str, Any] | None] | None
          ) -> ProcessPoolExecutor:
    """A pool of ``workers`` fresh processes, each started by :func:`_start`."""
    import multiprocessing

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start, initargs=(database,))


def _until_broken(batches: Iterator[list[Any]],
                  task: Callable[[list[Any]], list[AuditedRun]], workers: int,
                  database: tuple[str, Mapping[str, Any] | None] | None,
                  redo: list[tuple[list[Any], list[AuditedRun] | None]]
                  ) -> Iterator[AuditedRun]:
    """The runs of ``batches`` audited on one pool until a worker process dies: then the
    batches in flight are put in ``redo``, in order (see :func:`_next_runs`), the rest left
    in ``batches``."""
    pending: deque[tuple[list[Any], Future[list[AuditedRun]]]] = deque()
    with _pool(workers, database) as pool:
        try:
            for batch in batches:
                pending.append((batch, _submit(pool, task, batch)))
                if len(pending) >= workers * (1 + IN_FLIGHT):
                    yield from _next_runs(pending, redo)
                    if redo:
                        return
            while pending:
                yield from _next_runs(pending, redo)
                if redo:
                    return
        finally:
            for _, future in pending:
                future.cancel()


def _submit(pool: ProcessPoolExecutor, task: Callable[[list[Any]], list[AuditedRun]],
            batch: list[Any]) -> Future[list[AuditedRun]]:
    """The batch handed to the pool; failed as its batches in flight are, if the pool broke
    since the last one was."""
    try:
        return pool.submit(task, batch)
    except BrokenProcessPool as exc:
        failed: Future[list[AuditedRun]] = Future()
        failed.set_exception(exc)
        return failed


def _next_runs(pending: deque[tuple[list[Any], Future[list[AuditedRun]]]],
               redo: list[tuple[list[Any], list[AuditedRun] | None]]) -> list[AuditedRun]:
    """The runs of the first batch in flight, or none if its worker process died: every
    batch in flight is then moved to ``redo``, with its runs if it was audited before the
    pool broke, else with None."""
    batch, future = pending.popleft()
    try:
        return future.result()
    except BrokenProcessPool:
        redo.append((batch, None))
    while pending:
        batch, future = pending.popleft()
        died = isinstance(future.exception(), BrokenProcessPool)
        redo.append((batch, None if died else future.result()))
    return []


def _alone(batch: list[Any], task: Callable[[list[Any]], list[AuditedRun]],
           database: tuple[str, Mapping[str, Any] | None] | None) -> list[AuditedRun]:
    """The runs of a batch whose worker process died, audited again on a pool of their own;
    if its worker dies again, ``unreadable``, the note saying they were not audited and
    why."""
    with _pool(1, database) as pool:
        try:
            return pool.submit(task, batch).result()
        except BrokenProcessPool as exc:
            note = f"not audited: {why_lost(exc)}, again when its batch ran alone"
            return [AuditedRun(_run_id(item), "unreadable", note=note) for item in batch]


def _run_id(item: tuple[str, Any] | dict[str, Any]) -> str:
    """The run id of an item of a batch: a (run id, rows) pair, or a run row."""
    return str(item[0] if isinstance(item, tuple) else item["run_id"])
