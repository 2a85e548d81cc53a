"""Work on worker processes: each call's result by its index, and a worker that dies costs
no call but the one that kills it every time (real loky processes, some killed)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from harness_lab.pool import Call, in_workers, why_lost

pytestmark = pytest.mark.slow


def square(n: int, log: str, *, dies_on: int | None = None, dies_once_on: int | None = None,
           raises_on: int | None = None) -> int:
    """``n * n``, each run of call ``n`` a line in the file ``log/n``; the worker process
    exits at once on ``dies_on`` every time, on ``dies_once_on`` the first time, and
    ``raises_on`` raises."""
    path = Path(log) / str(n)
    first = not path.exists()
    with path.open("a", encoding="utf-8") as runs:
        runs.write("run\n")
    time.sleep(0.02)  # long enough for the other worker to be running a call meanwhile
    if n == dies_on or (n == dies_once_on and first):
        os._exit(3)
    if n == raises_on:
        raise ValueError(f"no square of {n}\nsecond line")
    return n * n


def runs_of(log: Path) -> dict[int, int]:
    """How many times each call ran, by its index."""
    return {int(p.name): len(p.read_text(encoding="utf-8").splitlines())
            for p in log.iterdir()}


def test_every_call_comes_back_once_with_its_index_and_result(tmp_path: Path) -> None:
    calls = [((n, str(tmp_path)), {}) for n in range(12)]
    got = list(in_workers(square, calls, 2, lambda i, exc: -1))
    assert sorted(got) == [(n, n * n) for n in range(12)]
    assert runs_of(tmp_path) == dict.fromkeys(range(12), 1)


def _played(calls: list[Call]) -> tuple[dict[int, Any], list[int]]:
    """Each call's result (or why it was lost) on two workers, and the calls run again."""
    told: list[int] = []

    def again(index: int, call: Call) -> Call:
        told.append(index)
        return call

    return dict(in_workers(square, calls, 2, lambda i, exc: why_lost(exc), again)), told


def test_a_call_that_raises_comes_back_as_what_lost_makes_of_it_without_running_again(
        tmp_path: Path) -> None:
    got, told = _played([((n, str(tmp_path)), {"raises_on": 4}) for n in range(8)])
    assert got[4] == "ValueError: no square of 4"
    assert {n: got[n] for n in got if n != 4} == {n: n * n for n in range(8) if n != 4}
    assert runs_of(tmp_path) == dict.fromkeys(range(8), 1)
    assert told == []


def test_the_calls_a_worker_was_running_when_it_died_run_again_and_come_back_whole(
        tmp_path: Path) -> None:
    got, told = _played([((n, str(tmp_path)), {"dies_once_on": 5}) for n in range(20)])
    assert got == {n: n * n for n in range(20)}
    twice = {n for n, count in runs_of(tmp_path).items() if count == 2}
    assert set(runs_of(tmp_path).values()) <= {1, 2}
    # the call that died, and the one the other worker had at most: each is run again (a
    # call the broken pool failed before a worker took it up runs only then, once in all)
    assert 5 in twice and twice <= set(told) and len(told) <= 2


def test_a_call_that_kills_its_worker_every_time_is_lost_after_a_second_run_alone(
        tmp_path: Path) -> None:
    calls = [((n, str(tmp_path)), {"dies_on": 5}) for n in range(20)]
    got = dict(in_workers(square, calls, 2, lambda i, exc: why_lost(exc)))
    assert got == {n: "its worker process died (exit EXIT(3))" if n == 5 else n * n
                   for n in range(20)}
    runs = runs_of(tmp_path)
    assert runs[5] == 2
    # its second run was alone, so it cost no other call a run: another ran twice only if
    # it was beside call 5 the first time, and no call was lost beside it
    assert sum(1 for n, count in runs.items() if n != 5 and count == 2) <= 1
    assert set(runs.values()) <= {1, 2}

