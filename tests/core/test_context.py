"""The run context reads simpy's clock directly, and always the value ``env.now`` gives."""

from __future__ import annotations

import simpy

from harness_lab.core.context import clock_of, virtual_now


def test_the_direct_clock_read_equals_env_now_as_time_advances() -> None:
    env = simpy.Environment(initial_time=2.5)
    seen: list[tuple[float, float]] = []

    def ticker() -> simpy.events.ProcessGenerator:
        for delay in (0.1, 1.0, 7.25):
            yield env.timeout(delay)
            seen.append((virtual_now(env), env.now))

    env.process(ticker())
    env.run()
    assert [a for a, _ in seen] == [b for _, b in seen]
    assert seen[-1][1] == 2.5 + 0.1 + 1.0 + 7.25


def test_a_clock_follows_its_environment() -> None:
    env = simpy.Environment()
    clock = clock_of(env)
    assert clock() == 0.0
    env.run(until=4.0)
    assert clock() == 4.0 == env.now
