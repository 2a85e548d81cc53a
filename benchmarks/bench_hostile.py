"""How fast, and in how much memory, ``harness-lab validate`` refuses each hostile scenario file.

Each family of ``tests/scenarios/hostile.py`` is written to a fresh directory and validated
in its own process (``python -m harness_lab validate DIR``); the table gives the time the
command took to refuse the file (measured inside the process, start-up excluded), the whole
process's wall time and its peak memory (``ru_maxrss`` from ``wait4``), the exit code and the
first line of what it printed. A well-formed file is the first row, as the baseline.

    .venv/bin/python -m benchmarks.bench_hostile          # about 30 s on two cores
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.scenarios import TWO_TOOL_DIAGNOSIS
from tests.scenarios.hostile import FAMILIES, write

_CHILD = """\
import sys, time
from harness_lab.cli import main
t0 = time.perf_counter()
code = main(["validate", sys.argv[1]])
print(f"{time.perf_counter() - t0:.4f}", file=sys.__stdout__)
raise SystemExit(code)
"""

BASELINE = "a well-formed file (baseline)"


def measure(directory: Path) -> tuple[float, float, float, int, str]:
    """(seconds refusing, seconds wall, peak MiB, exit code, first line of stderr)."""
    env = {**os.environ, "HARNESS_LAB_PURE": "1"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", _CHILD, str(directory)],
                                 stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        printed, problems = out.read().strip(), err.read().strip()
    first = (problems or printed).splitlines()[0] if (problems or printed) else ""
    inner = float(printed.splitlines()[-1]) if printed else float("nan")
    return inner, wall, usage.ru_maxrss / 1024, child.returncode, first


def main() -> None:
    """Print one row per family."""
    print(f"{'family':<48} {'refuse s':>8} {'wall s':>7} {'peak MiB':>8} {'exit':>4}  first line")
    rows = [BASELINE, *FAMILIES]
    for family in rows:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            if family == BASELINE:
                (directory / "x.yaml").write_text(TWO_TOOL_DIAGNOSIS, encoding="utf-8")
            else:
                write(family, directory)
            inner, wall, peak, code, first = measure(directory)
        shown = first.replace(str(directory), "DIR")
        print(f"{family:<48} {inner:8.3f} {wall:7.2f} {peak:8.0f} {code:>4}  {shown[:90]}")
    print("\npeak MiB is each process's own peak resident memory (a fresh interpreter each); "
          "the baseline row shows what start-up and a good file take.")


if __name__ == "__main__":
    main()
