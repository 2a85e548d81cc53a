"""Load and races against ``harness-lab serve`` on 127.0.0.1; checks every run, prints figures.

    python benchmarks/bench_live_load.py                  # 1,000 runs, 500 streams at once
    python benchmarks/bench_live_load.py --runs 2000 --concurrency 800 --json
    python benchmarks/bench_live_load.py --postgres       # a throwaway PostgreSQL server

Starts ``serve`` on a free port with a scenario's scripted providers (latencies slept,
scaled) and a fresh SQLite file (or ``--db URL``, or ``--postgres``), then sends runs as real
SSE clients, at most ``--concurrency`` at once. A share of the clients (``--disconnect``)
close their connection at a random moment after the run's metadata; another share
(``--cancel``) cancel their run (``POST /runs/ID/cancel``) at a random moment and read on.

**What each client records.** A disconnecting client *really left* only when it closed its
connection before it received ``done`` or ``failure``; one whose timer outlasted the stream
stayed to the end and is counted so. A client notes its own monotonic time when it sent its
request, when the metadata arrived and just before it closed the connection.

**The checks** (each failure is counted by kind; any makes the exit status 1):

* every run's diagnosis_run row is complete (a terminal state, a finish time), its stored
  trace is the run's whole trace ending in RUN_FINISHED, and its record
  (``GET /runs/ID/record``) holds every invariant of :mod:`harness_lab.invariants`;
* a client that really left has a run stored CANCELLED with the reason CLIENT_DISCONNECTED
  and a RUN_CANCELLED event with that reason in its stored trace, unless the run's terminal
  state was provably decided before the client left (a legal race: the run's ``done`` was on
  its way) or less than ``--grace`` seconds (1 s) after it (the server had not noticed yet:
  counted and printed, a latency rather than a correctness failure); a run stored
  CLIENT_DISCONNECTED had a client that really left;
* a cancel accepted (202) ended the run USER_REQUESTED and no content or done followed it;
* read from the database itself (the SQLite file or the PostgreSQL URL): each run has
  exactly one row, no row is left RUNNING, the run ids the clients got are unique and every
  row added belongs to one of them, and ``ordinal`` is unique in diagnosis_run.

**The figures.** A separate process (not the crowd's event loop) probes ``GET /healthz``
every ``--probe-interval`` seconds over one keep-alive connection while the crowd runs: its
latencies' p50/p95/p99/max. The time a disconnect takes to cancel its run is measured from
the client's clock just before it closed the connection to the moment the server's cancel
won the run's compare-and-set: the run record's first termination, stamped on the server's
shared wall clock (``time.monotonic`` scaled, origin unknown to the client). The client
bounds that origin from both sides: a run cannot start before its request was sent, and its
metadata cannot arrive before the server made it (a few idle runs before the crowd make the
bounds tight). The latency is computed with the later bound, so it can only over-state the
truth, by at most the bounds' width, which is printed. The time until the run's row is
completed (its ``finished_at``, Unix time, against the client's ``time.time()``) is printed
beside it: the run completes its row at its next boundary, after the call in flight.
Goals: /healthz p99 < 100 ms and a disconnect cancelling its run within 100 ms (p99), at 500
concurrent streams; printed as met / not met, never a reason for a non-zero exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import httpx

from harness_lab.parent_watch import watched_by_this_process

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "scenarios" / "outcomes" / "conclusion-guards-pass.yaml"
TERMINAL_ROWS = {"SUCCESS", "FALLBACK", "FAILED", "CANCELLED", "TIMED_OUT", "BUDGET_EXHAUSTED"}
GOAL_MS = 100.0
"""Both goals: /healthz p99 and a disconnect's cancel p99 under this many milliseconds."""
GOAL_STREAMS = 500
"""The concurrency the goals are set for."""
CALIBRATION_RUNS = 5
"""Runs sent one at a time before the crowd, leaving right after their metadata: on an idle
server they bound the server clock's origin tightly."""

