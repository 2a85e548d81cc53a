"""The timing helper the benchmark scripts share: the best of several measurements.

The scripts run as ``python benchmarks/<script>.py``, so this directory is on the path and
they import it as ``from timing import best``.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def best(repeat: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeat`` timed calls of ``work()``, in seconds (the repetition least
    disturbed by the rest of the machine)."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)
