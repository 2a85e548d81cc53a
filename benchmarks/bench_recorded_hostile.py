"""How fast, and in how much memory, the recording layer refuses hostile input; prints figures.

Cassettes: each tampered family of ``tests/recorded/hostile.py`` (and a directory, a FIFO, a
sparse file over the size limit, an alias bomb and a valid 10 MB cassette as the baseline)
is checked in its own process (``check_cassette``); the table gives the time the check took
inside the process, the process's peak memory (``ru_maxrss`` from ``wait4``) and the first
line of the error.

Reference server: each malformed request of ``tests/recorded/hostile.py`` over a raw
socket (time to the answer), 200 concurrent requests (all answered?), and the resident
memory after 2,000 requests of 32 KiB bodies (the request log is bounded).

    .venv/bin/python -m benchmarks.bench_recorded_hostile     # about 15 s on two cores
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from harness_lab.recorded.cassette_file import MAX_CASSETTE_BYTES
from harness_lab.scripted import ReferenceServer, json_completion
from tests.recorded.hostile import CASSETTES, HTTP_REQUESTS, write

_CHILD = """\
import sys, time
from harness_lab.recorded.cassette_file import CassetteError, check_cassette
t0 = time.perf_counter()
try:
    outcome = f"ok: {check_cassette(sys.argv[1])} interactions"
except CassetteError as exc:
    outcome = str(exc)
print(f"{time.perf_counter() - t0:.4f}")
print(outcome)
"""

_INTERACTION = ("- request:\n    body: '{body}'\n    headers: {{}}\n    method: POST\n"
                "    uri: http://h/p\n  response:\n    body: {{string: '{body}'}}\n"
                "    headers: {{}}\n    status: {{code: 200, message: OK}}\n")


def _bomb(path: Path) -> Path:
    levels = "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
                     for i in range(9))
    return write(path, "interactions: []\nmetadata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                 + levels)


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _directory(path: Path) -> Path:
    path.mkdir()
    return path


def _oversized(path: Path) -> Path:
    with path.open("wb") as handle:
        handle.truncate(MAX_CASSETTE_BYTES + 1)
    return path


EXTRA: list[tuple[str, Callable[[Path], Path]]] = [
    ("a valid 10 MB cassette (baseline)", lambda p: write(
        p, "interactions:\n" + _INTERACTION.format(body="x" * 5000) * 1000)),
    ("a directory", _directory),
    ("a FIFO", _fifo),
    ("a sparse file over 64 MiB", _oversized),
    ("an alias bomb (10^9 when expanded)", _bomb),
]


def measure_cassette(path: Path) -> tuple[float, float, str]:
    """(seconds checking, peak MiB, first line of the outcome) in a fresh process."""
    env = {**os.environ, "HARNESS_LAB_PURE": "1"}
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path)], stdout=out,
                                 stderr=subprocess.STDOUT, env=env)
        _, _, usage = os.wait4(child.pid, 0)
        out.seek(0)
        lines = out.read().splitlines()
    try:
        return float(lines[0]), usage.ru_maxrss / 1024, lines[1] if len(lines) > 1 else ""
    except (IndexError, ValueError):
        return float("nan"), usage.ru_maxrss / 1024, " | ".join(lines)[:200]


def cassettes() -> None:
    """One row per cassette family."""
    print(f"{'cassette family':<38} {'check s':>8} {'peak MiB':>8}  outcome")
    families = [(name, make) for name, make in EXTRA]
    families += [(name, make) for name, make, *_ in CASSETTES]
    for name, make in families:
        with tempfile.TemporaryDirectory() as tmp:
            path = make(Path(tmp) / "c.yaml")
            seconds, peak, outcome = measure_cassette(path)
        shown = outcome.replace(str(path), "c.yaml")
        print(f"{name:<38} {seconds:8.4f} {peak:8.0f}  {shown[:100]}")


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer.split(b"\r\n", 1)[0]


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def server() -> None:
    """Malformed requests, concurrency and bounded memory of the reference server."""
    auth = {"Authorization": "Bearer reference-key"}
    print(f"\n{'malformed request':<38} {'answer s':>8}  status line")
    with ReferenceServer([json_completion({})]) as srv:
        for name, data, _, _ in HTTP_REQUESTS:
            start = time.perf_counter()
            line = _exchange(srv.port, data).decode("latin-1")
            print(f"{name:<38} {time.perf_counter() - start:8.4f}  {line}")
        print(f"scripted replies consumed by them: {srv.used}")
    count = 200
    barrier = threading.Barrier(count)
    statuses: list[object] = []
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
    with ReferenceServer([], tools={"/t": {"items": []}}) as srv, \
            httpx.Client(limits=limits, trust_env=False, timeout=60) as http:

        def call() -> None:
            barrier.wait()
            try:
                statuses.append(http.post(srv.root_url + "/t", json={}, headers=auth)
                                .status_code)
            except httpx.HTTPError as exc:
                statuses.append(type(exc).__name__)

        threads = [threading.Thread(target=call) for _ in range(count)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
    answered = sum(1 for s in statuses if s == 200)
    print(f"\n{count} concurrent requests: {answered} answered 200 in {wall:.2f} s, "
          f"{count - answered} failed")
    body = b'{"pad":"' + b"x" * (32 * 1024) + b'"}'
    with ReferenceServer([], tools={"/t": {"items": []}}) as srv, \
            httpx.Client(trust_env=False) as http:
        before = _rss_mib()
        start = time.perf_counter()
        for _ in range(2000):
            http.post(srv.root_url + "/t", content=body,
                      headers={**auth, "Content-Type": "application/json"})
        wall = time.perf_counter() - start
        after = _rss_mib()
        print(f"2,000 requests of {len(body):,} bytes ({2000 * len(body) / 2**20:.0f} MiB) in "
              f"{wall:.1f} s: resident memory {before:.0f} -> {after:.0f} MiB, "
              f"{len(srv.requests)} requests kept in the log")


if __name__ == "__main__":
    cassettes()
    server()