# the kinds of violation, counted; each is a check that failed
LOST = "client failed or got no metadata"
NO_ROW = "no diagnosis_run row"
HALF_WRITTEN = "half-written row"
SHORT_TRACE = "stored trace is not the run's whole trace"
INVARIANT = "invariant violated"
LEFT_NOT_CANCELLED = "client left, yet its run was not cancelled CLIENT_DISCONNECTED"
LEFT_NO_TRACE = "client left, yet no RUN_CANCELLED CLIENT_DISCONNECTED in the stored trace"
STAYED_DISCONNECTED = "client stayed, yet its run was stored CLIENT_DISCONNECTED"
CANCEL_NOT_USER = "cancel accepted, yet the run ended otherwise"
LATE_CONTENT = "content or done after an accepted cancel"
CANCEL_STATUS = "cancel answered neither 202 nor 409"
STAYED_NO_DONE = "client stayed, yet saw no done"
CLOCKS = "client and server clocks disagree"
ROWS = "not exactly one row for a run"
RUNNING_LEFT = "row left RUNNING"
NOT_TERMINAL = "row not terminal"
DUPLICATE_RUN_ID = "run id given to two clients"
EXTRA_ROWS = "rows no client asked for"
DUPLICATE_ORDINAL = "ordinal repeated in diagnosis_run"
SERVER_LATE = "server counted content/done after an accepted cancel"
WORKER_ERRORS = "runs lost to a worker error"


@dataclass
class Served:
    """A running ``harness-lab serve``: its URL, process, database and time scale."""

    url: str
    process: subprocess.Popen[str]
    db: str
    time_scale: float = 1.0

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    @property
    def db_url(self) -> str:
        """The database as an SQLAlchemy URL (a file path becomes an SQLite URL)."""
        return self.db if "://" in self.db else f"sqlite:///{Path(self.db).resolve()}"


@contextmanager
def serving(*args: str, db: str | None = None, timeout_s: float = 60.0,
            launcher: Sequence[str] | None = None) -> Iterator[Served]:
    """Start ``harness-lab serve ARGS --port 0`` (a fresh SQLite file unless ``db``), yield it
    once it listens, stop it with SIGINT at the end (it must exit 0).

    ``launcher`` replaces ``python -m harness_lab`` (a test starts a deliberately broken
    server this way)."""
    with tempfile.TemporaryDirectory(prefix="serve-") as tmp:
        database = db or str(Path(tmp) / "runs.db")
        prefix = list(launcher or (sys.executable, "-m", "harness_lab"))
        cmd = [*prefix, "serve", *args, "--port", "0", "--db", database]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **watched_by_this_process()}
        process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env)
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if "listening on " not in line:
                process.kill()
                raise RuntimeError(f"serve did not start: {line}{process.stderr.read()}")
            url = line.split("listening on ", 1)[1].split()[0]
            scale = float(args[args.index("--time-scale") + 1]) if (
                "--time-scale" in args) else 1.0
            yield Served(url, process, database, scale)
        finally:
            if process.poll() is None:
                process.send_signal(2)
                try:
                    process.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()


