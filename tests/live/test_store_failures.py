"""``serve`` when its own database fails: an answer, never an empty stream, and a health check
that tells (a real server, a real SQLite file locked by another process, a real PostgreSQL
server stopped and started again)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.bench_live_load import parse_sse, serving
from tests.live.test_restarts import InFlight, rows
from tests.live.test_server import GUARDS_PASS
from tests.postgres import PostgresServer

pytestmark = pytest.mark.live


def post_chat(url: str, query: str = "why is checkout slow?") -> httpx.Response:
    """POST /chat and read the whole answer, whatever its kind."""
    return httpx.post(f"{url}/chat", json={"query": query, "sessionId": "s-store"},
                      timeout=60.0)


def lock(db: Path) -> sqlite3.Connection:
    """Another connection holding the SQLite file's write lock until it rolls back."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_a_store_that_refuses_the_running_row_is_a_503_naming_the_run_and_the_reason(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=f"sqlite:///{db}?timeout=0.2") as server:
        locked = lock(db)
        response = post_chat(server.url)
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        problem = response.json()["error"]
        assert problem["code"] == "store_unavailable"
        assert problem["runId"].startswith("run-")
        assert "insert_running failed" in problem["message"]
        assert "database is locked" in problem["message"]
        health = httpx.get(f"{server.url}/healthz").json()
        assert health["runs"]["store_failures"] == 1
        assert health["store"]["failures"] == 1
        assert "database is locked" in health["store"]["lastError"]
        locked.execute("ROLLBACK")
        locked.close()
        events = parse_sse(post_chat(server.url).text.splitlines())
        assert [e["kind"] for e in events][-2:] == ["content", "done"]
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    assert f"run {problem['runId']}: the store failed" in err
    assert "Traceback" not in err


