"""Explorer jobs that misbehave the way a worker process can, for the explorer's tests."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_lab.explore.oracle import Observed
from harness_lab.explore.worker import run_chunk

KILLER = "report-released@before router#1/crash"
"""The variant whose chunk :func:`dies_on_the_killer` never runs."""


def killer_runs(pid: int) -> Path:
    """The file where :func:`dies_on_the_killer`, in a worker of process ``pid``, lists the
    variants of the killer's chunk, a line of them each time it gets that chunk."""
    return Path(tempfile.gettempdir()) / f"harness-lab-killer-runs-{pid}"


def dies_on_the_killer(chunk: Sequence[tuple[dict[str, Any], str]]) -> list[Observed]:
    """Kill the worker process on the chunk that holds the variant :data:`KILLER`, every
    time, once it has listed its variants (:func:`killer_runs`); run any other chunk."""
    names = [data["name"] for data, _ in chunk]
    if KILLER in names:
        with killer_runs(os.getppid()).open("a", encoding="utf-8") as runs:
            runs.write(" ".join(repr(name) for name in names) + "\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return run_chunk(chunk)
