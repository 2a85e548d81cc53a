"""RunCancellation: the cancel handle of a run, first reason wins (doc §4)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from harness_lab.core.lifecycle import RunLifecycle
from harness_lab.states import CancellationReason

__all__ = ["RunCancellation"]


class RunCancellation:
    """Records the first cancellation reason and tries to finish the lifecycle with its state.

    Deadline and budget paths call ``cancel`` too: the lifecycle's compare-and-set decides the
    terminal state, and the recorded reason stops all later work at ``check_active``.
    """

    __slots__ = ("_lifecycle", "_reason", "_ended_by", "_lock", "_clock")

    def __init__(self, lifecycle: RunLifecycle, clock: Callable[[], float]) -> None:
        self._lifecycle = lifecycle
        self._reason: CancellationReason | None = None
        self._ended_by: CancellationReason | None = None
        self._lock = threading.Lock()
        self._clock = clock

    @property
    def reason(self) -> CancellationReason | None:
        """The first reason given, or None if the run was never cancelled."""
        return self._reason

    @property
    def ended_by(self) -> CancellationReason | None:
        """The reason whose cancel ended the run, or None if the run ended otherwise.

        A cancel that comes after the run ended (a client leaving once the content is sent)
        is still recorded as :attr:`reason`, but it ended nothing.
        """
        return self._ended_by

    def cancel(self, reason: CancellationReason, detail: str = "",
               at: float | None = None) -> bool:
        """Record ``reason`` if it is the first; return True if this call ended the run.

        The attempt is dated ``at`` when given (a deadline dated at its own instant), else now.
        """
        with self._lock:
            if self._reason is None:
                self._reason = reason
        ended = self._lifecycle.finish(reason.run_state, detail or reason.value,
                                       self._clock() if at is None else at, reason.value)
        if ended:
            self._ended_by = reason
        return ended
