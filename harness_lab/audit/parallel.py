"""Audit runs across worker processes: the reading process hands out batches of rows, each
worker rebuilds and checks a batch, and the results come back in the source's order, with a
bounded number of batches in flight so memory does not grow with the source."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from typing import Any

from harness_lab.audit.checked import AuditedRun, audited
from harness_lab.audit.sources import BATCH

__all__ = ["IN_FLIGHT", "audit_batch", "audited_in_workers", "default_workers"]

IN_FLIGHT = 2
"""Batches (of :data:`~harness_lab.audit.sources.BATCH` runs) queued per worker beyond the
one it works on."""


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def audit_batch(batch: list[tuple[str, Any]]) -> list[AuditedRun]:
    """Each run of a batch of (run id, rows) audited (in a worker)."""
    return [audited(run_id, None, rows) for run_id, rows in batch]


def audited_in_workers(runs: Iterable[tuple[str, Any]], workers: int) -> Iterator[AuditedRun]:
    """Each run of (run id, rows) audited by ``workers`` processes, in ``runs``' order."""
    import multiprocessing

    items = iter(runs)
    pending: deque[Future[list[AuditedRun]]] = deque()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            while True:
                while len(pending) < workers * (1 + IN_FLIGHT):
                    batch = list(islice(items, BATCH))
                    if not batch:
                        break
                    pending.append(pool.submit(audit_batch, batch))
                if not pending:
                    return
                yield from pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
