"""How fast ``audit`` checks a large store of runs; prints runs/s, rows/s, peak RSS and wall time.

    python benchmarks/bench_audit.py                        # 1,000,000 runs
    python benchmarks/bench_audit.py --runs 20000 --db /tmp/runs.db
    python benchmarks/bench_audit.py --runs 100000 --profile /tmp/audit.prof
    python benchmarks/bench_audit.py --otlp 10               # the library x10 as OTLP JSON

A seed of 1,000 real runs is made once by ``harness-lab sweep --persist`` of the deadline
sweep (four grid points, lognormal latencies, tool errors, guard outages and disconnects) into
SQLite; :func:`replicate` then writes the seed's rows again and again with fresh run and
invocation ids straight into the database (SQL ``INSERT ... SELECT``, minutes for a
million runs), kept at ``--db`` between invocations. ``audit`` then reads the three tables,
rebuilds every run and checks every invariant that needs no SSE event, in this process and its
workers. Printed: the audit's wall time, runs and rows per second, CPU seconds, the peak
resident memory of this process and of its workers, and the load average.

With ``--otlp N`` the source is OTLP JSON instead: the scenario library's runs written N times
by ``write_otlp_json``, each copy under other scenario names (so its traces are other traces),
and audited as ``harness-lab audit FILE.otlp.jsonl`` does; printed: the file's size, the
time to read and check its spans (before the first run is rebuilt) and the whole audit's,
runs per second and peak RSS.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED_RUNS = 1000
"""Runs made by the sweep; every larger database repeats them."""

_RUN_IDS = ("run_id",)
_TEXT_WITH_IDS = {"diagnosis_run": ("answer_json", "conclusion", "published_result"),
                  "trace_event": ("detail",),
                  "tool_invocation": ("invocation_id", "scope", "call_id")}


def make_seed(db: Path, runs: int = SEED_RUNS) -> float:
    """Fill ``db`` with ``runs`` sweep runs (a quarter per grid point); wall seconds."""
    exe = Path(sys.executable).with_name("harness-lab")
    began = time.perf_counter()
    subprocess.run([str(exe), "sweep", "scenarios/sweeps/deadline-sweep.yaml",
                    "--samples", str(runs // 4), "--seed", "7", "--persist", f"sqlite:///{db}",
                    "--quiet", "--no-log"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def replicate(seed: Path, db: Path, copies: int) -> None:
    """Write ``db``: the runs of ``seed`` ``copies`` times, each copy's run ids (and every
    text that names them: invocation ids, citations, details) suffixed ``-c<k>``, so the
    audit of ``db`` finds ``copies`` times the counts of ``seed``'s."""
    source = sqlite3.connect(seed)
    with sqlite3.connect(db) as conn:
        source.backup(conn)  # the seed's write-ahead log included
        source.close()
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("CREATE TEMP TABLE copy (k INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO copy VALUES (?)", ((k,) for k in range(1, copies)))
        (last,) = conn.execute("SELECT COALESCE(MAX(ordinal), 0) FROM diagnosis_run").fetchone()
        for table in ("diagnosis_run", "trace_event", "tool_invocation"):
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            renamed = {name: f"replace({name}, run_id, run_id || '-c' || k)"
                       for name in (*_RUN_IDS, *_TEXT_WITH_IDS[table])}
            if table == "diagnosis_run":
                renamed["ordinal"] = f"ordinal + k * {last}"
            select = ", ".join(renamed.get(c, c) for c in columns)
            quoted = ", ".join(f'"{c}"' for c in columns)
            conn.execute(f"INSERT INTO {table} ({quoted}) "  # noqa: S608 (our own names)
                         f"SELECT {select} FROM {table}, copy ORDER BY k, {table}.rowid")


