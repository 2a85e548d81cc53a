"""How long ``harness-lab report`` takes on the shipped scenario library; prints figures.

    python benchmarks/bench_report.py             # the shipped library, best of 3
    python benchmarks/bench_report.py --repeat 1 PATHS...

Two figures: the whole command as a user runs it (a new process pinned to one core where
``taskset`` exists, so interpreter start, imports and the scenario runs count), as wall-clock
and as CPU seconds (user + system: on a busy machine the wall clock also counts the time
other processes held the core), then, inside this process, the page alone (building the
viewer from the results and writing it). Each figure is the best of ``--repeat``
measurements: the fastest repetition is the one least disturbed. The page's size is printed.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import best  # a sibling module: this directory is on the path

ROOT = Path(__file__).resolve().parent.parent


def command_seconds(paths: list[str], out: Path, repeat: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of the whole ``harness-lab report`` command in a new
    process, on one core where possible (each the best of ``repeat``)."""
    command = [sys.executable, "-m", "harness_lab", "report", *paths, "--out", str(out)]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode not in (0, 1):
            raise SystemExit(f"the report command failed ({done.returncode}):\n{done.stderr}")
    return min(walls), min(cpus)


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["scenarios"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from harness_lab.report.html import write_html_report
    from harness_lab.runner import run_paths

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.html"
        wall, cpu = command_seconds(args.paths, out, args.repeat)
        results = run_paths([ROOT / p for p in args.paths])
        page = best(args.repeat, lambda: write_html_report(out, results))
        size = out.stat().st_size
    records = sum(r.record is not None for r in results)
    where = " on one core" if shutil.which("taskset") else ""
    print(f"harness-lab report {' '.join(args.paths)}: {len(results)} scenario(s), "
          f"{records} run record(s)")
    print(f"  whole command, new process{where}: {wall:.2f} s wall clock, {cpu:.2f} s CPU")
    print(f"  viewer page alone: {page:.3f} s "
          f"({1000 * page / max(len(results), 1):.2f} ms a scenario, {size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