def parse_sse(lines: list[str]) -> list[dict[str, Any]]:
    """The events of an SSE text (a list of its lines): kind, id and decoded data."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in lines:
        if not line:
            if current:
                events.append(current)
                current = {}
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            current["kind"] = value
        elif key == "data":
            current["data"] = json.loads(value)
        elif key == "id":
            current["id"] = int(value)
    if current:
        events.append(current)
    return events


@dataclass
class ClientRun:
    """What one client did and saw, with its own monotonic times."""

    action: str  # "complete" | "disconnect" | "cancel" | "calibrate" (leaves at metadata)
    run_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel_status: int | None = None
    after_cancel: list[str] = field(default_factory=list)  # kinds received after a 202
    error: str | None = None
    sent_at: float | None = None  # just before the request was sent
    metadata_at: float | None = None  # when the metadata's data line arrived
    left_at: float | None = None  # just before closing, when it left before done/failure
    left_wall: float | None = None  # time.time() at that moment

    @property
    def left(self) -> bool:
        """True when the client closed its connection before it received done or failure."""
        return self.left_at is not None


@dataclass
class Stored:
    """What the server stored and holds for one run: row, trace and record (as JSON)."""

    row: dict[str, Any] | None
    trace: list[dict[str, Any]]
    record: dict[str, Any] | None


@dataclass
class Problems:
    """Violations counted by kind, with every detail."""

    counts: Counter[str] = field(default_factory=Counter)
    details: list[str] = field(default_factory=list)

    def add(self, kind: str, detail: str) -> None:
        """Count one violation of ``kind``."""
        self.counts[kind] += 1
        self.details.append(f"{kind}: {detail}")


@dataclass
class LoadResult:
    """What a load produced, every problem found and the measured figures."""

    runs: list[ClientRun]
    problems: list[str]
    violations: Counter[str]
    max_clients: int
    server: dict[str, Any]
    wall_s: float
    cpu_s: float
    outcomes: Counter[str]
    figures: dict[str, Any]


async def _one(client: httpx.AsyncClient, url: str, action: str, delay: float,
               state: dict[str, int]) -> ClientRun:
    run = ClientRun(action)
    lines: list[str] = []
    ended = False  # done or failure received
    cancel_task: asyncio.Task[httpx.Response] | None = None
    leaves = action in ("disconnect", "calibrate")
    state["open"] += 1
    state["max"] = max(state["max"], state["open"])
    try:
        run.sent_at = time.monotonic()
        async with client.stream("POST", f"{url}/chat", json={"query": "why is it slow?"}
                                 ) as response:
            if response.status_code != 200:
                run.error = f"POST /chat answered {response.status_code}"
                return run
            iterator = response.aiter_lines().__aiter__()
            while True:
                timeout = None if not leaves or run.metadata_at is None else max(
                    0.0, run.metadata_at + delay - time.monotonic())
                try:
                    line = await asyncio.wait_for(iterator.__anext__(), timeout)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    if not ended:  # it leaves while its run goes on, as far as it knows
                        run.left_at, run.left_wall = time.monotonic(), time.time()
                    await response.aclose()  # closes the connection: the client is gone
                    break
                lines.append(line)
                if line in ("event: done", "event: failure"):
                    ended = True
                if run.run_id is None and line.startswith("data:") and "runId" in line:
                    run.metadata_at = time.monotonic()
                    run.run_id = json.loads(line[5:])["runId"]
                    if action == "cancel":
                        cancel_task = asyncio.create_task(
                            _cancel_later(client, url, run.run_id, delay))
                if cancel_task is not None and cancel_task.done() and (
                        cancel_task.result().status_code == 202) and line.startswith("event:"):
                    run.after_cancel.append(line.split(":", 1)[1].strip())
        if cancel_task is not None:
            run.cancel_status = (await cancel_task).status_code
    except httpx.HTTPError as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        state["open"] -= 1
    run.events = parse_sse(lines)
    return run


async def _cancel_later(client: httpx.AsyncClient, url: str, run_id: str, delay: float
                        ) -> httpx.Response:
    await asyncio.sleep(delay)
    return await client.post(f"{url}/runs/{run_id}/cancel")


def _plan(runs: int, seed: int, disconnect: float, cancel: float, run_s: float
          ) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    plan = []
    for _ in range(runs):
        roll = rng.random()
        action = ("disconnect" if roll < disconnect
                  else "cancel" if roll < disconnect + cancel else "complete")
        plan.append((action, rng.uniform(0.0, run_s)))
    return plan


async def _drive(url: str, plan: list[tuple[str, float]], concurrency: int,
                 calibrate: int) -> tuple[list[ClientRun], list[ClientRun], int]:
    gate = asyncio.Semaphore(concurrency)
    state = {"open": 0, "max": 0}
    limits = httpx.Limits(max_connections=concurrency + 50, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as client:
        calibration = [await _one(client, url, "calibrate", 0.0, state)
                       for _ in range(calibrate)]

        async def guarded(action: str, delay: float) -> ClientRun:
            async with gate:
                return await _one(client, url, action, delay, state)

        results = await asyncio.gather(*(guarded(a, d) for a, d in plan))
    return calibration, list(results), state["max"]


def _probe_healthz(url: str, interval_s: float, ready: EventType, stop: EventType,
                   out: Connection) -> None:
    """In a process of its own: GET /healthz every ``interval_s`` until ``stop``; sends back
    every probe's latency (ms), a failed one's too, and how many failed (not 200)."""
    latencies: list[float] = []
    failures = 0
    with httpx.Client(timeout=30.0) as http:
        http.get(f"{url}/healthz")  # opens the keep-alive connection before the load
        ready.set()
        due = time.monotonic()
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                ok = http.get(f"{url}/healthz").status_code == 200
            except httpx.HTTPError:
                ok = False
            latencies.append(1000.0 * (time.perf_counter() - t0))  # a failed probe too
            failures += not ok
            due += interval_s
            stop.wait(max(0.0, due - time.monotonic()))
    out.send((latencies, failures))
    out.close()


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank ``p``-th percentile of ``values`` (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100.0 * len(ordered)) - 1)]


def summary(values: Sequence[float]) -> dict[str, Any]:
    """Count, p50, p95, p99 and max of ``values``."""
    return {"n": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95),
            "p99": percentile(values, 99), "max": max(values) if values else None}


def _fetch(url: str, runs: list[ClientRun]) -> dict[str, Stored]:
    """Each run's settled row, stored trace and record, eight requests at a time."""
    with httpx.Client(timeout=60.0) as http:
        def one(run_id: str) -> tuple[str, Stored]:
            row = _settled_row(http, url, run_id)
            if row is None:
                return run_id, Stored(None, [], None)
            trace = http.get(f"{url}/runs/{run_id}/trace").json()
            answer = http.get(f"{url}/runs/{run_id}/record")
            return run_id, Stored(row, trace, answer.json() if answer.status_code == 200
                                  else None)

        ids = [r.run_id for r in runs if r.run_id is not None]
        with ThreadPoolExecutor(8) as pool:
            return dict(pool.map(one, ids))


