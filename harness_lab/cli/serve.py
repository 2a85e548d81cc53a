"""Run the harness's lifecycle core live: POST /chat answers with the doc §11 SSE stream, POST
/runs/ID/cancel cancels a run, GET /runs/ID and GET /runs/ID/trace read what was stored. A
client that disconnects cancels its run at once. Providers are a scenario file's scripted ones
(latencies really slept, scaled by --time-scale) or an OpenAI-compatible endpoint
(docs/live.md)."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import signal
import socket
import stat
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from harness_lab.cli.common import add_command, fail, otlp_option, port_number, said
from harness_lab.redact import shown_url

__all__ = ["register", "serve"]

log = logging.getLogger("harness_lab.serve")

STOP_WAIT_S = 10.0
"""Seconds a stopping server waits, by default, for runs still blocked after their cancel,
then for the database to record its stop (``--stop-wait``)."""


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: a free one), so the real port is known and printed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on a connection only when the listening
    # socket says it is TCP, and without it every answer on a kept-alive connection waits
    # for the client's delayed acknowledgement (some 40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _heartbeats(instance: Any, driver: Any, stop: threading.Event, interval_s: float) -> None:
    """Beat, and end the runs of lost instances and this one's runs whose end the store
    refused, every ``interval_s`` until ``stop``."""
    from harness_lab.store.sql import one_line

    failing = False
    while not stop.wait(interval_s):
        try:
            instance.heartbeat()
            if failing:
                log.warning("serve instance %s: the database answers again",
                            instance.instance_id)
            failing = False
            for orphans in instance.reap(driver.in_flight):
                log.warning("%s", orphans.describe())
            instance.write_error = None
        except Exception as exc:  # the database is down: said once, tried again next beat
            instance.write_error = one_line(exc)
            if not failing:
                log.error("serve instance %s: heartbeat failed (tried again every %g s): %s",
                          instance.instance_id, interval_s, instance.write_error)
            failing = True


def _log_to_stderr(level: str) -> None:
    """The server's own log lines (``harness_lab.*``: a store failure, a client that left
    while sending its body, a connection cut off for slow headers) on standard error from
    ``level`` up, as uvicorn's are; without it only warnings and errors would reach it."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    own = logging.getLogger("harness_lab")
    own.handlers = [handler]
    own.setLevel(level.upper())
    own.propagate = False


