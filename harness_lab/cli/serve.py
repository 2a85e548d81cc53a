"""Run the harness's lifecycle core live: POST /chat answers with the doc §11 SSE stream, POST
/runs/ID/cancel cancels a run, GET /runs/ID and GET /runs/ID/trace read what was stored. A
client that disconnects cancels its run at once. Providers are a scenario file's scripted ones
(latencies really slept, scaled by --time-scale) or an OpenAI-compatible endpoint
(docs/live.md)."""

from __future__ import annotations

import argparse
import signal
import socket
from typing import Any

from harness_lab.cli.common import add_command, fail

__all__ = ["register", "serve"]


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


class _Stopped(Exception):
    """SIGTERM arrived: stop as Ctrl-C does."""


def _stop(_signum: int, _frame: object) -> None:
    raise _Stopped


def serve(args: argparse.Namespace) -> int:
    """Check every option, open the store and the socket, then serve until stopped."""
    import uvicorn

    from harness_lab.live.clock import WallClock
    from harness_lab.live.driver import LiveDriver
    from harness_lab.live.server import create_app
    from harness_lab.live.sources import HttpSource, RunSource, ScenarioSource, SourceError
    from harness_lab.live.store import database_url, open_store, store_problem
    from harness_lab.parent_watch import watch_parent_named_in
    from harness_lab.scenarios.discovery import load_scenario
    from harness_lab.store.sql import DRIVER_REFUSALS, one_line

    watch_parent_named_in()  # started by conform or a test: end with it
    if args.scenario is None and args.provider_url is None:
        return fail("serve", "say where the providers are: --scenario FILE (its scripted "
                             "providers) or --provider-url URL (an OpenAI-compatible endpoint)")
    if not args.time_scale > 0:
        return fail("serve", f"--time-scale must be > 0, got {args.time_scale}")
    if args.workers < 1:
        return fail("serve", f"--workers must be >= 1, got {args.workers}")
    if not args.keepalive > 0:
        return fail("serve", f"--keepalive must be > 0 seconds, got {args.keepalive}")
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
    try:
        store = open_store(url)
    except DRIVER_REFUSALS as exc:
        return fail("serve", f"--db {_safe(args.db)}: cannot open the database: "
                             f"{one_line(exc)}")
    except ImportError as exc:  # the URL names a driver that is not installed
        return fail("serve", f"--db {_safe(args.db)}: the database driver is not installed "
                             f"({exc})")
    except (ValueError, TypeError) as exc:  # a URL option the driver cannot take
        return fail("serve", f"--db {_safe(args.db)}: an option of the URL is not one the "
                             f"driver takes: {exc}")
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:
        return fail("serve", f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    clock = WallClock(args.time_scale)
    driver = LiveDriver(source, store, clock, workers=args.workers)
    app = create_app(driver, store, keepalive_s=args.keepalive, cors_origins=args.cors_origin,
                     store_check=lambda: store_problem(store))
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"harness-lab serve: listening on http://{shown}:{port} ({source.describe()}; "
          f"runs stored in {_safe(url)}; time scale {args.time_scale:g}); Ctrl-C stops",
          flush=True)
    config = uvicorn.Config(app, log_level=args.log_level, lifespan="off",
                            timeout_graceful_shutdown=2, access_log=False)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except (KeyboardInterrupt, _Stopped):
        pass  # the server re-raises the signal that stopped it, once it has shut down
    finally:
        signal.signal(signal.SIGTERM, previous)
        driver.close()
        store.close()
        sock.close()
    print(f"harness-lab serve: stopped after {driver.finished} run(s)", flush=True)
    return 0


def _safe(url: str) -> str:
    """``url`` without a password."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
        return url if parsed.password is None else parsed.render_as_string(hide_password=True)
    except Exception:  # an unparsable URL fails later with its own message
        return url


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
    p.add_argument("--port", type=int, default=8000,
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
    p.add_argument("--log-level", default="warning",
                   choices=("critical", "error", "warning", "info", "debug"),
                   help="the HTTP server's log level")