def health_until(url: str, status: int, timeout_s: float = 15.0) -> dict[str, Any]:
    """``/healthz`` once it answers ``status`` (polling up to ``timeout_s``: heartbeats come
    every five seconds)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = httpx.get(f"{url}/healthz", timeout=10.0)
        if answer.status_code == status:
            return dict(answer.json())
        assert time.monotonic() < deadline, f"still {answer.status_code}: {answer.text}"
        time.sleep(0.2)


def test_a_store_that_answers_reads_but_refuses_writes_is_unhealthy_until_a_heartbeat_passes(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=f"sqlite:///{db}?timeout=0.2") as server:
        assert httpx.get(f"{server.url}/healthz").status_code == 200
        locked = lock(db)
        try:
            refused = health_until(server.url, 503)
        finally:
            locked.execute("ROLLBACK")
            locked.close()
        healthy = health_until(server.url, 200)
        server.process.send_signal(2)
        server.process.communicate(timeout=60)
    assert refused["status"] == "store_unavailable"
    assert refused["store"]["ok"] is False
    assert refused["store"]["error"].startswith("the store refused the last heartbeat: ")
    assert "database is locked" in refused["store"]["error"]
    assert healthy["store"] == {"ok": True, "error": None, "failures": 0, "lastError": None}


def read_only(postgres_server: PostgresServer, on: bool) -> None:
    """Make every transaction of the server read-only (or not again), in its sessions open
    now too (a configuration reload), as a server whose disk filled or that was demoted."""
    from sqlalchemy import create_engine, text

    engine = create_engine(postgres_server.url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("ALTER SYSTEM SET default_transaction_read_only = "
                              + ("on" if on else "off")))
            conn.execute(text("SELECT pg_reload_conf()"))
    finally:
        engine.dispose()


def test_a_read_only_postgresql_is_unhealthy_until_it_takes_writes_again(
        postgres_server: PostgresServer) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=postgres_server.fresh_database()) as server:
        read_only(postgres_server, True)
        try:
            refused = health_until(server.url, 503)
            chat = post_chat(server.url)
        finally:
            read_only(postgres_server, False)
        health_until(server.url, 200)
        server.process.send_signal(2)
        server.process.communicate(timeout=60)
    assert "read-only transaction" in refused["store"]["error"]
    assert chat.status_code == 503
    assert "read-only transaction" in chat.json()["error"]["message"]


def test_a_stopped_postgresql_is_a_503_and_an_unhealthy_check_until_it_returns(
        postgres_server: PostgresServer) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=postgres_server.url) as server:
        assert post_chat(server.url).status_code == 200
        postgres_server.stop()
        try:
            response = post_chat(server.url)
            health = httpx.get(f"{server.url}/healthz", timeout=30.0)
        finally:
            postgres_server.start()
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "store_unavailable"
        assert health.status_code == 503
        assert health.json()["status"] == "store_unavailable"
        assert health.json()["store"]["ok"] is False
        assert health.json()["store"]["error"]
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.url}/healthz").status_code != 200:
            assert time.monotonic() < deadline, "the store never came back"
            time.sleep(0.2)
        events = parse_sse(post_chat(server.url).text.splitlines())
        assert [e["kind"] for e in events][-2:] == ["content", "done"]


@pytest.mark.parametrize(("db", "says"), [
    ("sqlite:///file:{tmp}/ro.db?mode=ro&uri=true", "attempt to write a readonly database"),
    ("sqlite:///{tmp}/x.db?timeout=abc", "an option of the URL is not one the driver takes"),
    ("mysql://user:secret@localhost/db",
     "the mysql driver is not installed (No module named 'MySQLdb'); install mysqlclient"),
])
def test_a_database_serve_cannot_write_exits_two_before_listening(
        tmp_path: Path, db: str, says: str) -> None:
    sqlite3.connect(tmp_path / "ro.db").execute("CREATE TABLE t (x)").connection.commit()
    done = subprocess.run([sys.executable, "-m", "harness_lab", "serve", "--scenario",
                           str(GUARDS_PASS), "--port", "0", "--db", db.format(tmp=tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "secret" not in done.stderr
    assert "listening" not in done.stdout


def ended_rows(db: str, run_ids: list[str], timeout_s: float = 20.0) -> list[dict[str, Any]]:
    """The rows of these runs once none is RUNNING (waiting up to ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = rows(db, run_ids)
        if all(row["status"] != "RUNNING" for row in found):
            return found
        assert time.monotonic() < deadline, f"left RUNNING: {found}"
        time.sleep(0.2)


def test_runs_whose_end_the_store_refused_are_ended_once_it_answers_again(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    url = f"sqlite:///{db}?timeout=0.2"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3", db=url) as server:
        chats = InFlight(server.url, 2)
        locked = lock(db)
        chats.join()
        left = locked.execute("SELECT status FROM diagnosis_run").fetchall()
        locked.execute("ROLLBACK")
        locked.close()
        ended = ended_rows(url, chats.run_ids)
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    for events in chats.events:
        assert events[-2]["kind"] == "failure"
        assert events[-2]["data"]["code"] == "STORE_FAILURE"
    assert left == [("RUNNING",), ("RUNNING",)]
    assert "2 run(s) of this server left RUNNING (the store refused their end" in err
    assert "Traceback" not in err
    for row in ended:
        assert (row["status"], row["termination_state"], row["termination_reason"]) == (
            "FAILED", "FAILED", "PROCESS_LOST")
        assert "the store refused its end" in json.loads(row["answer_json"])["message"]


def test_a_server_stopped_right_after_its_database_returned_ends_the_runs_it_could_not(
        postgres_server: PostgresServer) -> None:
    db = postgres_server.fresh_database()
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.3", db=db) as server:
        chats = InFlight(server.url, 2)
        time.sleep(0.5)  # the throwaway server commits lazily: its RUNNING rows reach disk
        postgres_server.stop()
        try:
            chats.join()
        finally:
            postgres_server.start()
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    assert server.process.returncode == 0 and "Traceback" not in err
    assert {e[-2]["data"]["code"] for e in chats.events} == {"STORE_FAILURE"}
    assert {(row["status"], row["termination_reason"]) for row in rows(db, chats.run_ids)} == {
        ("FAILED", "PROCESS_LOST")}


def test_reading_a_run_while_the_store_is_down_is_a_503_naming_the_reason_not_a_traceback(
        postgres_server: PostgresServer) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=postgres_server.url) as server:
        postgres_server.stop()
        try:
            answers = [httpx.get(f"{server.url}/runs/run-x", timeout=30),
                       httpx.get(f"{server.url}/runs/run-x/trace", timeout=30),
                       httpx.get(f"{server.url}/runs/run-x/record", timeout=30),
                       httpx.post(f"{server.url}/runs/run-x/cancel", timeout=30)]
        finally:
            postgres_server.start()
        after = httpx.get(f"{server.url}/runs/run-x")
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == "5"
        problem = answer.json()["error"]
        assert problem["code"] == "store_unavailable"
        assert "the store did not answer: OperationalError" in problem["message"]
    assert after.status_code == 404
    assert "Traceback" not in err
    assert "GET /runs/run-x: the store failed: OperationalError" in err


def test_a_database_gone_for_several_heartbeats_is_said_once_in_one_line_and_its_return_too(
        postgres_server: PostgresServer) -> None:
    with serving("--scenario", str(GUARDS_PASS), db=postgres_server.url) as server:
        time.sleep(1)  # the throwaway server commits lazily: the serve tables reach disk
        postgres_server.stop()
        try:
            time.sleep(11)  # two heartbeats fail
        finally:
            postgres_server.start()
        time.sleep(6)  # the next one succeeds
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    failed = [line for line in err.splitlines() if "heartbeat failed" in line]
    assert len(failed) == 1, err
    assert ": OperationalError: " in failed[0]
    assert "sqlalche.me" not in err and "Traceback" not in err
    assert "the database answers again" in err