def _settled_row(http: httpx.Client, url: str, run_id: str) -> dict[str, Any] | None:
    """The run's row once it is no longer RUNNING (a disconnected run ends at its next
    boundary, which may be a little after the client left), or as it is after 30 s."""
    deadline = time.monotonic() + 30.0
    while True:
        answer = http.get(f"{url}/runs/{run_id}")
        row = answer.json() if answer.status_code == 200 else None
        if (row is not None and row["status"] != "RUNNING") or time.monotonic() > deadline:
            return row
        time.sleep(0.05)


def clock_origin(runs: Sequence[ClientRun], stored: dict[str, Stored], scale: float
                 ) -> tuple[float, float] | None:
    """Bounds (lo, hi) on the server clock's origin on this process's ``time.monotonic``.

    A run's RUN_STARTED cannot come before its request was sent (origin >= sent - started),
    and its metadata cannot arrive before the server made it (origin <= arrived - made).
    None when no run gives both.
    """
    lows: list[float] = []
    highs: list[float] = []
    for run in runs:
        record = stored[run.run_id].record if run.run_id in stored else None
        if record is None or run.sent_at is None or run.metadata_at is None:
            continue
        made = [e["t"] for e in record["sse_events"] if e["kind"] == "metadata"]
        if made:
            lows.append(run.sent_at - record["started_at"] * scale)
            highs.append(run.metadata_at - made[0] * scale)
    if not lows:
        return None
    return max(lows), min(highs)


