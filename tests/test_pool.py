"""Work on worker processes: each call's result by its index, and a worker that dies costs
only the calls it was running (real loky processes, one killed)."""

from __future__ import annotations

import os

import pytest

from harness_lab.pool import in_workers, why_lost

pytestmark = pytest.mark.slow


def square_or_fail(n: int, *, dies_on: int | None = None, raises_on: int | None = None) -> int:
    """``n * n``; the worker process exits at once on ``dies_on``, and ``raises_on`` raises."""
    if n == dies_on:
        os._exit(3)
    if n == raises_on:
        raise ValueError(f"no square of {n}\nsecond line")
    return n * n


def test_every_call_comes_back_once_with_its_index_and_result() -> None:
    calls = [((n,), {}) for n in range(12)]
    got = list(in_workers(square_or_fail, calls, 2, lambda i, exc: -1))
    assert sorted(got) == [(n, n * n) for n in range(12)]


def test_a_call_that_raises_comes_back_as_what_lost_makes_of_it() -> None:
    calls = [((n,), {"raises_on": 4}) for n in range(8)]
    got = dict(in_workers(square_or_fail, calls, 2, lambda i, exc: why_lost(exc)))
    assert got[4] == "ValueError: no square of 4"
    assert {n: got[n] for n in got if n != 4} == {n: n * n for n in range(8) if n != 4}


def test_a_worker_that_dies_costs_only_the_calls_it_was_running() -> None:
    calls = [((n,), {"dies_on": 5}) for n in range(20)]
    got = dict(in_workers(square_or_fail, calls, 2, lambda i, exc: why_lost(exc)))
    lost = {n: why for n, why in got.items() if isinstance(why, str)}
    assert 5 in lost and len(lost) <= 2  # the call that died, and the one beside it at most
    assert set(lost.values()) == {"its worker process died (exit EXIT(3))"}
    assert {n: got[n] for n in got if n not in lost} == {
        n: n * n for n in range(20) if n not in lost}
