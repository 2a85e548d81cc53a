"""ClockedEnvironment: a simpy environment whose time is another clock's.

The run core reads time only through its simpy environment (``env.now``, and
:func:`~harness_lab.core.stepping.virtual_now`, which reads simpy's private ``_now``). An
environment on another clock (the live server's scaled wall clock) overrides ``_now`` here:
this module and :mod:`harness_lab.core.stepping` are the only ones that touch simpy's private
attributes. It is not compiled with the run core, as a compiled module cannot subclass
simpy's environment.
"""

from __future__ import annotations

from collections.abc import Callable

import simpy

__all__ = ["ClockedEnvironment"]


class ClockedEnvironment(simpy.Environment):
    """A simpy environment whose time is ``read_clock()`` wherever it is read (``env.now``,
    :func:`~harness_lab.core.stepping.virtual_now`, the time a timeout is scheduled at) and
    which simpy never sets: processing an event does not move it. Events keep simpy's order; a
    subclass decides when the next one is processed (``peek()`` says when it is due): the live
    server's sleeps until the wall clock gets there."""

    def __init__(self, read_clock: Callable[[], float]) -> None:
        self.read_clock = read_clock
        super().__init__(read_clock())

    @property
    def _now(self) -> float:  # type: ignore[override]
        """The clock's time, wherever simpy or ``virtual_now`` reads the time."""
        return self.read_clock()

    @_now.setter
    def _now(self, _value: float) -> None:
        """simpy sets the time to each event's; here time is the clock's alone."""