def _decided_at(record: dict[str, Any] | None) -> float | None:
    """The server-clock time of the run's first termination (its terminal state's moment)."""
    if record is None or not record.get("terminations"):
        return None
    return float(record["terminations"][0][2])


def check_runs(runs: Sequence[ClientRun], stored: dict[str, Stored], scale: float,
               grace_s: float = 1.0) -> tuple[Problems, Counter[str], dict[str, Any]]:
    """Check every client's run against what the server stored (see the module's docstring);
    the problems, the outcomes by client kind, and the disconnect figures.

    A client that left and whose run was not cancelled is a violation when the run's terminal
    state was decided more than ``grace_s`` after it left (the server never noticed in time);
    decided before it left, or within the grace, it is a legal race, counted."""
    from harness_lab.invariants import check
    from harness_lab.logs.codec import record_from_data

    problems = Problems()
    outcomes: Counter[str] = Counter()
    origin = clock_origin(runs, stored, scale)
    if origin is not None and origin[0] > origin[1]:
        problems.add(CLOCKS, f"origin bounds {origin[0]:.6f} > {origin[1]:.6f}")
    to_cancel: list[float] = []  # ms, from leaving to the cancel winning (upper bounds)
    to_row: list[float] = []  # ms, from leaving to the row's completion
    races = {"decided before it left": 0, "decided within the grace": 0}
    for run in runs:
        if run.error is not None or run.run_id is None:
            problems.add(LOST, run.error or "no metadata")
            continue
        rid = run.run_id
        got = stored.get(rid)
        row = got.row if got is not None else None
        if got is None or row is None:
            problems.add(NO_ROW, rid)
            continue
        if row["status"] not in TERMINAL_ROWS or row["finished_at"] is None or (
                row["termination_state"] is None):
            problems.add(HALF_WRITTEN, f"{rid}: status {row['status']}")
            continue
        ended = f"{row['status']}/{row['termination_reason']}"
        label = {"disconnect": "disconnect, left" if run.left else "disconnect, stayed to the end",
                 "calibrate": "left at metadata (calibration)"}.get(run.action, run.action)
        outcomes[f"{label}: {ended}"] += 1
        if got.record is None:
            problems.add(NO_ROW, f"{rid}: no record held by the server")
            continue
        record = record_from_data(got.record)
        if len(got.trace) != len(record.trace) or got.trace[-1]["type"] != "RUN_FINISHED":
            problems.add(SHORT_TRACE, f"{rid}: {len(got.trace)} events stored, the run has "
                                      f"{len(record.trace)}")
        for violation in check(record):
            problems.add(INVARIANT, f"{rid}: {violation}")
        disconnected = row["termination_reason"] == "CLIENT_DISCONNECTED"
        if run.left and run.left_at is not None:
            decided = _decided_at(got.record)
            if disconnected and row["termination_state"] == "CANCELLED":
                if not any(e["type"] == "RUN_CANCELLED" and e["detail"].get("reason") ==
                           "CLIENT_DISCONNECTED" for e in got.trace):
                    problems.add(LEFT_NO_TRACE, rid)
                if run.action == "disconnect" and origin is not None and decided is not None:
                    to_cancel.append(1000.0 * (origin[1] + decided * scale - run.left_at))
                if run.action == "disconnect" and run.left_wall is not None:
                    to_row.append(1000.0 * (row["finished_at"] - run.left_wall))
            elif origin is not None and decided is not None and (
                    origin[1] + decided * scale < run.left_at):
                races["decided before it left"] += 1  # its done was on its way: legal
            elif origin is not None and decided is not None and (
                    origin[0] + decided * scale - run.left_at <= grace_s):
                races["decided within the grace"] += 1  # it won the race to the notice
            else:
                after = "" if origin is None or decided is None else (
                    f" {1000 * (origin[0] + decided * scale - run.left_at):.0f} ms after the "
                    "client left")
                problems.add(LEFT_NOT_CANCELLED, f"{rid}: ended {ended}{after}")
        elif disconnected:
            problems.add(STAYED_DISCONNECTED, rid)
        if run.action == "cancel" and run.cancel_status == 202:
            if row["termination_reason"] != "USER_REQUESTED":
                problems.add(CANCEL_NOT_USER, f"{rid}: ended {ended}")
            late = [k for k in run.after_cancel if k in ("content", "done")]
            if late or any(e.get("kind") == "content" for e in run.events):
                problems.add(LATE_CONTENT, f"{rid}: {late}")
        if run.action == "cancel" and run.cancel_status not in (202, 409):
            problems.add(CANCEL_STATUS, f"{rid}: {run.cancel_status}")
        kinds = [e.get("kind") for e in run.events]
        if run.action == "complete" and kinds[-1:] != ["done"]:
            problems.add(STAYED_NO_DONE, f"{rid}: saw {kinds}")
    figures = {"disconnect_to_cancel_ms": summary(to_cancel),
               "disconnect_to_row_ms": summary(to_row),
               "clock_bounds_width_ms": None if origin is None
               else 1000.0 * (origin[1] - origin[0]),
               "left_after_the_run_was_decided": races["decided before it left"],
               "left_and_lost_the_race_within_the_grace": races["decided within the grace"],
               "grace_s": grace_s}
    return problems, outcomes, figures


