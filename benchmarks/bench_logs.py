"""What keeping a run log costs: ``harness-lab run`` on the library with and without it.

    python benchmarks/bench_logs.py                 # the shipped library, best of 3
    python benchmarks/bench_logs.py --repeat 1 PATHS...

Figures: the whole command in a new process with the log and with ``--no-log`` (CPU seconds,
user + system, of the child: on a shared machine the wall clock also counts other processes'
time), then, inside this process, writing the log of the library's results and reading it
back with ``read_log``, per run and in total, and the log's size. Each figure is the best of
``--repeat`` measurements.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import best  # a sibling module: this directory is on the path

ROOT = Path(__file__).resolve().parent.parent


def command_cpu(paths: list[str], extra: list[str], repeat: int) -> float:
    """The least CPU seconds (user + system) of ``harness-lab run PATHS -q`` in a new process."""
    exe = Path(sys.executable).with_name("harness-lab")
    figures = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryDirectory() as logs:
            subprocess.run([str(exe), "run", *paths, "-q", "--format", "csv",
                            "--log-dir", logs, *extra], cwd=ROOT, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "HARNESS_LAB_PURE": "1"})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        figures.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(figures)


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["scenarios"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from harness_lab.logs import LogWriter, read_log
    from harness_lab.runner.run import run_paths

    with_log = command_cpu(args.paths, [], args.repeat)
    without = command_cpu(args.paths, ["--no-log"], args.repeat)
    print(f"harness-lab run {' '.join(args.paths)}: {with_log:.2f} s CPU with the log, "
          f"{without:.2f} s with --no-log ({with_log - without:+.2f} s)")
    results = run_paths(args.paths)
    with tempfile.TemporaryDirectory() as where:
        paths: list[Path] = []

        def write() -> None:
            with LogWriter.open(where, "run") as writer:
                for result in results:
                    writer.add(result)
            paths.append(writer.path)

        wrote = best(args.repeat, write)
        read = best(args.repeat, lambda: read_log(paths[-1]))
        size = paths[-1].stat().st_size
    n = len(results)
    print(f"{n} scenario runs: log written in {wrote * 1000:.1f} ms ({wrote / n * 1e6:.0f} µs "
          f"a run), read back in {read * 1000:.1f} ms ({read / n * 1e6:.0f} µs a run); "
          f"{size / 1024:.0f} KiB ({size / n / 1024:.1f} KiB a run)")


if __name__ == "__main__":
    main()
