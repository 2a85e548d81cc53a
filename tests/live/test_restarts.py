"""``serve`` stopped and started again on the same database: sessions keep their order (a real
server, restarted, on an SQLite file and on PostgreSQL)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.bench_live_load import parse_sse, serving
from harness_lab.store.sql import SqlRunStore
from tests.live.test_server import GUARDS_PASS, chat

pytestmark = pytest.mark.live


def turn(db: str, session_id: str, *, idle_s: float = 0.0) -> str:
    """Start serve on ``db``, wait ``idle_s``, play one chat turn, stop; the run's id."""
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01", db=db) as server:
        time.sleep(idle_s)  # the server's own clock runs on while it waits
        events = chat(server.url, {"query": "why is checkout slow?", "sessionId": session_id})
    assert events[-1]["data"] == {"outcome": "SUCCESS"}
    run_id: str = events[0]["data"]["runId"]
    return run_id


def test_a_turn_stored_after_a_restart_is_the_latest_of_its_session(database: str) -> None:
    session_id = f"s-{uuid.uuid4().hex}"
    before = time.time()
    first = turn(database, session_id, idle_s=1.5)
    second = turn(database, session_id)
    store = SqlRunStore(database)
    try:
        session = store.read_session(session_id, 5)
        rows = [store.get_run(first), store.get_run(second)]
    finally:
        store.close()
    assert [t.run_id for t in session.history] == [first, second]
    assert session.previous_turn is not None and session.previous_turn.run_id == second
    for row in rows:  # dated by the wall clock (Unix time), not the server's own clock
        assert row is not None
        assert before <= row["created_at"] <= row["finished_at"] <= time.time()


class InFlight:
    """Chats held open on a server until it goes away: each one's run id once its diagnosis
    runs (a tool call in flight)."""

    def __init__(self, url: str, count: int) -> None:
        self.run_ids: list[str] = []
        self.events: list[list[dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._chat, args=(url,), daemon=True)
                         for _ in range(count)]
        for thread in self._threads:
            thread.start()
        deadline = time.monotonic() + 60
        while len(self.run_ids) < count:
            assert time.monotonic() < deadline, "the chats never reached the diagnosis"
            time.sleep(0.02)

    def _chat(self, url: str) -> None:
        lines: list[str] = []
        try:
            with httpx.stream("POST", f"{url}/chat", json={"query": "why?"},
                              timeout=120.0) as response:
                for line in response.iter_lines():
                    lines.append(line)
                    if "DIAGNOSIS_RUNNING" in line:
                        with self._lock:
                            self.run_ids.append(parse_sse(lines)[0]["data"]["runId"])
        except httpx.HTTPError:
            pass  # the server was killed under it
        with self._lock:
            self.events.append(parse_sse([*lines, ""]))

    def join(self) -> None:
        """Wait until every chat has ended."""
        for thread in self._threads:
            thread.join(timeout=120)


