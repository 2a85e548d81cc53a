"""``harness-lab conform URL [SCENARIOS]``.

It plays the scenario files against a live harness (``--serve``: a ``harness-lab
serve`` of its own for each scenario configuration, shared by the scenarios that have it)
and prints one row per scenario and the parity figure; exit 0 when every applicable scenario
passed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from harness_lab.cli.common import (
    DEFAULT_PATHS,
    EXIT_NO_SCENARIOS,
    EXIT_USAGE,
    add_command,
    fail,
    filled,
    port_number,
    usage_problem,
)

__all__ = ["register"]

_VERDICT_STYLE = {"pass": "#117733", "fail": "#CC3311", "error": "#CC3311", "n/a": "#777777"}


def _url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the harness's base URL (an invalid port, no host), or None."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"not a URL a request can go to ({exc})"
    return None if parsed.host else "not a URL a request can go to (it names no host)"


def _unreachable(url: str) -> str | None:
    """Why no request reaches the harness at ``url`` (nothing listens there, its name does
    not resolve), or None: any answer, an HTTP error or a slow one included, is a harness."""
    import httpx

    try:
        httpx.get(url, timeout=httpx.Timeout(5.0, read=1.0))
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        return str(exc) or type(exc).__name__
    except httpx.HTTPError:
        return None
    return None


def register(sub: Any) -> None:
    """Add the ``conform`` subcommand."""
    p = add_command(sub, "conform", func=_cmd_conform)
    p.add_argument("url", nargs="?", help="the harness's base URL (leave out with --serve)")
    p.add_argument("paths", nargs="*", default=[], metavar="SCENARIOS",
                   help="scenario files or directories (default: scenarios)")
    p.add_argument("--serve", action="store_true",
                   help="start a harness-lab serve of its own on a free local port for each "
                        "scenario configuration (shared by the scenarios that have it)")
    p.add_argument("--adapter", metavar="FILE",
                   help="a YAML adapter file mapping another harness's paths, event names and "
                        "fields (see docs/conform.md)")
    p.add_argument("--db", metavar="URL",
                   help="with --serve: where serve stores runs (default: a temporary SQLite "
                        "file); e.g. postgresql+psycopg://user@host/db")
    p.add_argument("--time-scale", type=float, default=0.05, metavar="X",
                   help="wall seconds per scripted second")
    p.add_argument("--tolerance", metavar="S[+P%]",
                   help="how far a live time or duration may be from the expected one: S "
                        "virtual seconds plus P%% of the run's time so far (default: 0.125 "
                        "wall seconds, so 2.5 at --time-scale 0.05, plus 5%%; 0: exact)")
    p.add_argument("--providers-port", type=port_number, default=0, metavar="N",
                   help="the port of the scripted providers, which the harness at URL is "
                        "configured to call (default: a free one, fine with --serve)")
    p.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="a table with a closing line (default), or every result as JSON")


def _cmd_conform(args: argparse.Namespace) -> int:
    from harness_lab.live.adapter import Adapter, AdapterError, load_adapter
    from harness_lab.live.conform import ConformResult, Tolerance
    from harness_lab.live.conform_suite import run_suite
    from harness_lab.runner.run import SelectionError, plan_paths

    paths = list(args.paths)
    url = args.url
    if url is not None and not url.startswith(("http://", "https://")):
        paths.insert(0, url)  # `conform --serve scenarios/...`: the first word is a path
        url = None
    if args.serve == (url is not None):
        return fail("conform", "give the harness's URL, or --serve to start one (not both)")
    if args.serve:  # each serve it would start needs the live extra: a missing package is
        # named once, here, rather than as the error of every scenario
        import uvicorn  # noqa: F401

        import harness_lab.live.server  # noqa: F401
    if url is not None and (problem := _url_problem(url)) is not None:
        return fail("conform", f"{url}: {problem}")
    if not (args.time_scale > 0):
        return fail("conform", f"--time-scale {args.time_scale}: give a number > 0")
    try:
        tolerance = None if args.tolerance is None else Tolerance.parse(args.tolerance)
    except ValueError as exc:
        return fail("conform", f"--tolerance {exc}")
    if args.db is not None:  # checked as serve checks it, once rather than for each serve
        from harness_lab.live.store import database_url

        try:
            database_url(args.db)
        except ValueError as exc:
            return fail("conform", str(exc))
    paths = paths or list(DEFAULT_PATHS)
    if usage_problem("conform", paths, None):
        return EXIT_USAGE
    if url is not None and (problem := _unreachable(url)) is not None:
        return fail("conform", f"nothing answers at {url} ({problem}): start the harness "
                               "there, or give --serve to play against a serve of its own")
    try:
        adapter = load_adapter(args.adapter) if args.adapter else Adapter()
        plan = plan_paths(paths, tags=args.tag)
    except (AdapterError, SelectionError) as exc:
        return fail("conform", str(exc))
    if not plan:
        return fail("conform", "no scenario selected", EXIT_NO_SCENARIOS)
    planned = [p.loaded if p.loaded is not None else
               ConformResult(p.result.scenario if p.result else "?",
                             p.result.path or "" if p.result else "", "error",
                             (p.result.error or "",) if p.result else ())
               for p in plan]
    table = args.format == "table"
    began = time.monotonic()
    played = 0

    def shown(result: Any) -> None:
        nonlocal played
        played += 1
        if table and sys.stderr.isatty():
            print(f"  {played}/{len(planned)} {result.scenario}: {result.verdict}",
                  file=sys.stderr)

    try:
        report = run_suite(planned, url=url, adapter=adapter, time_scale=args.time_scale,
                           db=args.db, on_result=shown, providers_port=args.providers_port,
                           tolerance=tolerance)
    except OSError as exc:
        return fail("conform", "the scripted providers cannot listen on port "
                               f"{args.providers_port}: {exc.strerror or exc}")
    if not table:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return 0 if report.ok else 1
    from harness_lab.terminal.tables import Column, print_table

    rows = [_row(result) for result in report.results]  # in the order they were asked for
    print_table(rows, [Column("scenario", "scenario", name=True),
                       Column("verdict", "verdict", style=lambda v: _VERDICT_STYLE.get(v)),
                       Column("run_state", "live run state"), Column("parity", "= simulated")])
    from harness_lab.terminal.console import width_of

    width = max(width_of(sys.stdout), 40)
    for row in rows:  # the reasons wrapped to the terminal, as diff's details are
        if row["why"] != "-":
            print(filled(f"{row['scenario']} ({row['verdict']}): {row['why']}", width, "    "))
    c = report.counts()
    figure = f"{report.parity:.1%}" if report.parity is not None else "-"
    print(f"\n{c['scenarios']} scenario(s): {c['pass']} pass, {c['fail']} fail, "
          f"{c['error']} error, {c['n/a']} not applicable live")
    print(f"parity with the simulation {figure} ({c['agree']}/{c['compared']} outcomes "
          f"agree) in {time.monotonic() - began:.1f} s"
          + (f" on {report.serves} serve(s)" if report.serves else ""))
    return 0 if report.ok else 1


def _row(result: Any) -> dict[str, Any]:
    live, sim = result.live, result.simulated
    diff = sim.differences(live) if sim is not None and live is not None else []
    why = "; ".join([f"vs simulation: {d}" for d in diff] + list(result.reasons))
    return {"scenario": result.scenario, "verdict": result.verdict,
            "run_state": live.run_state if live else None,
            "parity": "-" if result.agrees is None else ("=" if result.agrees else "≠"),
            "why": why or "-"}

