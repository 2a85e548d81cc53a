"""Wall time of the README's quick-start commands on a fresh clone; prints figures.

    python benchmarks/bench_install.py            # the first command, then the second's install
    python benchmarks/bench_install.py --pip      # adds the same install done with pip alone

Each measurement clones this checkout's last commit into a new directory and gives the
installers empty caches of their own (``UV_CACHE_DIR``, ``PIP_CACHE_DIR``), as on a fresh
machine; only the package registries' answers and the operating system's file cache are warm.
It times the first quick-start command as written (it must print the scenario outcome
table and end with every scenario ok), then, in the same clone, the second command's install
(everything before ``pytest``), and says whether that install compiled the run core again:
it must not, for the first one compiled the same sources.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"(\d+) scenario run\(s\), (\d+) ok")


def quick_start() -> tuple[str, str]:
    """The README's two quick-start commands."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme.split("## Quick start", 1)[1], re.S)
    if block is None:
        sys.exit("README.md has no quick-start sh block")
    first, second = [line for line in block.group(1).splitlines() if line.strip()]
    return first, second


def pip_variant(command: str) -> str:
    """``command`` with uv's install replaced by pip's."""
    command = command.replace(".venv/bin/pip install -q uv && ", "")
    return command.replace(".venv/bin/uv pip install -q -p .venv", ".venv/bin/pip install -q")


def _timed(command: str, cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"exit {done.returncode}: {command}\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def _extensions(clone: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in clone.rglob("*.so") if ".venv" not in p.parts}


def measure(first: str, second: str, label: str) -> None:
    """Time ``first`` and the install of ``second`` in a fresh clone; print one line each."""
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        clone = Path(tmp) / "harness_lab"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {**os.environ, "UV_CACHE_DIR": f"{tmp}/uv-cache",
               "PIP_CACHE_DIR": f"{tmp}/pip-cache", "COLUMNS": "100"}
        env.pop("VIRTUAL_ENV", None)
        seconds, out = _timed(first, clone, env)
        summary = SUMMARY.search(out)
        if summary is None or summary.group(1) != summary.group(2):
            sys.exit(f"the first command did not end with every scenario ok:\n{out[-1000:]}")
        compiled = _extensions(clone)
        print(f"{label:<5} first command   {seconds:6.1f} s  ({summary.group(0)}, "
              f"{len(compiled)} extension files)")
        install = second.split(" && .venv/bin/python -m pytest", 1)[0]
        seconds, _ = _timed(install, clone, env)
        again = _extensions(clone)
        verdict = ("reused the compiled core" if again == compiled
                   else f"COMPILED AGAIN ({sum(again.get(p) != t for p, t in compiled.items())}"
                        " modules rewritten)")
        print(f"{label:<5} second install  {seconds:6.1f} s  ({verdict})")


def main() -> None:
    """Measure the quick start as written, then, with ``--pip``, with pip alone."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pip", action="store_true", help="also measure pip alone")
    parser.add_argument("--repeat", type=int, default=1, help="measurements of each")
    args = parser.parse_args()
    first, second = quick_start()
    for _ in range(args.repeat):
        measure(first, second, "uv" if "uv pip" in first else "as is")
    if args.pip:
        for _ in range(args.repeat):
            measure(pip_variant(first), pip_variant(second), "pip")


if __name__ == "__main__":
    main()
