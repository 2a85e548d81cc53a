"""Exploring the whole scenario library on every core; prints figures.

    python benchmarks/bench_explore.py                 # scenarios/ on every core
    python benchmarks/bench_explore.py --workers 1     # on one
    python benchmarks/bench_explore.py scenarios/outcomes/conclusion-guards-pass.yaml

Prints the files, bases and variants explored, the planning time (loading the files,
recording each base run, enumerating its variants), the running and judging time, the whole
wall clock, the cost per variant per worker, and which run core served (compiled or pure).
The command-line figure (``harness-lab explore scenarios/``) adds the interpreter's start-up.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Explore the paths and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios")])
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: every core)")
    args = parser.parse_args()
    start = time.perf_counter()
    from harness_lab.explore.library import default_workers, plan_library, run_library
    from harness_lab.native import core_build

    imported = time.perf_counter()
    plan = plan_library(args.paths)
    planned = time.perf_counter()
    library = run_library(plan, workers=args.workers)
    done = time.perf_counter()
    result = library.result
    workers = result.workers
    print(f"core: {core_build()}")
    print(f"files {library.files}, bases {len(result.bases)}, variants "
          f"{result.variant_count:,}, not explorable {len(library.unexplored)}, "
          f"flagged {len(result.flagged)}")
    print(f"imports {imported - start:.2f} s, planning {planned - imported:.2f} s, "
          f"running and judging {done - planned:.2f} s on {workers} of "
          f"{default_workers()} core(s)")
    print(f"wall clock {done - start:.2f} s; "
          f"{(done - planned) * workers / max(result.variant_count, 1) * 1e3:.2f} ms "
          "per variant per worker")


if __name__ == "__main__":
    main()
