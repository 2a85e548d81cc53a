"""The wall-clock simpy environment: scaled time, real sleeps, a wake-up."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

import pytest
import simpy

from harness_lab.core.stepping import virtual_now
from harness_lab.live.clock import WallClock, WallClockEnvironment


def test_a_timeout_really_sleeps_its_scaled_length() -> None:
    env = WallClockEnvironment(WallClock(0.01))

    def wait() -> Generator[simpy.Event, Any, float]:
        t0 = env.now
        yield env.timeout(20.0)  # 20 virtual seconds: 0.2 s of wall time
        return env.now - t0

    started = time.monotonic()
    process = env.process(wait())
    env.run(until=process)
    assert 0.2 <= time.monotonic() - started < 1.0
    assert 20.0 <= process.value < 100.0


def test_the_cores_clock_read_is_the_wall_clock() -> None:
    clock = WallClock(0.5)
    env = WallClockEnvironment(clock)
    first = virtual_now(env)
    time.sleep(0.05)
    second = virtual_now(env)
    assert 0.1 <= second - first < 1.0  # 0.05 wall seconds are 0.1 virtual ones
    assert env.now >= second


def test_events_are_processed_in_time_order() -> None:
    env = WallClockEnvironment(WallClock(0.001))
    seen: list[int] = []

    def after(delay: float, tag: int) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(delay)
        seen.append(tag)

    for delay, tag in ((30.0, 3), (10.0, 1), (20.0, 2)):
        env.process(after(delay, tag))
    env.run()
    assert seen == [1, 2, 3]


def test_a_wake_calls_after_step_before_the_sleep_is_over() -> None:
    woken: list[float] = []
    env = WallClockEnvironment(WallClock(1.0), after_step=lambda: woken.append(time.monotonic()))
    def wait() -> Generator[simpy.Event, Any, None]:
        yield env.timeout(0.5)

    env.process(wait())
    started = time.monotonic()
    threading.Timer(0.05, env.wake.set).start()
    env.run()
    assert woken[0] - started < 0.4  # the wake-up, long before the timeout
    assert time.monotonic() - started >= 0.5  # and the timeout still took its time


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf")])
def test_a_time_scale_that_is_not_a_positive_number_is_refused(scale: float) -> None:
    with pytest.raises(ValueError, match="time_scale"):
        WallClock(scale)