def serve(args: argparse.Namespace) -> int:
    """Check every option, open the store and the socket, then serve until stopped."""
    import uvicorn

    from harness_lab.live.clock import WallClock
    from harness_lab.live.collector import tune_collector
    from harness_lab.live.driver import LiveDriver
    from harness_lab.live.instances import HEARTBEAT_S, Instance
    from harness_lab.live.protocol import header_timeout_protocol
    from harness_lab.live.server import create_app
    from harness_lab.live.sources import HttpSource, RunSource, ScenarioSource, SourceError
    from harness_lab.live.store import database_url, open_store, store_problem
    from harness_lab.parent_watch import watch_parent_named_in
    from harness_lab.scenarios.discovery import load_scenario
    from harness_lab.store.sql import DRIVER_REFUSALS, one_line
    from harness_lab.store.target import missing_driver, parse_url

    watch_parent_named_in()  # started by conform or a test: end with it
    if args.scenario is None and args.provider_url is None:
        return fail("serve", "say where the providers are: --scenario FILE (its scripted "
                             "providers) or --provider-url URL (an OpenAI-compatible endpoint)")
    for flag, value, ok, rule in (  # comparisons a NaN fails, so a NaN is refused too
            ("--time-scale", args.time_scale, args.time_scale > 0, "> 0"),
            ("--workers", args.workers, args.workers >= 1, ">= 1"),
            ("--grace", args.grace, args.grace >= 0, ">= 0 seconds"),
            ("--stop-wait", args.stop_wait, args.stop_wait >= 0, ">= 0 seconds"),
            ("--header-timeout", args.header_timeout, args.header_timeout > 0, "> 0 seconds"),
            ("--body-timeout", args.body_timeout, args.body_timeout > 0, "> 0 seconds"),
            ("--keepalive", args.keepalive, args.keepalive > 0, "> 0 seconds")):
        if not ok:
            return fail("serve", f"{flag} must be {rule}, got {value}")
    otlp = otlp_option("serve", args.otlp)
    if isinstance(otlp, int):
        return otlp
    _log_to_stderr(args.log_level)
    try:
        scenario = label = None
        if args.scenario is not None:
            scenario, label = load_scenario(args.scenario, args.variant)
        source: RunSource
        if args.provider_url is not None:
            source = HttpSource(args.provider_url, tool_url=args.tool_url, scenario=scenario,
                                model=args.model)
        else:
            assert scenario is not None and label is not None
            source = ScenarioSource(scenario, label)
        url = database_url(args.db)
    except (SourceError, ValueError) as exc:
        return fail("serve", str(exc))
    instance_id = uuid.uuid4().hex[:12]
    db = f"--db {shown_url(args.db)}"
    try:
        store = open_store(url, owner=instance_id)
    except DRIVER_REFUSALS as exc:
        return fail("serve", f"{db}: cannot open the database: {one_line(exc)}")
    except ImportError as exc:  # the URL names a driver that is not installed
        return fail("serve", f"{db}: {missing_driver(parse_url(url), exc)}")
    except (ValueError, TypeError) as exc:  # a URL option the driver cannot take
        return fail("serve", f"{db}: an option of the URL is not one the driver takes: {exc}")
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:
        store.close()
        return fail("serve", f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    # registered once it can serve: a server refused its address is never taken for lost
    instance = Instance(store.inner.engine, instance_id)
    early = _EarlyStops()  # from its registration, a stop ends a server that records it
    try:
        instance.register()
        reaped = instance.reap(stopped=True)
    except DRIVER_REFUSALS as exc:
        early.release()
        store.close()
        sock.close()
        return fail("serve", f"{db}: cannot register this server: {one_line(exc)}")
    clock = WallClock(args.time_scale)
    exported = None
    if otlp is not None:  # each run, once finished, queued for a thread of its own to send
        from harness_lab.otel.background import BackgroundExport

        exported = BackgroundExport(otlp)
    driver = LiveDriver(source, store, clock, workers=args.workers,
                        on_record=None if exported is None else functools.partial(
                            exported.submit, scenario=label if args.provider_url is None
                            else None))
    app = create_app(driver, store, body_timeout_s=args.body_timeout, keepalive_s=args.keepalive,
                     cors_origins=args.cors_origin,
                     store_check=lambda: store_problem(store), instance=instance)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host

    def announce() -> None:  # once started: from then on Ctrl-C stops it gracefully
        print(f"harness-lab serve: listening on http://{shown}:{port} "
              f"({shown_url(source.describe())}; runs stored in {shown_url(url)}; time scale "
              f"{args.time_scale:g}); Ctrl-C stops", flush=True)
        for orphans in reaped:
            said(f"harness-lab serve: {orphans.describe()}")

    # in-flight streams get the grace period, then their cancel's failure event, to end
    config = uvicorn.Config(app, log_level=args.log_level, lifespan="off",
                            timeout_graceful_shutdown=args.grace + args.stop_wait,
                            access_log=False, http=header_timeout_protocol(args.header_timeout))
    server = _graceful_server(config, driver, args.grace, args.stop_wait, early, announce)
    tune_collector()  # started: what exists now lives as long as the server
    stop_beating = threading.Event()
    beats = threading.Thread(target=_heartbeats,
                             args=(instance, driver, stop_beating, HEARTBEAT_S),
                             name="heartbeat", daemon=True)
    beats.start()
    try:
        with _signals_end_quietly():
            server.run(sockets=[sock])
    finally:
        early.release()
        stop_beating.set()
        stuck = driver.close(server.left_to_wait())
        if stuck:
            said(f"harness-lab serve: {len(stuck)} run(s) still blocked {args.stop_wait:g} s "
                 f"after their cancel (on a provider call or a database that does not answer) "
                 f"are left; a row of theirs still RUNNING is ended FAILED (PROCESS_LOST) as "
                 f"this server records its stop, or by the next serve")
        _record_stop(instance, args.stop_wait)
        store.close()
        sock.close()
        if isinstance(source, HttpSource):
            source.close()
        if exported is not None:  # every worker has ended: every record is queued
            print(f"harness-lab serve: {exported.close().describe(exported.target)}",
                  flush=True)
    print(f"harness-lab serve: stopped after {driver.finished} run(s)"
          + (f"; {server.cancelled} cancelled at shutdown" if server.cancelled else ""),
          flush=True)
    return 0


def _record_stop(instance: Any, wait_s: float) -> None:
    """Record this server's stop (ending its runs left RUNNING), waiting at most ``wait_s``
    for the database: one that does not answer must not keep the process from exiting, and
    the next serve then takes this one for lost."""
    from harness_lab.store.sql import DRIVER_REFUSALS, one_line

    outcome: list[Any] = []

    def stop() -> None:
        try:
            outcome.append(instance.stop())
        except DRIVER_REFUSALS as exc:
            outcome.append(exc)

    recording = threading.Thread(target=stop, name="record-stop", daemon=True)
    recording.start()
    recording.join(wait_s)
    if not outcome:
        log.error("serve instance %s: could not record its stop: the database did not answer "
                  "within %g s; the next serve takes this one for lost and ends its runs",
                  instance.instance_id, wait_s)
    elif isinstance(outcome[0], Exception):
        log.error("serve instance %s: could not record its stop: %s", instance.instance_id,
                  one_line(outcome[0]))
    elif outcome[0] is not None:
        said(f"harness-lab serve: {outcome[0].describe()}")


_HANGUP = getattr(signal, "SIGHUP", None)  # none on Windows
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM) + ((_HANGUP,) if _HANGUP is not None else ())
"""The signals that stop ``serve`` gracefully: Ctrl-C, a supervisor's SIGTERM, and the
SIGHUP of a terminal that closed (an ssh session that dropped), whose own action would end
the process with its runs in flight."""