def count_rows(db_url: str) -> int:
    """Rows in diagnosis_run now (0 when the table does not exist yet)."""
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("diagnosis_run"):
                return 0
            return int(conn.execute(text("SELECT COUNT(*) FROM diagnosis_run")).scalar_one())
    finally:
        engine.dispose()


def check_store(db_url: str, run_ids: Sequence[str], rows_before: int = 0) -> Problems:
    """Check the database itself: one terminal row per run, none RUNNING, run ids unique,
    every added row a client's, ``ordinal`` unique in diagnosis_run."""
    from sqlalchemy import create_engine, text

    problems = Problems()
    for run_id, n in Counter(run_ids).items():
        if n > 1:
            problems.add(DUPLICATE_RUN_ID, f"{run_id} ({n} clients)")
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT run_id, status, termination_state, finished_at FROM diagnosis_run"
            )).all()
            repeated = conn.execute(text(
                "SELECT ordinal, COUNT(*) FROM diagnosis_run GROUP BY ordinal "
                "HAVING COUNT(*) > 1")).all()
    finally:
        engine.dispose()
    by_id: dict[str, list[Any]] = {}
    for row in rows:
        by_id.setdefault(row[0], []).append(row)
        if row[1] == "RUNNING":
            problems.add(RUNNING_LEFT, str(row[0]))
    for run_id in set(run_ids):
        found = by_id.get(run_id, [])
        if len(found) != 1:
            problems.add(ROWS, f"{run_id}: {len(found)} rows")
        elif found[0][1] not in TERMINAL_ROWS or found[0][2] is None or found[0][3] is None:
            problems.add(NOT_TERMINAL, f"{run_id}: status {found[0][1]}")
    extra = len(rows) - rows_before - len(set(run_ids))
    if extra > 0:
        problems.add(EXTRA_ROWS, f"{extra} more rows than runs")
    for ordinal, n in repeated:
        problems.add(DUPLICATE_ORDINAL, f"ordinal {ordinal} on {n} rows")
    return problems


