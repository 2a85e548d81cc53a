"""How fast ``audit`` checks a day of stored runs; prints runs per second.

    python benchmarks/bench_audit.py                    # 100,000 runs
    python benchmarks/bench_audit.py --runs 20000 --db /tmp/runs.db

The runs are made once by ``harness-lab sweep --persist`` of the deadline sweep (four grid
points, lognormal latencies, tool errors, guard outages and disconnects) into a SQLite
database, kept at ``--db`` between invocations; then ``audit`` reads the three tables,
rebuilds every run and checks every invariant that needs no SSE event, in this process, on
one core. Both durations are printed, with CPU seconds for the audit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_database(db: Path, runs: int) -> float:
    """Fill ``db`` with ``runs`` sweep runs (a quarter per grid point); wall seconds."""
    exe = Path(sys.executable).with_name("harness-lab")
    began = time.perf_counter()
    subprocess.run([str(exe), "sweep", "scenarios/sweeps/deadline-sweep.yaml",
                    "--samples", str(runs // 4), "--seed", "7", "--persist", f"sqlite:///{db}",
                    "--quiet", "--no-log"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--db", default=f"/tmp/harness_lab_audit_{os.getpid()}.db")
    args = parser.parse_args()
    db = Path(args.db)
    if not db.exists():
        made = make_database(db, args.runs)
        print(f"made {args.runs:,} runs with harness-lab sweep --persist in {made:.1f} s")
    from harness_lab.audit import audit

    cpu = time.process_time()
    began = time.perf_counter()
    report = audit(f"sqlite:///{db}")
    wall = time.perf_counter() - began
    cpu = time.process_time() - cpu
    counts = report.counts()
    print(f"audited {counts['runs']:,} runs in {wall:.1f} s ({cpu:.1f} s CPU, one core): "
          f"{counts['runs'] / wall:,.0f} runs/s; {counts['checked']:,} checked, "
          f"{counts['incomplete']:,} incomplete, {counts['runs with violations']:,} with "
          "violations")


if __name__ == "__main__":
    main()
