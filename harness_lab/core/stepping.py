"""simpy's environment as the compiled run core drives it: its clock, run to idle, restarted.

This module, and :mod:`harness_lab.core.clocked` for an environment whose time is another
clock's, are the only ones that read, write or override simpy's private attributes (``_now``,
``_queue``, ``_eid``, ``_active_proc``, an event's ``_ok``, ``_value`` and ``_defused``); they
are simpy 4.1's, the range ``pyproject.toml`` pins, and ``tests/core/test_stepping.py`` and
``tests/core/test_clocked.py`` hold each shortcut equal to simpy's public way. (The clocked
environment subclasses simpy's, which a compiled module cannot do: the compiler is not shown
simpy's types, so its instances would get no ``__dict__`` for simpy's attributes.)

A simulated run passes some sixteen simpy events, and ``Environment.run`` hands each to
``Environment.step``: two Python frames around a heap pop and the event's callbacks, which
cost more than the work they do when everything around them is compiled. :func:`run_to_idle`
is that loop itself, over the same environment: it pops events in the queue's order, sets the
clock, calls each event's callbacks and crashes on an undefused failure exactly as ``step``
does, and stops where ``run()`` stops. The events, their ordering and ties, and every
process's resumption stay simpy's own; tests run the same processes both ways and compare
the timelines, values and errors.

Any environment that is not exactly ``simpy.Environment`` (a ``RealtimeEnvironment`` paces
its steps against the wall clock) is run by its own ``run()``, and never restarted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappop
from typing import Any, Final

import simpy
from simpy.core import StopSimulation
from simpy.events import EventPriority

__all__ = ["clock_of", "restart_clock", "run_to_idle", "virtual_now"]

_ENVIRONMENT: Final[Any] = simpy.Environment
_STOP: Final[Any] = StopSimulation
_POP: Final[Any] = heappop
_FIRST: Final[Any] = EventPriority(-1)


def virtual_now(env: simpy.Environment) -> float:
    """``env.now``, read without a call into Python.

    simpy's ``Environment.now`` is a property returning the ``_now`` the environment
    advances; a run reads the clock some eighty times (every boundary, record and trace
    event), and from the compiled core the property's Python frame costs more than the rest
    of the read. The equality with ``env.now`` is held by a test.
    """
    now: float = env._now
    return now


def clock_of(env: simpy.Environment) -> Callable[[], float]:
    """The virtual clock of ``env`` as a function (not a bound method: it holds no cycle)."""
    return lambda: virtual_now(env)


def run_to_idle(env: simpy.Environment) -> Any:
    """``env.run()``: process events until none is scheduled (or one stops the simulation).

    Returns what ``env.run()`` returns: None, or the value a ``StopSimulation`` carries.
    """
    if type(env) is not _ENVIRONMENT:
        return env.run()
    queue: list[Any] = env._queue
    while queue:
        # typed, so the entry is read by index and the callbacks as a list (not iterated
        # through Python's iterator protocol); ``schedule`` makes both
        entry: tuple[Any, Any, Any, Any] = _POP(queue)
        env._now = entry[0]
        event = entry[3]
        callbacks: list[Any] = event.callbacks
        event.callbacks = None
        done = 0
        try:
            for callback in callbacks:
                done += 1
                callback(event)
        except _STOP as stop:
            # as Environment.step: the callbacks not yet called stay with the event, which is
            # scheduled again to be processed first when the simulation resumes
            event.callbacks = callbacks[done:]
            env.schedule(event, _FIRST)
            return stop.args[0] if stop.args else None
        if not event._ok and not hasattr(event, "_defused"):
            # an undefused failure crashes the environment with a copy of the exception
            failure = event._value
            exc = type(failure)(*failure.args)
            exc.__cause__ = failure
            raise exc
    return None


def restart_clock(env: simpy.Environment) -> bool:
    """Put an idle ``env`` back at virtual time 0 with its event counter reset; False if busy.

    A ``simpy.Environment`` whose queue is empty and that runs no process holds nothing but
    its clock and event counter (simpy's ``_now`` and ``_eid``); reset, it schedules, orders
    and times events exactly as a new ``simpy.Environment()`` would (a test compares them),
    without the cost of building one and binding its event classes, and without leaving the
    old one to the garbage collector (it holds itself in a cycle). An environment with
    anything scheduled, or of another kind (a subclass may keep state of its own), is left
    alone and the caller makes a new one.
    """
    if type(env) is not _ENVIRONMENT or env._queue or env._active_proc is not None:
        return False
    env._now = 0
    env._eid = itertools.count()
    return True

