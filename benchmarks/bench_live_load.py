"""Load and races against ``harness-lab serve`` on 127.0.0.1; prints figures.

    python benchmarks/bench_live_load.py                 # 1,000 runs, 600 at once
    python benchmarks/bench_live_load.py --runs 2000 --concurrency 800

Starts ``serve`` on a free port with a scenario's scripted providers (latencies slept,
scaled) and a fresh SQLite file, then sends runs as real SSE clients, at most
``--concurrency`` at once. A share of the clients disconnect at a random moment after the
run's metadata, another share cancel their run (``POST /runs/ID/cancel``) at a random moment
and read on. At the end every run is checked:

* its diagnosis_run row exists and is complete (not RUNNING, a terminal state, a finish
  time) and its stored trace is the run's whole trace, ending in RUN_FINISHED;
* the run's record (``GET /runs/ID/record``) holds every invariant of
  :mod:`harness_lab.invariants`;
* a disconnected run that was cancelled by it, and a run whose cancel was accepted (202), is
  CANCELLED with that reason, and no content or done reached a client after its cancel was
  accepted; the server counts none written either.

Printed: runs, outcomes, the largest number of runs in flight at once (the server's count
and the clients'), the server's CPU time per run (the harness's own overhead: the scripted
providers only sleep), and every problem found. Exit 1 when there is one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness_lab.parent_watch import watched_by_this_process

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "scenarios" / "outcomes" / "conclusion-guards-pass.yaml"
TERMINAL_ROWS = {"SUCCESS", "FALLBACK", "FAILED", "CANCELLED", "TIMED_OUT", "BUDGET_EXHAUSTED"}


@dataclass
class Served:
    """A running ``harness-lab serve``: its URL, process and database."""

    url: str
    process: subprocess.Popen[str]
    db: str

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks


@contextmanager
def serving(*args: str, db: str | None = None, timeout_s: float = 60.0) -> Iterator[Served]:
    """Start ``harness-lab serve ARGS --port 0`` (a fresh SQLite file unless ``db``), yield it
    once it listens, stop it with SIGINT at the end (it must exit 0)."""
    with tempfile.TemporaryDirectory(prefix="serve-") as tmp:
        database = db or str(Path(tmp) / "runs.db")
        cmd = [sys.executable, "-m", "harness_lab", "serve", *args, "--port", "0",
               "--db", database]
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
            yield Served(url, process, database)
        finally:
            if process.poll() is None:
                process.send_signal(2)
                try:
                    process.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


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
    """What one client did and saw."""

    action: str  # "complete" | "disconnect" | "cancel"
    run_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel_status: int | None = None
    after_cancel: list[str] = field(default_factory=list)  # kinds received after a 202
    error: str | None = None


@dataclass
class LoadResult:
    """What a load produced and every problem found."""

    runs: list[ClientRun]
    problems: list[str]
    max_clients: int
    server: dict[str, Any]
    wall_s: float
    cpu_s: float
    outcomes: Counter[str]


async def _one(client: httpx.AsyncClient, url: str, action: str, delay: float,
               state: dict[str, int]) -> ClientRun:
    run = ClientRun(action)
    lines: list[str] = []
    cancel_task: asyncio.Task[httpx.Response] | None = None
    state["open"] += 1
    state["max"] = max(state["max"], state["open"])
    try:
        async with client.stream("POST", f"{url}/chat", json={"query": "why is it slow?"}
                                 ) as response:
            if response.status_code != 200:
                run.error = f"POST /chat answered {response.status_code}"
                return run
            started: list[float] = []  # when the metadata arrived
            async for line in _lines(response, action, delay, started):
                lines.append(line)
                if run.run_id is None and line.startswith("data:") and "runId" in line:
                    run.run_id = json.loads(line[5:])["runId"]
                    started.append(time.monotonic())
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


async def _lines(response: httpx.Response, action: str, delay: float, started: list[float]
                 ) -> AsyncIterator[str]:
    """The response's lines; a disconnecting client stops reading ``delay`` s after metadata."""
    iterator = response.aiter_lines().__aiter__()
    while True:
        timeout = None if action != "disconnect" or not started else max(
            0.0, started[0] + delay - time.monotonic())
        try:
            line = await asyncio.wait_for(iterator.__anext__(), timeout)
        except StopAsyncIteration:
            return
        except TimeoutError:
            return  # leaving the stream closes the connection: the client is gone
        yield line


async def _cancel_later(client: httpx.AsyncClient, url: str, run_id: str, delay: float
                        ) -> httpx.Response:
    await asyncio.sleep(delay)
    return await client.post(f"{url}/runs/{run_id}/cancel")