class _EarlyStops:
    """The stop signals kept, not raised, from a server's registration until uvicorn takes
    them over, and honoured once it has started. Python's own SIGINT raises
    KeyboardInterrupt in whatever runs, a weak reference's callback included, where it is
    ignored and the stop lost; SIGTERM would end the process with its registration not
    recorded as stopped."""

    def __init__(self) -> None:
        self.kept: list[int] = []
        self.previous = {sig: signal.signal(sig, self.keep) for sig in STOP_SIGNALS}

    def keep(self, signum: int, _frame: object) -> None:
        """The handler until uvicorn's: keep the signal."""
        if signum == _HANGUP:
            _off_the_terminal()
        self.kept.append(signum)

    def release(self) -> None:
        """Give the signals back their handlers from before."""
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}


def _graceful_server(config: Any, driver: Any, grace_s: float, wait_s: float,
                     early: _EarlyStops, announce: Callable[[], None]) -> Any:
    """uvicorn's server, whose first stop signal also starts the runs' grace period
    (:meth:`LiveDriver.drain`); its ``cancelled`` counts the runs cancelled at the end. Once
    started (uvicorn handles the signals), it calls ``announce`` and honours a stop signal
    ``early`` kept.

    The runs cancelled after the grace period and their streams (uvicorn's graceful
    shutdown) share one deadline, ``wait_s`` after the cancel: ``left_to_wait`` is what is
    left of it once the streams have closed."""
    import uvicorn

    class GracefulServer(uvicorn.Server):
        cancelled = 0
        draining: threading.Thread | None = None
        deadline: float | None = None

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if _HANGUP is not None:  # uvicorn takes SIGINT and SIGTERM; SIGHUP is taken here
                signal.signal(_HANGUP, self.hung_up)
            announce()
            for sig in early.kept:
                self.handle_exit(sig, None)

        def left_to_wait(self) -> float:
            """Seconds the runs still blocked may yet be waited for (``wait_s`` when the
            server stopped without a stop signal)."""
            if self.deadline is None:
                return wait_s
            return max(0.0, self.deadline - time.monotonic())

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.draining is None:
                self.deadline = time.monotonic() + grace_s + wait_s
                if driver.active:
                    print(f"harness-lab serve: stopping; {driver.active} run(s) in flight "
                          f"get {grace_s:g} s to end", flush=True)
                self.draining = threading.Thread(target=self.drain, name="drain",
                                                 daemon=True)
                self.draining.start()
            super().handle_exit(sig, frame)

        def drain(self) -> None:
            self.cancelled = driver.drain(grace_s)

        def hung_up(self, sig: int, frame: Any) -> None:
            _off_the_terminal()
            self.handle_exit(sig, frame)

    return GracefulServer(config)


