"""Exploring the whole scenario library on every core; prints figures.

    python benchmarks/bench_explore.py                 # scenarios/ on every core
    python benchmarks/bench_explore.py --workers 1     # on one
    python benchmarks/bench_explore.py scenarios/outcomes/conclusion-guards-pass.yaml

Prints the files, bases and variants explored, the planning time (loading the files,
recording each base run, enumerating its variants), the running and judging time, the whole
wall clock, the cost per variant per worker, the CPU time spent by this process and its
worker processes (read from ``/proc``, so on Linux only; a figure a busy machine disturbs
less than the wall clock), and which run core served (compiled or pure). The command-line
figure (``harness-lab explore scenarios/``) adds the interpreter's start-up.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def children_cpu_s() -> float | None:
    """CPU seconds (user and system) of this process's live child processes, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    me, total = os.getpid(), 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in filter(str.isdigit, entries):
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == me:  # fields[1] is the parent pid; utime, stime are 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def main() -> None:
    """Explore the paths and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios")])
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: every core)")
    args = parser.parse_args()
    start = time.perf_counter()
    cpu_start = time.process_time()
    from harness_lab.explore.library import plan_library, run_library
    from harness_lab.native import core_build
    from harness_lab.pool import available_cores

    imported = time.perf_counter()
    plan = plan_library(args.paths)
    planned = time.perf_counter()
    library = run_library(plan, workers=args.workers)
    done = time.perf_counter()
    cpu = time.process_time() - cpu_start
    workers_cpu = children_cpu_s()
    result = library.result
    workers = result.workers
    print(f"core: {core_build()}")
    print(f"files {library.files}, bases {len(result.bases)}, variants "
          f"{result.variant_count:,}, not explorable {len(library.unexplored)}, "
          f"flagged {len(result.flagged)}")
    print(f"imports {imported - start:.2f} s, planning {planned - imported:.2f} s, "
          f"running and judging {done - planned:.2f} s on {workers} of "
          f"{available_cores()} core(s)")
    print(f"wall clock {done - start:.2f} s; "
          f"{(done - planned) * workers / max(result.variant_count, 1) * 1e3:.2f} ms "
          "per variant per worker")
    shown = "n/a" if workers_cpu is None else f"{workers_cpu:.2f} s"
    print(f"CPU {cpu:.2f} s in this process, {shown} in worker processes")


if __name__ == "__main__":
    main()
