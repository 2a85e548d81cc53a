"""The run context reads simpy's clock directly, and always the value ``env.now`` gives."""

from __future__ import annotations

import simpy

from harness_lab.core.context import clock_of, restart_clock, virtual_now


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


def _timeline(env: simpy.Environment) -> list[tuple[float, str]]:
    """Three processes whose timeouts meet at the same instants; the order they fire in."""
    fired: list[tuple[float, str]] = []

    def proc(name: str, delays: tuple[float, ...]) -> simpy.events.ProcessGenerator:
        for delay in delays:
            yield env.timeout(delay)
            fired.append((env.now, name))

    for name, delays in (("a", (0.1, 0.2, 0.7)), ("b", (0.3, 0.7)), ("c", (1.0,))):
        env.process(proc(name, delays))
    env.run()
    return fired


def test_a_restarted_idle_environment_runs_as_a_new_one_does() -> None:
    env = simpy.Environment()
    first = _timeline(env)
    assert env.now > 0
    assert restart_clock(env)
    assert env.now == 0
    assert _timeline(env) == first == _timeline(simpy.Environment())


def test_an_environment_with_something_scheduled_is_not_restarted() -> None:
    env = simpy.Environment()
    env.timeout(5.0)
    env.run(until=2.0)
    assert not restart_clock(env)
    assert env.now == 2.0


def test_an_environment_of_another_kind_is_not_restarted() -> None:
    class Paced(simpy.Environment):
        pass

    env = Paced()
    env.run(until=3.0)
    assert not restart_clock(env)
    assert env.now == 3.0
