"""A simpy environment whose clock is the (scaled) wall clock, and whose waits really sleep.

The run core reads time only through its simpy environment and waits only by yielding simpy
events. :class:`WallClockEnvironment` keeps every rule of that core and changes two things
underneath it: its time is computed from :func:`time.monotonic` (scaled: with
``time_scale=0.01`` one virtual second passes in ten milliseconds of wall time; it is a
:class:`~harness_lab.core.clocked.ClockedEnvironment`), and
:meth:`~WallClockEnvironment.step` sleeps until the next event is due instead of jumping to
it. A provider that blocks (an HTTP call) simply lets the
wall clock run on; a scripted latency becomes a real, scaled sleep.

One environment serves one run on one thread; every environment of a server shares one
:class:`WallClock`, so times in traces and rows of different runs are comparable.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from simpy.core import EmptySchedule, Infinity

from harness_lab.core.clocked import ClockedEnvironment

__all__ = ["WallClock", "WallClockEnvironment"]


class WallClock:
    """Virtual seconds since ``origin``: wall seconds divided by ``time_scale``."""

    __slots__ = ("time_scale", "origin")

    def __init__(self, time_scale: float = 1.0) -> None:
        if isinstance(time_scale, bool) or not isinstance(time_scale, (int, float)) or (
                not math.isfinite(time_scale) or time_scale <= 0):
            raise ValueError(f"WallClock: time_scale must be a finite number > 0, "
                             f"got {time_scale!r}")
        self.time_scale = float(time_scale)
        self.origin = time.monotonic()

    def now(self) -> float:
        """The current virtual time (seconds)."""
        return (time.monotonic() - self.origin) / self.time_scale

    def wall_seconds(self, virtual: float) -> float:
        """How many wall seconds ``virtual`` seconds of this clock take."""
        return virtual * self.time_scale


class WallClockEnvironment(ClockedEnvironment):
    """A simpy environment on a :class:`WallClock`.

    ``after_step`` is called after each processed event and ``wake`` interrupts a sleep
    (both on the environment's own thread, the only one that may touch its runs): the live
    driver forwards new SSE events there and applies a client's disconnect.
    """

    def __init__(self, clock: WallClock, after_step: Callable[[], None] | None = None) -> None:
        self.clock = clock
        self.after_step = after_step
        self.wake = threading.Event()
        super().__init__(clock.now)

    def step(self) -> None:
        """Sleep until the next event is due (or :attr:`wake` is set), then process it."""
        while True:
            due = self.peek()
            if due == Infinity:
                raise EmptySchedule
            wait = self.clock.wall_seconds(due - self.clock.now())
            if wait <= 0:
                break
            if self.wake.wait(wait):
                self.wake.clear()
                if self.after_step is not None:
                    self.after_step()
        super().step()
        if self.after_step is not None:
            self.after_step()