def peak_rss_mib() -> tuple[float, float]:
    """The peak resident memory of this process and of its largest waited-for child, MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def bench_otlp(copies: int, workers: int | None) -> None:
    """Write the library's runs ``copies`` times as OTLP JSON, audit the file, print the
    figures."""
    import tempfile

    from harness_lab.audit import audit_runs, open_source
    from harness_lab.audit.tally import AuditTally
    from harness_lab.otel import write_otlp_json
    from harness_lab.runner.run import run_paths

    pairs = [(r.scenario, rec) for r in run_paths([str(ROOT / "scenarios")])
             for rec in (*r.turns, r.record) if rec is not None]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "library.otlp.jsonl"
        began = time.perf_counter()
        written = write_otlp_json(  # each copy's scenario is named apart: other traces
            (rec for _ in range(copies) for _, rec in pairs), path,
            scenarios=[f"{name}#{k}" for k in range(copies) for name, _ in pairs])
        wrote = time.perf_counter() - began
        size = path.stat().st_size
        began = time.perf_counter()
        source = open_source(path)
        read = time.perf_counter() - began
        tally = AuditTally()
        for run in audit_runs(source, workers=workers):
            tally.add(run)
        wall = time.perf_counter() - began
    counts = tally.counts()
    own, children = peak_rss_mib()
    print(f"wrote {written.runs:,} runs ({written.spans:,} spans, {size / 2**20:.1f} MiB) "
          f"as OTLP JSON in {wrote:.1f} s")
    print(f"audited {counts['runs']:,} runs in {wall:.1f} s ({read:.1f} s reading its spans "
          f"before the first run): {counts['runs'] / wall:,.0f} runs/s; "
          f"{counts['checked']:,} checked, {counts['runs with violations']:,} with violations")
    print(f"peak RSS {own:.0f} MiB here, {children:.0f} MiB the largest worker; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--db", default=f"/tmp/harness_lab_audit_{os.getpid()}.db")
    parser.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    parser.add_argument("--profile", metavar="FILE",
                        help="run the audit under cProfile and write its statistics here")
    parser.add_argument("--otlp", type=int, metavar="N",
                        help="audit the scenario library's runs written N times as OTLP JSON "
                             "instead")
    args = parser.parse_args()
    if args.otlp:
        bench_otlp(args.otlp, args.workers)
        return
    db = Path(args.db)
    if not db.exists():
        seed = db.with_name(f"{db.stem}.seed.db")
        if not seed.exists():
            made = make_seed(seed)
            print(f"made {SEED_RUNS:,} seed runs with harness-lab sweep --persist in "
                  f"{made:.1f} s")
        began = time.perf_counter()
        replicate(seed, db, max(1, args.runs // SEED_RUNS))
        print(f"wrote {args.runs:,} runs into {db} in {time.perf_counter() - began:.1f} s")
    with sqlite3.connect(db) as conn:
        rows = sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: S608
                   for t in ("diagnosis_run", "trace_event", "tool_invocation"))
    from harness_lab.audit import audit_runs, open_source
    from harness_lab.audit.tally import AuditTally

    profiler = cProfile.Profile() if args.profile else None
    cpu = time.process_time()
    began = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    tally = AuditTally()
    for run in audit_runs(open_source(f"sqlite:///{db}", count=True), workers=args.workers):
        tally.add(run)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    wall = time.perf_counter() - began
    cpu = time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = tally.counts()
    own, workers = peak_rss_mib()
    print(f"audited {counts['runs']:,} runs ({rows:,} rows) in {wall:.1f} s: "
          f"{counts['runs'] / wall:,.0f} runs/s, {rows / wall:,.0f} rows/s; "
          f"{cpu:.1f} s CPU here, {children.ru_utime + children.ru_stime:.1f} s in workers")
    print(f"{counts['checked']:,} checked, {counts['incomplete']:,} incomplete, "
          f"{counts['runs with violations']:,} with violations")
    print(f"peak RSS {own:.0f} MiB here, {workers:.0f} MiB the largest worker; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
