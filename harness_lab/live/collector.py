"""How ``serve`` sets Python's cyclic garbage collector: fewer, shorter pauses under a crowd.

A collection stops every thread of the process, the event loop included: while hundreds of
runs are in flight, a full collection of their objects paused ``/healthz`` and the noticing
of disconnects by up to 250 ms on a busy two-core machine (docs/live.md has the figures).
``serve`` therefore

* freezes the objects it made while starting (modules, classes, the application: about
  70,000 that live as long as the process), so no collection looks at them again
  (:func:`gc.freeze`);
* collects the youngest generation after 20,000 allocations instead of 700, and each older
  one after 20 collections of the one below instead of 10: a run's short-lived objects are
  freed by reference counting long before, and the cycles a finished run leaves are
  collected all the same, a little later.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "tune_collector"]

THRESHOLDS = (20_000, 20, 20)
"""The collector's thresholds while ``serve`` runs (:func:`gc.set_threshold`)."""


def tune_collector() -> tuple[int, int, int]:
    """Freeze what exists now and set :data:`THRESHOLDS`; the thresholds it replaced."""
    before = gc.get_threshold()
    gc.collect()  # what start-up left behind is freed first, not frozen
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    return before
