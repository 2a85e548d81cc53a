"""An environment on another clock: its time is the clock's, however it is read."""

from __future__ import annotations

from harness_lab.core.clocked import ClockedEnvironment
from harness_lab.core.stepping import run_to_idle, virtual_now


def test_a_clocked_environment_reads_its_time_from_its_clock_wherever_it_is_read() -> None:
    now = [5.0]
    env = ClockedEnvironment(lambda: now[0])
    assert env.now == virtual_now(env) == 5.0
    env.timeout(2.0)
    now[0] = 6.5
    assert env.now == virtual_now(env) == 6.5
    assert env.peek() == 7.0  # scheduled at the clock's time plus its delay


def test_processing_an_event_leaves_a_clocked_environments_time_to_its_clock() -> None:
    now = [1.0]
    env = ClockedEnvironment(lambda: now[0])
    env.timeout(3.0)
    env.step()  # simpy sets the time to the event's (4.0); the clock's stands
    assert env.now == virtual_now(env) == 1.0
    assert run_to_idle(env) is None and env.peek() == float("inf")
