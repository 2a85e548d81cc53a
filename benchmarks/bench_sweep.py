"""Sweep throughput and memory of the canonical diagnosis run; prints figures.

    python benchmarks/bench_sweep.py            # quick: 20,000 runs per measurement
    python benchmarks/bench_sweep.py --full     # adds the 1,000,000-run sweep on 2 cores

Each one-core figure is the best of ``--repeat`` measurements (3 by default), as timeit
reports: on a shared machine the fastest repetition is the one least disturbed.

The canonical run (``benchmarks/canonical.yaml``) routes, makes five tool calls, passes both
guards, releases, streams SSE and writes its trace. The floor is a bare simpy process making
the same number of timed boundaries per run; the SQLite floor is the driver alone writing the
rows the persisted sweep stored.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import simpy

HERE = Path(__file__).resolve().parent
CANONICAL = HERE / "canonical.yaml"


def _sweep(samples: int, *, workers: int = 1, invariants: bool = True,
           store_url: str | None = None, commit_every: int = 256) -> Any:
    from harness_lab.sweep.engine import Sweep

    return Sweep.from_file(CANONICAL, samples=samples, seed=1, workers=workers,
                           check_invariants=invariants, store_url=store_url,
                           commit_every=commit_every).run()


def boundaries_per_run() -> int:
    """Timed calls of one canonical run (router, model steps, tools, guard)."""
    result = _sweep(1)
    row = result.frame.iloc[0]
    return 1 + int(row["model_calls"]) + int(row["tool_calls"]) + 1


def bare_simpy(runs: int, boundaries: int) -> float:
    """Runs per second of a bare simpy process with ``boundaries`` timeouts per run."""
    def run(env: simpy.Environment) -> Any:
        for _ in range(boundaries):
            yield env.timeout(0.5)

    started = time.perf_counter()
    for _ in range(runs):
        env = simpy.Environment()
        env.process(run(env))
        env.run()
    return runs / (time.perf_counter() - started)


def sqlite_floor(db: Path, every: int = 256) -> float:
    """Runs per second of the driver alone writing the rows a persisted sweep left in ``db``.

    The rows of every run (its ``diagnosis_run`` row, invocations and trace events) are
    copied into a fresh database of the same schema and pragmas, ``every`` runs per
    transaction, one ``executemany`` per table: the cost of SQLite itself, with no harness,
    no SQLAlchemy and no JSON encoding.
    """
    import sqlite3

    from harness_lab.store.sql import SqlRunStore

    source = sqlite3.connect(db)
    tables = ("diagnosis_run", "tool_invocation", "trace_event")
    by_run: dict[str, dict[str, list[tuple[Any, ...]]]] = {}
    for table in tables:
        cursor = source.execute(f"SELECT * FROM {table} ORDER BY rowid")  # noqa: S608
        key = [d[0] for d in cursor.description].index("run_id")
        for row in cursor:
            by_run.setdefault(row[key], {t: [] for t in tables})[table].append(row)
    source.close()
    runs = list(by_run.values())
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "floor.db"
        SqlRunStore.from_path(target).engine.dispose()  # the same schema and indexes
        conn = sqlite3.connect(target)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        sql = {t: f"INSERT INTO {t} VALUES ({','.join('?' * len(runs[0][t][0]))})"  # noqa: S608
               for t in tables}
        started = time.perf_counter()
        for i in range(0, len(runs), every):
            group = runs[i:i + every]
            for t in tables:
                conn.executemany(sql[t], [row for run in group for row in run[t]])
            conn.commit()
        elapsed = time.perf_counter() - started
        conn.close()
    return len(runs) / elapsed


def pure_core(runs: int, repeat: int) -> float:
    """Runs per second without SQL or invariants in a process running the pure-Python core."""
    import os
    import subprocess

    from harness_lab.native import PURE_ENV

    out = subprocess.run([sys.executable, __file__, "--core-only", "--runs", str(runs),
                          "--repeat", str(repeat)], env={**os.environ, PURE_ENV: "1"},
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def peak_rss_mib() -> float:
    """Peak resident memory of this process and its finished children, in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--full", action="store_true", help="also the 1,000,000-run sweep")
    parser.add_argument("--repeat", type=int, default=3,
                        help="repetitions of each one-core measurement; the best is printed")
    parser.add_argument("--core-only", action="store_true",
                        help="print only the no-SQL figure (the pure-core comparison uses it)")
    args = parser.parse_args(argv)
    rep = max(args.repeat, 1)
    n = args.runs
    from harness_lab.native import core_build

    if args.core_only:
        r = max((_sweep(n, invariants=False) for _ in range(rep)),
                key=lambda x: x.runs_per_second)
        print(f"{r.runs_per_second:.1f}")
        return 0
    bounds = boundaries_per_run()
    print(f"run core: {core_build()}")
    print(f"canonical run: {bounds} timed boundaries per run")
    figures: dict[str, float] = {}
    for label, invariants in (("no SQL, invariants checked", True),
                              ("no SQL, invariants off", False)):
        r = max((_sweep(n, invariants=invariants) for _ in range(rep)),
                key=lambda x: x.runs_per_second)
        figures[label] = r.runs_per_second
        print(f"{label:<36} {r.runs_per_second:>9,.0f} runs/s on 1 core  ({n:,} runs, "
              f"{r.elapsed_s:.2f} s, {1e6 / r.runs_per_second:.0f} us/run)")
    m = max(n // 4, 1000)
    for label, every in (("SQLite, a transaction per run step", 1),
                         ("SQLite, 256 runs per transaction", 256)):
        best, sql_floor = 0.0, 0.0
        for _ in range(rep):
            with tempfile.TemporaryDirectory() as tmp:
                db = Path(tmp) / "runs.db"
                r = _sweep(m, store_url=f"sqlite:///{db}", commit_every=every)
                best = max(best, r.runs_per_second)
                sql_floor = max(sql_floor, sqlite_floor(db))  # the last loop's rows: grouped
        print(f"{label:<36} {best:>9,.0f} runs/s on 1 core  ({m:,} runs, "
              f"{1e6 / best:.0f} us/run)")
    print(f"{'SQLite alone, the same rows':<36} {sql_floor:>9,.0f} runs/s  "
          f"({1e6 / sql_floor:.0f} us/run: the driver writing each run's rows, 256 a "
          f"transaction)")
    floor = max(bare_simpy(n, bounds) for _ in range(rep))
    harness = figures["no SQL, invariants off"]
    print(f"{'bare simpy loop (the floor)':<36} {floor:>9,.0f} runs/s  "
          f"(harness / floor = 1 : {floor / harness:.1f})")
    if core_build().compiled:
        pure = pure_core(n, rep)
        print(f"{'no SQL, invariants off, pure core':<36} {pure:>9,.0f} runs/s on 1 core  "
              f"({1e6 / pure:.0f} us/run; the compiled core is {harness / pure:.2f}x)")
    if args.full:
        for samples in (10_000, 100_000, 1_000_000):
            r = _sweep(samples, workers=2)
            print(f"{samples:>9,} runs on 2 cores: {r.elapsed_s:7.1f} s, "
                  f"{1e6 * r.elapsed_s / samples:6.1f} us/run wall, "
                  f"{r.runs_per_second:8,.0f} runs/s, peak RSS {peak_rss_mib():7.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
