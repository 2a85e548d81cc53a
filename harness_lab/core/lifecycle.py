"""RunLifecycle: the only owner of RunState, first terminal wins (doc §3)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness_lab.frozen import value_class
from harness_lab.states import RUN_TRANSITIONS, RunState, advance

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
    attempt returns ``False`` and changes nothing, from any thread.
    """

    __slots__ = ("run_id", "_termination", "_lock", "history", "allow_override")

    def __init__(self, run_id: str, *, allow_override: bool = False) -> None:
        self.run_id = run_id
        self._termination: RunTermination | None = None
        self._lock = threading.Lock()
        self.history: list[RunTermination] = []  # every terminal transition that happened
        self.allow_override = allow_override  # a seeded defect: no compare-and-set

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

    def finish(self, state: RunState, reason: str, at: float) -> bool:
        """Try to terminate with ``state``; True only for the first terminal transition."""
        if state is RunState.RUNNING:
            advance(f"RunLifecycle({self.run_id})", RUN_TRANSITIONS, RunState.RUNNING, state)
        with self._lock:
            if self._termination is not None and not self.allow_override:
                return False
            if self._termination is not None and self._termination.state is state:
                return False
            self._termination = RunTermination(state, reason, at)
            self.history.append(self._termination)
            return True
