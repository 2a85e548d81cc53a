"""First terminal wins under real threads: RunLifecycle's compare-and-set hammered."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from harness_lab.core.lifecycle import RunLifecycle
from harness_lab.states import RunState

RACES = 100_000
RIVALS = (RunState.SUCCESS, RunState.CANCELLED, RunState.TIMED_OUT, RunState.FAILED)


@pytest.fixture
def eager_switching() -> Iterator[None]:
    """Threads switch as often as the interpreter allows, so the races really interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_each_of_a_hundred_thousand_races_between_four_threads_has_exactly_one_winner(
        eager_switching: None) -> None:
    runs = [RunLifecycle(f"run-{i}") for i in range(RACES)]
    wins: list[list[int]] = [[] for _ in RIVALS]
    start = threading.Barrier(len(RIVALS))

    def rival(k: int) -> None:
        state, won = RIVALS[k], wins[k]
        start.wait()
        for i, run in enumerate(runs):  # every thread races every run, in the same order
            if run.finish(state, f"thread {k}", float(i)):
                won.append(i)

    threads = [threading.Thread(target=rival, args=(k,)) for k in range(len(RIVALS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = sorted(i for won in wins for i in won)
    assert winners == list(range(RACES))  # every race won once, none twice
    for k, won in enumerate(wins):
        for i in won:  # no later finish overrode the winner
            run = runs[i]
            assert run.state is RIVALS[k] and len(run.history) == 1
    assert sum(1 for won in wins if won) >= 2  # the threads really did race