def _off_the_terminal() -> None:
    """The terminal hung up: what this process writes to it goes to /dev/null from now on,
    as under nohup, so the stop's own messages cannot fail it (a write to a terminal that is
    gone fails with EIO)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            with suppress(OSError):  # a hung-up terminal is no tty any more: a device still
                if stat.S_ISCHR(os.fstat(fd).st_mode):
                    os.dup2(null, fd)
    finally:
        os.close(null)


@contextmanager
def _signals_end_quietly() -> Iterator[None]:
    """Let a stop signal stop the server and this command exit 0 with no traceback.

    uvicorn handles them while it runs and raises the one that stopped it again once it has
    shut down; that one ends here."""
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        if sig != signal.SIGINT:  # Python's own SIGINT handler raises KeyboardInterrupt
            signal.signal(sig, _raise_interrupt)
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def register(sub: Any) -> None:
    """Add ``harness-lab serve``."""
    p = add_command(sub, "serve", __doc__, func=serve)
    p.add_argument("--scenario", metavar="FILE",
                   help="a scenario file: its scripted providers serve every run (fresh for "
                        "each), and its config (deadline, budget, policy) applies; with "
                        "--provider-url, only its config and tool names are used")
    p.add_argument("--variant", metavar="NAME",
                   help="which matrix variant of --scenario to serve (default: the first)")
    p.add_argument("--provider-url", metavar="URL",
                   help="an OpenAI-compatible endpoint (e.g. http://127.0.0.1:9000/v1) for the "
                        "router, diagnosis model, guard, repair and responder")
    p.add_argument("--tool-url", metavar="URL",
                   help="where the HTTP JSON tools and the knowledge retriever are: tool "
                        "NAME is POSTed at URL/tools/NAME, the retriever at URL/retriever "
                        "(default: the scheme, host and port of --provider-url)")
    p.add_argument("--model", default="gpt-4o-mini", metavar="NAME",
                   help="the model name sent with each chat completion")
    p.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                   help="wall seconds per virtual second: 0.01 runs a scenario's seconds of "
                        "latency (and its deadline) in hundredths")
    p.add_argument("--db", default="harness_lab.db", metavar="URL_OR_FILE",
                   help="where runs are stored: an SQLite file (created if missing), or an "
                        "SQLAlchemy URL such as postgresql+psycopg://user@host/db")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on")
    p.add_argument("--port", type=port_number, default=8000,
                   help="the port to listen on; 0 picks a free one, printed at start")
    p.add_argument("--workers", type=int, default=256, metavar="N",
                   help="runs in flight at once, one thread each; more requests wait for a "
                        "worker")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="let a browser page on ORIGIN (e.g. http://localhost:5173; * for any) "
                        "call the server; repeatable; none by default")
    p.add_argument("--keepalive", type=float, default=15.0, metavar="SECONDS",
                   help="send an SSE comment on a stream silent this long (a long provider "
                        "call), so proxies keep it open")
    p.add_argument("--grace", type=float, default=10.0, metavar="SECONDS",
                   help="on SIGINT or SIGTERM, the runs in flight get this long to end; the "
                        "rest are cancelled (SERVER_SHUTDOWN) and their clients told so")
    p.add_argument("--stop-wait", type=float, default=STOP_WAIT_S, metavar="SECONDS",
                   help="after --grace, how long a stopping server waits for runs still "
                        "blocked after their cancel (on a provider or a database that does not "
                        "answer) and their streams, then for the database to record its stop; "
                        "what is left is ended by the next serve")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="close a connection whose request headers are not complete this long "
                        "after it opened or its previous response ended")
    p.add_argument("--body-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="answer 408 and close the connection when a POST /chat body is not "
                        "complete this long after its headers")
    p.add_argument("--otlp", metavar="URL",
                   help="also send each run, as it finishes, as an OpenTelemetry trace to this "
                        "OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318), from a thread of its "
                        "own; needs the otel extra (docs/otel.md)")
    p.add_argument("--log-level", default="warning",
                   choices=("critical", "error", "warning", "info", "debug"),
                   help="the server's log level (its own lines and the HTTP server's, on "
                        "standard error)")