def load(served: Served, *, runs: int, concurrency: int, seed: int = 1,
         disconnect: float = 0.2, cancel: float = 0.2, run_s: float = 1.0,
         probe_interval_s: float = 0.05, calibrate: int = CALIBRATION_RUNS,
         grace_s: float = 1.0) -> LoadResult:
    """Drive ``runs`` runs against ``served``, probe its /healthz meanwhile, check every run
    and the database; see the module's docstring."""
    rows_before = count_rows(served.db_url)
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    receiver, sender = context.Pipe(duplex=False)
    prober = context.Process(target=_probe_healthz, daemon=True,
                             args=(served.url, probe_interval_s, ready, stop, sender))
    prober.start()
    sender.close()
    if not ready.wait(60.0):
        prober.kill()
        raise RuntimeError("the /healthz probe did not start")
    cpu0, t0 = served.cpu_seconds(), time.perf_counter()
    try:
        calibration, client_runs, max_clients = asyncio.run(
            _drive(served.url, _plan(runs, seed, disconnect, cancel, run_s), concurrency,
                   calibrate))
    finally:
        stop.set()
    wall = time.perf_counter() - t0
    latencies, probe_failures = receiver.recv() if receiver.poll(60.0) else ([], -1)
    prober.join(10.0)
    everyone = [*calibration, *client_runs]
    stored = _fetch(served.url, everyone)
    problems, outcomes, figures = check_runs(everyone, stored, served.time_scale, grace_s)
    ids = [r.run_id for r in everyone if r.run_id is not None]
    in_store = check_store(served.db_url, ids, rows_before)
    problems.counts.update(in_store.counts)
    problems.details += in_store.details
    cpu = served.cpu_seconds() - cpu0
    server = httpx.get(f"{served.url}/healthz", timeout=30.0).json()["runs"]
    if server["late_sent"]:
        problems.add(SERVER_LATE, f"{server['late_sent']} event(s)")
    if server["worker_errors"]:
        problems.add(WORKER_ERRORS, f"{server['worker_errors']} run(s)")
    figures["healthz_ms"] = summary(latencies)
    figures["healthz_failed_probes"] = probe_failures
    figures["healthz_interval_s"] = probe_interval_s
    return LoadResult(client_runs, problems.details, problems.counts, max_clients, server,
                      wall, cpu, outcomes, figures)


def report(result: LoadResult, *, concurrency: int, database: str) -> dict[str, Any]:
    """The figures, the goals and the checks as one JSON-able document."""
    streams = min(result.max_clients, result.server["max_active"])
    goals = {}
    for name, key in (("/healthz p99 < 100 ms", "healthz_ms"),
                      ("disconnect cancels its run, p99 < 100 ms", "disconnect_to_cancel_ms")):
        p99 = result.figures[key]["p99"]
        goals[name] = {"p99_ms": p99, "met": p99 is not None and p99 < GOAL_MS,
                       "at_streams": streams, "streams_goal": GOAL_STREAMS}
    left = sum(1 for r in result.runs if r.left)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "load_average": os.getloadavg(),
        "database": database, "runs": len(result.runs), "concurrency": concurrency,
        "clients_that_left": left, "wall_s": result.wall_s,
        "streams_open_at_most": result.max_clients,
        "runs_in_flight_at_most": result.server["max_active"],
        "server_cpu_ms_per_run": 1000 * result.cpu_s / max(1, len(result.runs)),
        "figures": result.figures, "goals": goals, "outcomes": dict(result.outcomes),
        "violations": dict(result.violations), "problems": result.problems[:50],
        "ok": not result.problems,
    }


