"""Audit runs across worker processes, in the source's order, with a bounded number of
batches in flight so memory does not grow with the source.

A database is read by the workers themselves: this process streams the run rows a batch at
a time and each worker, on its own connection, reads the batch's trace and invocation rows,
rebuilds and checks its runs. Runs already in memory (an export) are handed out as rows.
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
from harness_lab.audit.sources import BATCH, SourceError, SqlReader

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


def audited_in_workers(runs: Iterable[tuple[str, Any]], workers: int) -> Iterator[AuditedRun]:
    """Each run of (run id, rows) audited by ``workers`` processes, in ``runs``' order."""
    items = iter(runs)
    batches = iter(lambda: list(islice(items, BATCH)), [])
    return _in_workers(batches, _audit_rows, workers, None)


def audited_sql_in_workers(url: str, mapping: Mapping[str, Any] | None, workers: int
                           ) -> Iterator[AuditedRun]:
    """Each run of a database audited by ``workers`` processes, in its run table's order."""
    reader = SqlReader(url, mapping)
    try:
        yield from _in_workers(reader.run_batches(), _audit_run_rows, workers, (url, mapping))
    finally:
        reader.close()


def _in_workers(batches: Iterator[list[Any]], task: Callable[[list[Any]], list[AuditedRun]],
                workers: int, database: tuple[str, Mapping[str, Any] | None] | None
                ) -> Iterator[AuditedRun]:
    import multiprocessing

    pending: deque[Future[list[AuditedRun]]] = deque()
    done = 0
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_start, initargs=(database,)) as pool:
        try:
            for batch in batches:
                pending.append(pool.submit(task, batch))
                if len(pending) >= workers * (1 + IN_FLIGHT):
                    runs = pending.popleft().result()
                    done += len(runs)
                    yield from runs
            while pending:
                runs = pending.popleft().result()
                done += len(runs)
                yield from runs
        except BrokenProcessPool as exc:
            raise SourceError(
                f"a worker process ended abruptly after {done:,} run(s) were audited (killed, "
                f"or out of memory); --workers 1 audits in this process") from exc
        finally:
            for future in pending:
                future.cancel()
