"""Audit tasks that kill their worker process as the kernel's OOM killer would, for the
parallel audit's tests (in a module of their own, so spawned workers can import them)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from harness_lab.audit.checked import AuditedRun


def dies_on(run_id: str, batch: list[Any], *, ran: str, every_time: bool = False
            ) -> list[AuditedRun]:
    """Audit a batch as a worker does, (run id, rows) pairs or run rows; on the batch holding
    ``run_id`` add a line to the file ``ran`` and kill the worker process the first time (or
    ``every_time``)."""
    from harness_lab.audit.parallel import _audit_rows, _audit_run_rows

    pairs = isinstance(batch[0], tuple)
    if run_id in (str(item[0] if pairs else item["run_id"]) for item in batch):
        first = not Path(ran).exists()
        with open(ran, "a", encoding="utf-8") as out:
            out.write("ran\n")
        if first or every_time:
            os.kill(os.getpid(), signal.SIGKILL)
    return _audit_rows(batch) if pairs else _audit_run_rows(batch)
