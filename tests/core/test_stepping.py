"""Running an environment to idle from the run core is simpy's own ``env.run()``, step by step;
the clock read directly is always the value ``env.now`` gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_lab.core.stepping import clock_of, restart_clock, run_to_idle, virtual_now

# one action of a process: wait, fail, interrupt / join another process, wait for any or all
# of two timeouts, hold a shared resource, fire or await a shared signal
Action = tuple[Any, ...]

_delays = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5])
_actions = st.one_of(
    st.tuples(st.just("wait"), _delays),
    st.tuples(st.just("fail"), st.text(max_size=5)),
    st.tuples(st.just("interrupt"), st.integers(0, 3)),
    st.tuples(st.just("join"), st.integers(0, 3)),
    st.tuples(st.just("any"), _delays, _delays),
    st.tuples(st.just("all"), _delays, _delays),
    st.tuples(st.just("hold"), _delays),
    st.tuples(st.just("signal"), st.integers()),
    st.tuples(st.just("await"),),
)
_programs = st.lists(st.lists(_actions, max_size=6), min_size=1, max_size=4)


def _play(programs: list[list[Action]], run: Callable[[simpy.Environment], Any]
          ) -> tuple[list[tuple[float, int, str]], float, Any, tuple[str, str, str] | None]:
    """Run ``programs`` as processes of a fresh environment with ``run``; what happened."""
    env = simpy.Environment()
    log: list[tuple[float, int, str]] = []
    resource = simpy.Resource(env, capacity=1)
    signal = [env.event()]
    procs: list[simpy.Process] = []

    def body(me: int, program: list[Action]) -> simpy.events.ProcessGenerator:
        for action in program:
            try:
                kind = action[0]
                if kind == "wait":
                    yield env.timeout(action[1])
                elif kind == "fail":
                    raise ValueError(f"process {me} fails {action[1]!r}")
                elif kind == "interrupt":
                    target = procs[action[1] % len(procs)]
                    if target.is_alive and target is not procs[me]:
                        target.interrupt(f"from {me}")
                elif kind == "join":
                    target = procs[action[1] % len(procs)]
                    if target is not procs[me]:
                        value = yield target
                        log.append((env.now, me, f"joined {value!r}"))
                elif kind == "any":
                    got = yield env.timeout(action[1], "x") | env.timeout(action[2], "y")
                    log.append((env.now, me, f"any {sorted(got.values())}"))
                elif kind == "all":
                    got = yield env.timeout(action[1], "x") & env.timeout(action[2], "y")
                    log.append((env.now, me, f"all {sorted(got.values())}"))
                elif kind == "hold":
                    with resource.request() as req:
                        yield req
                        yield env.timeout(action[1])
                elif kind == "signal":
                    if not signal[0].triggered:
                        signal[0].succeed(action[1])
                        signal[0] = env.event()
                else:
                    value = yield signal[0]
                    log.append((env.now, me, f"signalled {value!r}"))
            except simpy.Interrupt as interrupt:
                log.append((env.now, me, f"interrupted {interrupt.cause!r}"))
            except ValueError as exc:
                if "fails" in str(exc) and f"process {me} " not in str(exc):
                    log.append((env.now, me, f"saw {exc}"))  # a joined process's failure
                else:
                    raise
            log.append((env.now, me, f"did {action[0]}"))
        return f"done {me}"

    for me, program in enumerate(programs):
        procs.append(env.process(body(me, program)))
    crash: tuple[str, str, str] | None = None
    returned: Any = None
    try:
        returned = run(env)
    except Exception as exc:  # an undefused failure crashes the run: compare what it raises
        crash = (type(exc).__name__, str(exc), repr(exc.__cause__))
    return log, env.now, returned, crash


@settings(max_examples=300, deadline=None)
@given(_programs)
def test_processes_run_to_idle_exactly_as_env_run_runs_them(programs: list[list[Action]]) -> None:
    assert _play(programs, run_to_idle) == _play(programs, lambda env: env.run())


def test_a_crash_carries_a_copy_of_the_failure_caused_by_the_original() -> None:
    env = simpy.Environment()

    def failing() -> simpy.events.ProcessGenerator:
        yield env.timeout(1.0)
        raise KeyError("lost")

    process = env.process(failing())
    with pytest.raises(KeyError) as caught:
        run_to_idle(env)
    assert caught.value is not process.value
    assert caught.value.__cause__ is process.value
    assert env.now == 1.0


@pytest.mark.parametrize("run", [run_to_idle, simpy.Environment.run], ids=["to-idle", "simpy"])
def test_a_stop_returns_its_value_and_the_rest_runs_when_resumed(
        run: Callable[[simpy.Environment], Any]) -> None:
    env = simpy.Environment()
    seen: list[str] = []
    stop = env.timeout(2.0, value="stopped")
    stop.callbacks.append(simpy.core.StopSimulation.callback)
    stop.callbacks.append(lambda event: seen.append("after the stop"))
    env.timeout(3.0).callbacks.append(lambda event: seen.append("later"))

    assert run(env) == "stopped"
    assert (env.now, seen) == (2.0, [])
    assert run(env) is None
    assert (env.now, seen) == (3.0, ["after the stop", "later"])


def test_an_environment_of_another_kind_runs_by_its_own_run() -> None:
    class Counting(simpy.Environment):
        runs = 0

        def run(self, until: Any = None) -> Any:
            Counting.runs += 1
            return super().run(until)

    env = Counting()
    env.timeout(4.0)
    run_to_idle(env)
    assert (Counting.runs, env.now) == (1, 4.0)


def test_an_idle_environment_is_left_as_it_is() -> None:
    env = simpy.Environment(initial_time=7.0)
    assert run_to_idle(env) is None
    assert env.now == 7.0


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