async def _drive(url: str, runs: int, concurrency: int, seed: int, disconnect: float,
                 cancel: float, run_s: float) -> tuple[list[ClientRun], int]:
    rng = random.Random(seed)
    gate = asyncio.Semaphore(concurrency)
    state = {"open": 0, "max": 0}
    limits = httpx.Limits(max_connections=concurrency + 50, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as client:
        async def guarded(action: str, delay: float) -> ClientRun:
            async with gate:
                return await _one(client, url, action, delay, state)

        plan = []
        for _ in range(runs):
            roll = rng.random()
            action = ("disconnect" if roll < disconnect
                      else "cancel" if roll < disconnect + cancel else "complete")
            plan.append((action, rng.uniform(0.0, run_s)))
        results = await asyncio.gather(*(guarded(a, d) for a, d in plan))
    return list(results), state["max"]


def _check(url: str, runs: list[ClientRun]) -> tuple[list[str], Counter[str]]:
    from harness_lab.invariants import check
    from harness_lab.logs.codec import record_from_data

    problems: list[str] = []
    outcomes: Counter[str] = Counter()
    with httpx.Client(timeout=60.0) as http:
        for run in runs:
            if run.error is not None or run.run_id is None:
                problems.append(f"a client failed: {run.error or 'no metadata'}")
                continue
            rid = run.run_id
            row = _settled_row(http, url, rid)
            if row is None:
                problems.append(f"{rid}: no diagnosis_run row (lost)")
                continue
            if row["status"] not in TERMINAL_ROWS or row["finished_at"] is None or (
                    row["termination_state"] is None):
                problems.append(f"{rid}: half-written row: status {row['status']}")
                continue
            trace = http.get(f"{url}/runs/{rid}/trace").json()
            record_data = http.get(f"{url}/runs/{rid}/record").json()
            record = record_from_data(record_data)
            outcomes[f"{run.action}: {row['status']}/{row['termination_reason']}"] += 1
            if len(trace) != len(record.trace) or trace[-1]["type"] != "RUN_FINISHED":
                problems.append(f"{rid}: the stored trace has {len(trace)} events, the run "
                                f"{len(record.trace)}")
            problems += [f"{rid}: {v}" for v in check(record)]
            if run.action == "cancel" and run.cancel_status == 202:
                if row["termination_reason"] != "USER_REQUESTED":
                    problems.append(f"{rid}: cancel accepted, the run ended "
                                    f"{row['termination_reason']}")
                late = [k for k in run.after_cancel if k in ("content", "done")]
                if late or any(e.get("kind") == "content" for e in run.events):
                    problems.append(f"{rid}: content sent after an accepted cancel: {late}")
            if run.action == "cancel" and run.cancel_status not in (202, 409):
                problems.append(f"{rid}: the cancel answered {run.cancel_status}")
            if row["termination_reason"] == "CLIENT_DISCONNECTED" and run.action != "disconnect":
                problems.append(f"{rid}: a client that stayed was counted as disconnected")
            kinds = [e.get("kind") for e in run.events]
            if run.action == "complete" and kinds[-1:] != ["done"]:
                problems.append(f"{rid}: a client that stayed saw {kinds}")
    return problems, outcomes


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


def load(served: Served, *, runs: int, concurrency: int, seed: int = 1,
         disconnect: float = 0.2, cancel: float = 0.2, run_s: float = 1.0) -> LoadResult:
    """Drive ``runs`` runs against ``served`` and check each; see the module's docstring."""
    cpu0, t0 = served.cpu_seconds(), time.perf_counter()
    client_runs, max_clients = asyncio.run(
        _drive(served.url, runs, concurrency, seed, disconnect, cancel, run_s))
    wall = time.perf_counter() - t0
    problems, outcomes = _check(served.url, client_runs)
    cpu = served.cpu_seconds() - cpu0
    server = httpx.get(f"{served.url}/healthz", timeout=30.0).json()["runs"]
    if server["late_sent"]:
        problems.append(f"the server wrote {server['late_sent']} content/done event(s) after "
                        "an accepted cancel")
    if server["worker_errors"]:
        problems.append(f"{server['worker_errors']} run(s) lost to a worker error")
    return LoadResult(client_runs, problems, max_clients, server, wall, cpu, outcomes)


def main(argv: list[str] | None = None) -> int:
    """Run the load and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=600)
    parser.add_argument("--time-scale", type=float, default=0.5,
                        help="the scenario's ~6.7 virtual seconds take this share in wall time")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with serving("--scenario", str(SCENARIO), "--time-scale", str(args.time_scale),
                 "--workers", str(args.concurrency + 50)) as served:
        result = load(served, runs=args.runs, concurrency=args.concurrency, seed=args.seed,
                      run_s=6.7 * args.time_scale)
    print(f"runs: {len(result.runs)} in {result.wall_s:.1f} s wall, "
          f"{args.concurrency} clients at most")
    print(f"largest concurrency held: {result.server['max_active']} runs in flight on the "
          f"server, {result.max_clients} streams open on the clients")
    print(f"server CPU: {result.cpu_s:.2f} s in all, {1000 * result.cpu_s / len(result.runs):.2f}"
          " ms per run (the harness's own overhead: the scripted providers only sleep)")
    for outcome, n in sorted(result.outcomes.items()):
        print(f"  {n:5d}  {outcome}")
    print(f"problems: {len(result.problems)} (invariant violations, lost or half-written rows, "
          "late content)")
    for problem in result.problems[:20]:
        print(f"  {problem}")
    return 1 if result.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
