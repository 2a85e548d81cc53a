"""Chunk jobs that misbehave the way a worker process can, for the engine's tests."""

from __future__ import annotations

import os
from typing import Any

from harness_lab.sweep.chunk import ChunkResult, run_chunk


def dies_on_the_first_chunk(data: Any, grid: int, overrides: Any, seed: int, start: int,
                            stop: int, **kw: Any) -> ChunkResult:
    """Kill the worker process on chunk 0 of grid point 0; play any other chunk."""
    if grid == 0 and start == 0:
        os._exit(1)
    return run_chunk(data, grid, overrides, seed, start, stop, **kw)
