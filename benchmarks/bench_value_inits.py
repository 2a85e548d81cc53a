"""What written ``__init__``s of the frozen value classes save a canonical run, end to end;
prints figures.

A frozen dataclass of the run core either has the ``__init__`` that :mod:`dataclasses`
generates (interpreted, even in a module mypyc compiles) or ``init=False`` and an ``__init__``
of ``object.__setattr__`` lines (native stores once compiled). This compares builds of the
package that differ only in which classes keep a written ``__init__``: each is an installed,
compiled build in its own environment, named ``NAME=PYTHON`` on the command line. For each,
alternated, it prints:

- the instructions a canonical run executes, counted by valgrind as the difference between
  one-core sweeps of 1,200 and 200 runs with invariants (the hash seed fixed), which the load
  of a shared machine does not disturb;
- with ``--rate``, the one-core rate of the canonical sweep with invariants (``--runs`` runs,
  the best of ``--repeat`` rounds, the variants alternated in each round) and the load average.

To make the builds, export each commit and install it, compiled, into an environment of its
own (a build of the same tree is reused otherwise), for instance::

    git archive BRANCH | tar -x -C /tmp/src-NAME
    uv venv /tmp/venv-NAME -p 3.11 && uv pip install -p /tmp/venv-NAME /tmp/src-NAME

    python benchmarks/bench_value_inits.py written=/tmp/venv-a/bin/python \\
        generated=/tmp/venv-b/bin/python --rate

The children run outside any source tree, so each imports the build of its own environment
(the line ``run core`` names it and where it came from).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CANONICAL = HERE / "canonical.yaml"

CHILD = """
import sys
from pathlib import Path
import harness_lab
from harness_lab.native import core_build
from harness_lab.sweep.engine import Sweep
if sys.argv[1] == "core":
    print(f"{core_build()} ({Path(harness_lab.__file__).parent})")
else:
    result = Sweep.from_file(Path(sys.argv[2]), samples=int(sys.argv[1]), seed=1, workers=1,
                             check_invariants=True).run()
    print(f"{result.runs_per_second:.1f}")
"""


def child(python: str, *args: str, valgrind: list[str] | None = None) -> str:
    """The output of :data:`CHILD` run by ``python`` from an empty directory."""
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run([*(valgrind or []), python, "-P", "-c", CHILD, *args],
                              capture_output=True, text=True, check=True, cwd=tmp,
                              env={**os.environ, "PYTHONHASHSEED": "0",
                                   "OPENBLAS_NUM_THREADS": "1"}).stdout.strip()


def instructions(python: str, runs: int, scenario: Path) -> int:
    """Instructions valgrind counts for a one-core sweep of ``runs`` runs of ``scenario``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        child(python, str(runs), str(scenario),
              valgrind=["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        f"--cachegrind-out-file={out}"])
        summary = next(line for line in out.read_text().splitlines()
                       if line.startswith("summary:"))
    return int(summary.split()[1])


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+", metavar="NAME=PYTHON")
    parser.add_argument("--scenario", type=Path, default=CANONICAL,
                        help="the swept scenario (the canonical run by default)")
    parser.add_argument("--rate", action="store_true", help="also the one-core rates")
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    variants = {name: str(Path(python).absolute())
                for name, python in (v.split("=", 1) for v in args.variants)}
    for name, python in variants.items():
        print(f"{name:<12} run core: {child(python, 'core')}")
    scenario = args.scenario.absolute()
    counts = {name: (instructions(python, 1200, scenario) - instructions(python, 200, scenario))
              / 1000
              for name, python in variants.items()}
    base = next(iter(counts.values()))
    for name, count in counts.items():
        print(f"{name:<12} {count:>10,.0f} instructions a run (valgrind, 1,200 minus 200 "
              f"runs, invariants checked): {count / base - 1:+.2%} against {next(iter(counts))}")
    if args.rate:
        best = dict.fromkeys(variants, 0.0)
        for round_ in range(max(args.repeat, 1)):
            for name, python in variants.items():
                rate = float(child(python, str(args.runs), str(scenario)))
                best[name] = max(best[name], rate)
                print(f"round {round_ + 1} {name:<12} {rate:>9,.0f} runs/s on 1 core  "
                      f"(load average {os.getloadavg()[0]:.2f})")
        for name, rate in best.items():
            print(f"{name:<12} {rate:>9,.0f} runs/s on 1 core, best of {args.repeat} "
                  f"({args.runs:,} runs, invariants checked)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
