"""``harness-lab providers FILE``: one scenario's scripted providers served over HTTP until
interrupted (see :mod:`harness_lab.scripted.server` for the paths)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from harness_lab.cli.common import EXIT_USAGE, add_command, fail, port_number, usage_problem

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``providers`` subcommand."""
    q = add_command(sub, "providers", func=_cmd_providers)
    q.add_argument("file", help="the scenario file (FILE[variant] for one variant)")
    q.add_argument("--port", type=port_number, default=8100, help="0 picks a free port")
    q.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    q.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                   help="wall seconds per scripted second")


def _cmd_providers(args: argparse.Namespace) -> int:
    from harness_lab.scripted import ProvidersServer, ScriptError, load_script

    if usage_problem("providers", [args.file], None):
        return EXIT_USAGE
    path, _, variant = args.file.partition("[")
    try:
        scenario = load_script(path, None, variant.rstrip("]") or None)
    except ScriptError as exc:
        return fail("providers", str(exc))
    if not (args.time_scale > 0):
        return fail("providers", f"--time-scale {args.time_scale}: give a number > 0")
    try:
        server = ProvidersServer(scenario, port=args.port, host=args.host,
                                 time_scale=args.time_scale).start()
    except OSError as exc:
        return fail("providers", f"cannot listen on {args.host}:{args.port}: "
                                 f"{exc.strerror or exc}")
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