def _print_table(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=120)
    load1, load5, _ = doc["load_average"]
    console.print(f"{doc['date']}, load average {load1:.2f} / {load5:.2f} (1 / 5 min), "
                  f"{doc['database']}")
    console.print(f"runs: {doc['runs']} in {doc['wall_s']:.1f} s, {doc['concurrency']} "
                  f"streams at most; held at once: {doc['streams_open_at_most']} streams "
                  f"open, {doc['runs_in_flight_at_most']} runs in flight; server CPU "
                  f"{doc['server_cpu_ms_per_run']:.2f} ms per run")
    figures = doc["figures"]
    table = Table(title="latency (ms)")
    for column in ("figure", "n", "p50", "p95", "p99", "max", "goal"):
        table.add_column(column, justify="left" if column in ("figure", "goal") else "right")
    goals = list(doc["goals"].values())
    rows = (("GET /healthz (separate process)", "healthz_ms", goals[0]),
            ("disconnect -> cancel won (upper bound)", "disconnect_to_cancel_ms", goals[1]),
            ("disconnect -> row completed", "disconnect_to_row_ms", None))
    for name, key, goal in rows:
        s = figures[key]
        cells = ["-" if s[k] is None else f"{s[k]:.1f}" for k in ("p50", "p95", "p99", "max")]
        verdict = "" if goal is None else (
            f"p99 < {GOAL_MS:g}: {'met' if goal['met'] else 'NOT met'} at {goal['at_streams']}"
            " streams")
        table.add_row(name, str(s["n"]), *cells, verdict)
    console.print(table)
    width = figures["clock_bounds_width_ms"]
    console.print(f"clock bounds width {'-' if width is None else f'{width:.2f}'} ms (the most "
                  f"a cancel figure over-states); /healthz probes failed: "
                  f"{figures['healthz_failed_probes']}; clients that left "
                  f"{doc['clients_that_left']}, of them after their run was decided "
                  f"{figures['left_after_the_run_was_decided']}, whose run was decided after they "
                  f"left, within the {figures['grace_s']:g} s grace (not cancelled): "
                  f"{figures['left_and_lost_the_race_within_the_grace']}")
    outcomes = Table(title="outcomes")
    outcomes.add_column("client: stored status/reason")
    outcomes.add_column("runs", justify="right")
    for outcome, n in sorted(doc["outcomes"].items()):
        outcomes.add_row(outcome, str(n))
    console.print(outcomes)
    violations = doc["violations"]
    console.print(f"violations: {sum(violations.values())}")
    for kind, n in sorted(violations.items()):
        console.print(f"  {n:5d}  {kind}")


@contextmanager
def _postgres() -> Iterator[str]:
    """A throwaway PostgreSQL server (the test suite's), its URL."""
    sys.path.insert(0, str(HERE.parent))
    from tests.postgres import PostgresServer, pg_bin

    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise SystemExit("--postgres needs initdb and pg_ctl (apt-get install postgresql)")
    server = PostgresServer(initdb, pg_ctl)
    try:
        server.start()
        yield server.url
    finally:
        server.remove()


def main(argv: list[str] | None = None) -> int:
    """Run the load, check it, print its figures; 1 when a check failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=GOAL_STREAMS)
    parser.add_argument("--disconnect", type=float, default=0.3,
                        help="the share of clients that disconnect at a random moment")
    parser.add_argument("--cancel", type=float, default=0.1,
                        help="the share of clients that cancel their run at a random moment")
    parser.add_argument("--time-scale", type=float, default=0.5,
                        help="the scenario's ~6.7 virtual seconds take this share in wall time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--probe-interval", type=float, default=0.05,
                        help="seconds between two GET /healthz probes")
    parser.add_argument("--db", default=None,
                        help="an SQLite file or SQLAlchemy URL (default: a fresh SQLite file)")
    parser.add_argument("--postgres", action="store_true",
                        help="store in a throwaway PostgreSQL server (initdb, pg_ctl)")
    parser.add_argument("--grace", type=float, default=1.0,
                        help="seconds after a client left within which its run may still end "
                             "uncancelled (the disconnect not noticed yet)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        db = stack.enter_context(_postgres()) if args.postgres else args.db
        served = stack.enter_context(serving(
            "--scenario", str(SCENARIO), "--time-scale", str(args.time_scale),
            "--workers", str(args.concurrency + 50), db=db))
        result = load(served, runs=args.runs, concurrency=args.concurrency, seed=args.seed,
                      disconnect=args.disconnect, cancel=args.cancel,
                      run_s=6.7 * args.time_scale, probe_interval_s=args.probe_interval,
                      grace_s=args.grace)
        database = "PostgreSQL" if served.db_url.startswith("postgresql") else "SQLite"
    doc = report(result, concurrency=args.concurrency, database=database)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        _print_table(doc)
        for problem in result.problems[:20]:
            print(f"  {problem}")
    return 1 if result.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
