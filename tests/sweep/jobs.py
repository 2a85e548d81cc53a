"""Chunk jobs that misbehave the way a worker process can, for the engine's tests."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from harness_lab.sweep.chunk import ChunkResult, run_chunk


def dies_on_the_first_chunk(data: Any, grid: int, overrides: Any, seed: int, start: int,
                            stop: int, **kw: Any) -> ChunkResult:
    """Kill the worker process on chunk 0 of grid point 0, every time; play any other
    chunk."""
    if grid == 0 and start == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    return run_chunk(data, grid, overrides, seed, start, stop, **kw)


def dies_once_midway(data: Any, grid: int, overrides: Any, seed: int, start: int, stop: int,
                     *, runs: str, **kw: Any) -> ChunkResult:
    """Play any chunk, adding a line to the file ``runs`` for chunk 0 of grid point 0 each
    time it runs; the first time, kill the worker process midway, the first half of its
    samples stored and the next one left RUNNING, as a worker killed mid-run leaves it."""
    if grid == 0 and start == 0:
        first = not Path(runs).exists()
        with open(runs, "a", encoding="utf-8") as out:
            out.write("run\n")
        if first:
            from harness_lab.store.sql import SqlRunStore
            from harness_lab.sweep.sample import run_id_of
            from tests.store.test_run_store import start as start_run

            half = (start + stop) // 2
            run_chunk(data, grid, overrides, seed, start, half, **kw)
            store = SqlRunStore(kw["store_url"])
            start_run(store, run_id_of(grid, half))
            store.close()
            os.kill(os.getpid(), signal.SIGKILL)
    return run_chunk(data, grid, overrides, seed, start, stop, **kw)
