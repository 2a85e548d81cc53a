"""RunLifecycle: the only owner of RunState, first terminal wins (doc §3)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness_lab.frozen import value_class
from harness_lab.states import (
    RUN_TRANSITIONS,
    IllegalTransition,
    RunState,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.trace import Tracer

__all__ = ["RunLifecycle", "RunTermination"]


@dataclass(frozen=True, slots=True, init=False)
class RunTermination:
    """The single terminal fact of a run: its state, why, and when (virtual seconds)."""

    state: RunState
    reason: str
    at: float

    def __init__(self, state: RunState, reason: str, at: float) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "at", at)


value_class(RunTermination)  # see frozen.py


class RunLifecycle:
    """Holds a run's RunState; ``finish`` is an atomic compare-and-set.

    Only the first transition from "no termination" to a terminal state succeeds; every later
    attempt returns ``False`` and changes nothing, from any thread. With a ``tracer``, each
    such losing attempt is traced ``TERMINATION_REJECTED``: what it tried, why and when, and
    the termination it lost to. An attempt that repeats the winner's cause (a live server's
    cancel applied again on the run's own thread) lost to nothing and is not traced: a cause,
    a cancellation reason, names one terminal state, and the release's ``completed`` is
    attempted once a run.
    """

    __slots__ = ("run_id", "_termination", "_cause", "_lock", "history", "causes",
                 "allow_override", "tracer")

    def __init__(self, run_id: str, *, allow_override: bool = False,
                 tracer: Tracer | None = None) -> None:
        self.run_id = run_id
        self._termination: RunTermination | None = None
        self._cause = ""  # who made the termination (a cancellation reason), if anyone said
        self._lock = threading.Lock()
        self.history: list[RunTermination] = []  # every terminal transition that happened
        self.causes: list[str] = []  # the cause of each (a cancellation reason), or ""
        self.allow_override = allow_override  # a seeded defect: no compare-and-set
        self.tracer = tracer

    @property
    def state(self) -> RunState:
        """RUNNING until the first terminal transition, then that terminal state."""
        t = self._termination
        return RunState.RUNNING if t is None else t.state

    @property
    def termination(self) -> RunTermination | None:
        """The run's one RunTermination, or None while it runs."""
        return self._termination

    @property
    def is_active(self) -> bool:
        """True while no termination exists."""
        return self._termination is None

    def finish(self, state: RunState, reason: str, at: float, cause: str = "") -> bool:
        """Try to terminate with ``state``; True only for the first terminal transition.

        ``cause`` names who attempts it (a cancellation reason), for the trace.
        """
        if state not in RUN_TRANSITIONS[RunState.RUNNING]:  # a terminal state, or a bug
            raise IllegalTransition(f"RunLifecycle({self.run_id})", RunState.RUNNING, state)
        with self._lock:
            winner = self._termination
            if winner is None or (self.allow_override and winner.state is not state):
                self._termination = RunTermination(state, reason, at)
                self._cause = cause
                self.history.append(self._termination)
                self.causes.append(cause)
                return True
            won_by = self._cause or winner.reason
        if (cause or reason) != won_by:
            self._trace_rejected(state, cause or reason, at, winner, won_by)
        return False

    def _trace_rejected(self, state: RunState, cause: str, at: float, winner: RunTermination,
                        won_by: str) -> None:
        """Trace an attempt that lost to ``winner``.

        The trace ends with RUN_FINISHED (doc §13) and is stored with the completion, so an
        attempt after it (a client leaving while the result is sent) is not traced: the SSE
        session records that disconnect.
        """
        tracer = self.tracer
        if tracer is None:
            return
        events = tracer.events
        if events and events[-1].type is TraceEventType.RUN_FINISHED:
            return
        tracer.emit(TraceEventType.TERMINATION_REJECTED, TraceEventStatus.REJECTED,
                    {"state": state.value, "reason": cause, "at": at,
                     "lost_to": winner.state.value, "lost_to_reason": won_by,
                     "lost_to_at": winner.at})
