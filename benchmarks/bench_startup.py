"""Start-up time of the command line against a bare interpreter; prints figures.

    python benchmarks/bench_startup.py            # best of 5 runs of each command

Each figure is the best wall clock of ``--repeat`` runs (on a shared machine the fastest is
the least disturbed), of a fresh interpreter running ``python -c pass``, ``harness-lab
--help``, ``harness-lab validate FILE`` and ``harness-lab run FILE``, and the heavy modules
each command imported (pandas, matplotlib, SQLAlchemy, joblib), read from ``-X importtime``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = str(ROOT / "scenarios" / "outcomes" / "conclusion-guards-pass.yaml")
HEAVY = ("pandas", "matplotlib", "sqlalchemy", "joblib", "rich")
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "harness-lab --help": ["-m", "harness_lab.cli", "--help"],
    "harness-lab validate FILE": ["-m", "harness_lab.cli", "validate", FILE],
    "harness-lab run FILE": ["-m", "harness_lab.cli", "run", FILE],
}


def best_of(args: list[str], repeat: int) -> float:
    """The fastest wall clock of ``repeat`` runs of ``python ARGS``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def heavy_imports(args: list[str]) -> list[str]:
    """The heavy top-level packages ``python ARGS`` imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [h for h in HEAVY if h in names]


def main() -> None:
    """Time every command and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bare = None
    for label, command in COMMANDS.items():
        seconds = best_of(command, args.repeat)
        bare = seconds if bare is None else bare
        heavy = ", ".join(heavy_imports(command)) or "none"
        print(f"{label:<28} {seconds:6.3f} s  (+{seconds - bare:.3f} s)  heavy imports: {heavy}")


if __name__ == "__main__":
    main()
