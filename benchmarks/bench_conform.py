"""Parity of the simulation and the live harness over the whole scenario library.

    python benchmarks/bench_conform.py                          # SQLite, scenarios/
    python benchmarks/bench_conform.py --db postgresql+psycopg://postgres@127.0.0.1:5432/x
    python benchmarks/bench_conform.py --pg                     # a throwaway PostgreSQL

Plays every scenario with ``conform --serve`` (a ``harness-lab serve`` for each scenario
configuration, shared by the scenarios that have it, on the scripted providers over HTTP)
and prints how many serves it started and the parity
figure: the share of the applicable scenarios whose simulated and live outcomes (RunState,
ReleaseOutcome, FallbackType, stored status, SSE kinds and statuses) agree, then each
disagreement, each failure and each scenario not applicable live, with the reasons.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def _postgres() -> Iterator[str]:
    sys.path.insert(0, str(ROOT))
    from tests.postgres import postgres_url

    yield from postgres_url.__wrapped__()  # type: ignore[attr-defined]


def main() -> int:
    """Run the library live and print the figures."""
    from harness_lab.live.adapter import Adapter
    from harness_lab.live.conform import ConformResult
    from harness_lab.live.conform_suite import run_suite
    from harness_lab.runner.run import plan_paths

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios")])
    parser.add_argument("--db", help="serve's database URL (default: a temporary SQLite)")
    parser.add_argument("--pg", action="store_true", help="start a throwaway PostgreSQL")
    parser.add_argument("--time-scale", type=float, default=0.05)
    args = parser.parse_args()
    plan = plan_paths(args.paths)
    planned = [p.loaded if p.loaded is not None else ConformResult(
        p.result.scenario, p.result.path or "", "error", (p.result.error or "",))
        for p in plan if p.loaded is not None or p.result is not None]
    with (_postgres() if args.pg else contextlib.nullcontext(args.db)) as db:
        began = time.perf_counter()
        report = run_suite(planned, url=None, adapter=Adapter(), time_scale=args.time_scale,
                           db=db)
        took = time.perf_counter() - began
    c = report.counts()
    store = "PostgreSQL" if args.pg or (db or "").startswith("postgres") else "SQLite"
    print(f"store: {store}; time scale {args.time_scale}; {took:.1f} s wall; "
          f"{report.serves} serve(s) started")
    print(f"scenarios: {c['scenarios']}  pass {c['pass']}  fail {c['fail']}  "
          f"error {c['error']}  not applicable live {c['n/a']}")
    parity = report.parity
    print(f"parity: {c['agree']}/{c['compared']} = "
          f"{parity:.1%}" if parity is not None else "parity: -")
    for r in report.results:
        if r.agrees is False:
            assert r.simulated is not None and r.live is not None
            print(f"  disagrees  {r.scenario}: {'; '.join(r.simulated.differences(r.live))}")
    for r in report.results:
        if r.verdict in ("fail", "error"):
            print(f"  {r.verdict:<10} {r.scenario}: {'; '.join(r.reasons)}")
    for r in report.results:
        if r.verdict == "n/a":
            print(f"  n/a        {r.scenario}: {'; '.join(r.reasons)}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
