"""``harness-lab providers FILE``: one scenario's scripted providers served over HTTP until
interrupted (see :mod:`harness_lab.scripted.server` for the paths)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from harness_lab.cli.common import HelpFormatter

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``providers`` subcommand."""
    q = sub.add_parser("providers", help="serve a scenario's scripted providers over HTTP",
                       formatter_class=HelpFormatter)
    q.add_argument("file", help="the scenario file (FILE[variant] for one variant)")
    q.add_argument("--port", type=int, default=8100, help="0 picks a free port")
    q.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    q.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                   help="wall seconds per scripted second")
    q.set_defaults(func=_cmd_providers)


def _cmd_providers(args: argparse.Namespace) -> int:
    from harness_lab.scripted import ProvidersServer, ScriptError, load_script

    path, _, variant = args.file.partition("[")
    try:
        scenario = load_script(path, None, variant.rstrip("]") or None)
    except ScriptError as exc:
        print(f"harness-lab providers: {exc}", file=sys.stderr)
        return 2
    if not (args.time_scale > 0):
        print(f"harness-lab providers: --time-scale {args.time_scale}: give a number > 0",
              file=sys.stderr)
        return 2
    try:
        server = ProvidersServer(scenario, port=args.port, host=args.host,
                                 time_scale=args.time_scale).start()
    except OSError as exc:
        print(f"harness-lab providers: cannot listen on {args.host}:{args.port}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"harness-lab providers: {scenario.name} on {server.url} (chat: {server.url}/v1, "
          f"tools: {server.url}/tools/NAME); Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