def audit(db: str) -> dict[str, int]:
    """``harness-lab audit DB --format json``'s counts."""
    done = subprocess.run([sys.executable, "-m", "harness_lab", "audit", db, "--format", "json",
                           "-q"], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    counts: dict[str, int] = json.loads(done.stdout)["counts"]
    return counts


def rows(db: str, run_ids: list[str]) -> list[dict[str, Any]]:
    """The stored rows of these runs, read straight from the database."""
    store = SqlRunStore(db)
    try:
        found = [store.get_run(run_id) for run_id in run_ids]
    finally:
        store.close()
    assert all(row is not None for row in found)
    return [row for row in found if row is not None]


def test_a_server_killed_before_its_first_run_is_marked_lost_without_a_word_of_runs(
        tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    with serving("--scenario", str(GUARDS_PASS), db=db) as first:
        first.process.kill()
        first.process.wait(timeout=30)
    with serving("--scenario", str(GUARDS_PASS), db=db) as again:
        health = httpx.get(f"{again.url}/healthz").json()
        again.process.send_signal(signal.SIGINT)
        _, err = again.process.communicate(timeout=60)
    assert health["instance"]["orphansEnded"] == 0
    assert "left RUNNING" not in err, err
    with sqlite3.connect(db) as conn:
        stops = conn.execute("SELECT pid, stop FROM serve_instance "
                             "ORDER BY started_at").fetchall()
    assert stops == [(first.process.pid, "lost"), (again.process.pid, "stopped")]


def test_runs_a_killed_server_left_running_are_ended_as_process_lost_by_the_next_one(
        database: str) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1", db=database) as first:
        chats = InFlight(first.url, 5)
        first.process.kill()  # kill -9: no shutdown, the rows stay RUNNING
        first.process.wait(timeout=30)
        chats.join()
    assert {row["status"] for row in rows(database, chats.run_ids)} == {"RUNNING"}
    before = audit(database)
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01", db=database) as again:
        health = httpx.get(f"{again.url}/healthz").json()
        cancel = httpx.post(f"{again.url}/runs/{chats.run_ids[0]}/cancel")
        again.process.send_signal(signal.SIGINT)
        _, err = again.process.communicate(timeout=60)
    assert "5 run(s) left RUNNING by serve instance" in err
    assert f"pid {first.process.pid}" in err and "ended FAILED (PROCESS_LOST)" in err
    assert health["instance"]["orphansEnded"] == 5
    assert cancel.status_code == 409 and "already ended (FAILED)" in cancel.json()["error"][
        "message"]
    after = audit(database)
    for counts in (before, after):  # orphans, told apart from runs in flight, break nothing
        assert counts["orphaned"] >= 5 and counts["incomplete"] == 0
        assert counts["runs with violations"] == 0
    for row in rows(database, chats.run_ids):
        assert (row["status"], row["release_outcome"], row["termination_state"],
                row["termination_reason"]) == ("FAILED", "FAILED", "FAILED", "PROCESS_LOST")
        assert f"pid {first.process.pid}" in json.loads(row["answer_json"])["message"]


def test_a_server_leaves_the_runs_of_another_live_server_alone_and_names_it(
        tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1", db=db) as first:
        chats = InFlight(first.url, 2)
        with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1", db=db) as second:
            health = httpx.get(f"{second.url}/healthz").json()
            cancel = httpx.post(f"{second.url}/runs/{chats.run_ids[0]}/cancel")
        chats.join()
    assert health["instance"]["orphansEnded"] == 0
    assert cancel.status_code == 409
    message = cancel.json()["error"]["message"]
    assert "is not running on this server" in message and f"pid {first.process.pid}" in message
    assert {row["status"] for row in rows(db, chats.run_ids)} == {"SUCCESS"}


def test_a_killed_server_not_yet_reaped_by_its_parent_counts_as_gone_at_the_next_start(
        tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1", db=db) as first:
        chats = InFlight(first.url, 2)
        first.process.kill()  # and no wait: the process stays a zombie of this one
        chats.join()
        with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01", db=db) as again:
            health = httpx.get(f"{again.url}/healthz").json()
        assert Path(f"/proc/{first.process.pid}/stat").read_text().split(") ")[1][0] == "Z"
    assert health["instance"]["orphansEnded"] == 2
    assert {row["termination_reason"] for row in rows(db, chats.run_ids)} == {"PROCESS_LOST"}


def test_a_run_left_running_by_a_server_recorded_stopped_is_ended_by_the_next_one(
        tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id = turn(db, "s-left")
    with sqlite3.connect(tmp_path / "runs.db") as conn:  # as servers before this rule left it
        conn.execute("UPDATE diagnosis_run SET status = 'RUNNING' WHERE run_id = ?", (run_id,))
    with serving("--scenario", str(GUARDS_PASS), db=db) as again:
        health = httpx.get(f"{again.url}/healthz").json()
        again.process.send_signal(signal.SIGINT)
        _, err = again.process.communicate(timeout=60)
    assert health["instance"]["orphansEnded"] == 1
    assert "1 run(s) left RUNNING by serve instance" in err
    [row] = rows(db, [run_id])
    assert (row["status"], row["termination_reason"]) == ("FAILED", "PROCESS_LOST")
