"""Harness: the public entry point. Send chat requests through the whole harness on simpy.

>>> harness = Harness(components)                     # doctest: +SKIP
>>> record = harness.run("why is checkout slow?")       # doctest: +SKIP
>>> record.run_state, record.release_outcome            # doctest: +SKIP

Several runs can share one environment (``submit`` then ``run_all``), each bound to its own
parts (:class:`~harness_lab.application.parts.RunParts`); a client disconnect or a user cancel
is an event at a virtual instant that fires while a call is in flight.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import simpy

from harness_lab.application.chat import ChatApplication
from harness_lab.application.components import Components
from harness_lab.application.intercept import Interceptor, intercepted_store
from harness_lab.application.live import LiveRun
from harness_lab.application.parts import RunParts
from harness_lab.config import HarnessConfig
from harness_lab.core.context import BoundaryProbe, LatencyModel, clock_of, virtual_now
from harness_lab.core.stepping import run_to_idle
from harness_lab.defects import Defect
from harness_lab.ports import CallKind
from harness_lab.record import RunRecord
from harness_lab.sse import ChatSseSession, SendHook
from harness_lab.store.base import RunStore
from harness_lab.tools.ledger import InvocationLedger, Ledger

__all__ = ["Harness", "RunHandle", "nth_run_id"]

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # the compiler reads the decorator; at run time it need not be installed
    def mypyc_attr(*_: object, **__: object) -> Callable[[type], type]:  # type: ignore[misc]
        """No effect: the class decorator mypyc reads when it compiles the module."""
        return lambda cls: cls


class RunHandle:
    """A submitted run: its live objects and bound parts now, its record once it finished.

    ``parts`` are the parts the run calls (:meth:`RunParts.bound`: with an interceptor, its
    components and ledger are the interceptor's adapters).
    """

    __slots__ = ("live", "process", "parts")

    def __init__(self, live: LiveRun, process: simpy.Process, parts: RunParts) -> None:
        self.live = live
        self.process = process
        self.parts = parts

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.live.run_id

    @property
    def done(self) -> bool:
        """True once the run finished."""
        return bool(self.process.triggered)

    @property
    def record(self) -> RunRecord:
        """The finished run's record; raises if it is still running."""
        if not self.process.triggered:
            raise RuntimeError(f"run {self.live.run_id} has not finished")
        value = self.process.value
        assert isinstance(value, RunRecord)
        return value


def nth_run_id(n: int) -> str:
    """The id a harness gives its ``n``-th run (from 1): ``run-000001``. A scenario's runs
    are known by it before they are played."""
    return f"run-{n:06d}"


@mypyc_attr(allow_interpreted_subclasses=True)
class Harness:
    """One harness instance: a store, a simpy environment and the parts of its next run.

    Every run is bound to its own :class:`RunParts` when it is submitted: ``parts`` (built
    from the constructor's components, configuration, ledger, latency model, probe, send hook
    and interceptor) unless ``submit`` is given others, so runs with different parts may
    share the environment. ``capacity`` limits concurrent calls per call kind across every
    run of the environment (a provider's concurrency as a ``simpy.Resource``). Compiled with
    the run core, it can still be subclassed (a subclass's methods are interpreted).
    """

    def __init__(self, components: Components, config: HarnessConfig | None = None, *,
                 store: RunStore | None = None, env: simpy.Environment | None = None,
                 probe: BoundaryProbe | None = None, latency: LatencyModel | None = None,
                 capacity: dict[CallKind, int] | None = None,
                 ledger: Ledger | None = None,
                 before_send: SendHook | None = None,
                 interceptor: Interceptor | None = None) -> None:
        if store is None:
            from harness_lab.store.sql import SqlRunStore

            store = SqlRunStore("sqlite://")
        self.env = env if env is not None else simpy.Environment()
        self.store = store
        self.parts = RunParts(components, config if config is not None else HarnessConfig(),
                              ledger if ledger is not None else InvocationLedger(), latency,
                              probe, before_send, interceptor)
        resources = ({k: simpy.Resource(self.env, n) for k, n in capacity.items()}
                     if capacity else None)
        self.app = ChatApplication(store, capacity=resources)
        self.handles: list[RunHandle] = []
        self.submit_hooks: list[Callable[[Harness, RunParts], RunParts]] = []
        self._runs = 0
        self._sessions = 0

    @property
    def config(self) -> HarnessConfig:
        """The configuration of the next run submitted without parts of its own."""
        return self.parts.config

    def prepare(self, components: Components, config: HarnessConfig, *, ledger: Ledger,
                latency: LatencyModel | None = None, probe: BoundaryProbe | None = None,
                before_send: SendHook | None = None,
                interceptor: Interceptor | None = None) -> None:
        """Give the runs submitted from now on without parts of their own these parts;
        whatever is left out is cleared. A run submitted already keeps its own."""
        self.parts = RunParts(components, config, ledger, latency, probe, before_send,
                              interceptor)

    def new_session_id(self) -> str:
        """A fresh session id."""
        self._sessions += 1
        return f"session-{self._sessions:06d}"

    def submit(self, query: str, session_id: str | None = None, *, at: float | None = None,
               disconnect_at: float | None = None, cancel_at: float | None = None,
               run_id: str | None = None, parts: RunParts | None = None) -> RunHandle:
        """Schedule one request at virtual time ``at`` (default now); returns its handle.

        The run is bound now to ``parts`` (default: the harness's ``parts``) and reads only
        those while it executes. Run ids count ``run-000001``, ``run-000002``... unless
        ``run_id`` is given. Each of ``submit_hooks`` is called first with the harness and the
        parts, and returns the parts the run gets: a place to compose a probe or a send hook
        with the run's own.
        """
        for name, t in (("at", at), ("disconnect_at", disconnect_at),
                        ("cancel_at", cancel_at)):
            _check_time(name, t)
        given = parts if parts is not None else self.parts
        for hook in self.submit_hooks:
            given = hook(self, given)
        app = self._application(given.interceptor)
        bound = given.bound()
        self._runs += 1
        env = self.env
        second = Defect.SECOND_CONTENT_EVENT in bound.config.defects
        sse = ChatSseSession(clock_of(env), bound.before_send, allow_second_content=second)
        live = LiveRun(run_id or nth_run_id(self._runs), session_id or self.new_session_id(),
                       query, sse)
        start = virtual_now(env) if at is None else at
        process = env.process(_handled_at(app, live, env, start, bound))
        handle = RunHandle(live, process, bound)
        for t, action in ((disconnect_at, live.disconnect), (cancel_at, live.user_cancel)):
            if t is not None:
                self.at(handle, t, action)
        self.handles.append(handle)
        return handle

    def _application(self, via: Interceptor | None) -> ChatApplication:
        """The application a run is handled by: the harness's, or for a run with an
        interceptor, one on the same store and capacity whose store calls it sees."""
        app = self.app
        if via is None:
            return app
        return ChatApplication(intercepted_store(app.store, via), capacity=app.capacity)

    def run(self, query: str, session_id: str | None = None, **when: Any) -> RunRecord:
        """Submit one request and run the environment until it finished."""
        handle = self.submit(query, session_id, **when)
        self.env.run(until=handle.process)
        return handle.record

    def run_all(self) -> list[RunRecord]:
        """Run the environment until every submitted run finished; records in submit order."""
        run_to_idle(self.env)
        return [h.record for h in self.handles]

    def at(self, handle: RunHandle, t: float, action: Callable[[], Any]) -> None:
        """Do ``action`` at virtual time ``t`` unless the run has finished by then.

        A time that is now (or past) acts at once, before the run has sent anything.
        """
        _check_time("t", t)
        if t <= virtual_now(self.env):
            action()
        else:
            self.env.process(self._at(t, handle, action))

    def _at(self, t: float, handle: RunHandle, action: Callable[[], Any]
            ) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(t - virtual_now(self.env)) | handle.process
        if not handle.process.triggered:
            action()


def _check_time(name: str, t: float | None) -> None:
    """Refuse a virtual time that is not a finite number >= 0 (``None`` is "not given")."""
    if t is None:
        return
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        # a TypeError, as the compiled core's own argument check raises for a non-number
        raise TypeError(f"Harness: {name} must be a virtual time in seconds, got {t!r}")
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"Harness: {name} must be a finite virtual time >= 0 (seconds), "
                         f"got {t!r}")


def _handled_at(app: ChatApplication, live: LiveRun, env: simpy.Environment, at: float,
                parts: RunParts) -> Generator[simpy.Event, Any, RunRecord]:
    """``app.handle`` started at virtual time ``at`` (now, or later); a simpy process."""
    wait = at - virtual_now(env)
    if wait > 0:
        yield env.timeout(wait)
    record: RunRecord = yield from app.handle(live, env, parts)
    return record
