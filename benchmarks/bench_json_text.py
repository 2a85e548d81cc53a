"""What the kept JSON encoders of ``harness_lab/json_text.py`` save a run, end to end; prints
figures.

``json_text`` keeps one C encoder of :mod:`json` per set of options (``c_make_encoder``, a
private API of CPython) instead of the new one ``json.dumps`` sets up on every call. Its
writers serve the run core at three places: each tool call's canonical scope
(``tools/scope.py``), the persisted answer (``application/chat.py``) and each stored trace
detail (``store/errors.py``). Each measurement runs in a child process that either keeps
those writers (``kept``) or replaces them by the ``json.dumps`` calls they stand for
(``plain``); the two alternate, and the best of ``--repeat`` rounds is printed:

- the one-core canonical sweep without SQL (the scope and the answer), and with SQLite, 256
  runs per transaction (every trace detail as well);
- with ``--instructions``, the instructions a canonical run executes, counted by valgrind
  (the difference between sweeps of 200 and 1,200 runs, the hash seed fixed), which the
  load of a shared machine does not disturb as it does the rates;
- one call of each writer on a value of the canonical run, against ``json.dumps``.

    python benchmarks/bench_json_text.py                  # 20,000 runs a sweep, 3 rounds
    python benchmarks/bench_json_text.py --instructions   # adds valgrind's counts (~10 min)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CANONICAL = HERE / "canonical.yaml"

# (module, attribute, the json.dumps options the writer there stands for)
WRITERS: list[tuple[str, str, dict[str, Any]]] = [
    ("harness_lab.tools.scope", "_CANONICAL",
     {"sort_keys": True, "separators": (",", ":"), "default": str}),
    ("harness_lab.application.chat", "_ANSWER_JSON", {"sort_keys": True}),
    ("harness_lab.store.errors", "dumps", {}),
]

SCOPE = {"service": "checkout", "window": "15m", "limit": 50}
ANSWER = {"conclusion": "The checkout database connection pool is exhausted.",
          "evidence": ["run-1-inv-1", "run-1-inv-2"], "confidence": 0.8,
          "summary": "pool exhaustion after the 14:02 deploy", "next_steps": ["roll back"]}
DETAIL = {"tool": "logs", "invocation_id": "run-1-inv-3", "status": "SUCCEEDED",
          "items": 12, "bytes": 1834}


def use_plain_dumps() -> None:
    """Replace each kept writer by the ``json.dumps`` call it stands for."""
    import functools
    import importlib

    for module, name, options in WRITERS:
        setattr(importlib.import_module(module), name, functools.partial(json.dumps, **options))


def child(variant: str, runs: int, sql: bool) -> float:
    """Runs per second of one canonical sweep in this process."""
    from harness_lab.sweep.engine import Sweep

    if variant == "plain":
        use_plain_dumps()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'runs.db'}" if sql else None
        result = Sweep.from_file(CANONICAL, samples=runs, seed=1, workers=1,
                                 check_invariants=False, store_url=url,
                                 commit_every=256).run()
    return float(result.runs_per_second)


def measure(variant: str, runs: int, sql: bool) -> float:
    """:func:`child` in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--child", variant, "--runs", str(runs)]
                         + (["--sql"] if sql else []), capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent)}).stdout
    return float(out.split()[-1])


def instructions(variant: str, runs: int, sql: bool) -> int:
    """Instructions valgrind counts for :func:`child` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        f"--cachegrind-out-file={out}", sys.executable, __file__, "--child",
                        variant, "--runs", str(runs)] + (["--sql"] if sql else []),
                       capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(HERE.parent), "PYTHONHASHSEED": "0",
                            "OPENBLAS_NUM_THREADS": "1"})
        summary = next(line for line in out.read_text().splitlines()
                       if line.startswith("summary:"))
    return int(summary.split()[1])


def per_call() -> list[tuple[str, float, float]]:
    """(writer, ns a call kept, ns a call with json.dumps), best of five."""
    import importlib

    values = [SCOPE, ANSWER, DETAIL]
    out = []
    for (module, name, options), value in zip(WRITERS, values, strict=True):
        kept = getattr(importlib.import_module(module), name)
        ns = [min(timeit.repeat(lambda f=f, v=value: f(v), number=20_000, repeat=5)) / 20_000 * 1e9
              for f in (kept, lambda v, o=options: json.dumps(v, **o))]
        out.append((f"{module.rsplit('.', 1)[1]}.{name}", ns[0], ns[1]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=("kept", "plain"))
    parser.add_argument("--sql", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each run's instructions under valgrind")
    args = parser.parse_args(argv)
    if args.child:
        print(f"{child(args.child, args.runs, args.sql):.1f}")
        return 0
    from harness_lab.native import core_build

    print(f"run core: {core_build()}")
    for (label, sql, runs) in (("no SQL", False, args.runs),
                               ("SQLite, 256 runs per transaction", True, args.runs // 4)):
        best = {"kept": 0.0, "plain": 0.0}
        for _ in range(max(args.repeat, 1)):
            for variant in best:
                best[variant] = max(best[variant], measure(variant, runs, sql))
        gain = best["kept"] / best["plain"] - 1
        print(f"{label:<34} kept {best['kept']:>8,.0f} runs/s  json.dumps "
              f"{best['plain']:>8,.0f} runs/s  ({runs:,} runs, best of {args.repeat}): "
              f"{gain:+.1%}")
    if args.instructions:
        for label, sql in (("no SQL", False), ("SQLite, 256 runs per transaction", True)):
            per_run = {v: (instructions(v, 1200, sql) - instructions(v, 200, sql)) / 1000
                       for v in ("kept", "plain")}
            print(f"{label:<34} kept {per_run['kept']:>10,.0f} instructions a run  "
                  f"json.dumps {per_run['plain']:>10,.0f}: "
                  f"{1 - per_run['kept'] / per_run['plain']:.1%} fewer")
    for name, kept, plain in per_call():
        print(f"{name:<34} kept {kept:>6.0f} ns a call  json.dumps {plain:>6.0f} ns")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
