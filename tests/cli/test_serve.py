"""``harness-lab serve``'s command line: help, refusals before serving, PostgreSQL."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine

from benchmarks.bench_live_load import parse_sse, serving
from harness_lab.store.sql import SqlRunStore, metadata
from tests.live.test_server import GUARDS_PASS

pytestmark = pytest.mark.live


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """``harness-lab serve ARGS`` run to its end (only refusals end on their own)."""
    return subprocess.run([sys.executable, "-m", "harness_lab", "serve", *args],
                          capture_output=True, text=True, timeout=60)


def test_serve_help_describes_every_option_and_the_exit_codes() -> None:
    done = subprocess.run([sys.executable, "-m", "harness_lab", "serve", "--help"],
                          capture_output=True, text=True, timeout=60,
                          env={"COLUMNS": "100", "PATH": ""})
    assert done.returncode == 0
    for option in ("--scenario", "--provider-url", "--tool-url", "--time-scale", "--db",
                   "--port", "--workers"):
        assert option in done.stdout
    assert "exit codes:" in done.stdout and "  2    usage error" in done.stdout


@pytest.mark.slow
def test_serve_without_providers_says_how_to_give_them() -> None:
    done = serve()
    assert done.returncode == 2
    assert "--scenario FILE" in done.stderr and "--provider-url URL" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("option", "value", "said"), [
    ("--body-timeout", "0", "--body-timeout must be > 0 seconds, got 0.0"),
    ("--header-timeout", "-1", "--header-timeout must be > 0 seconds, got -1.0"),
    ("--keepalive", "nan", "--keepalive must be > 0 seconds, got nan"),
    ("--grace", "-0.5", "--grace must be >= 0 seconds, got -0.5"),
    ("--stop-wait", "-1", "--stop-wait must be >= 0 seconds, got -1.0"),
    ("--time-scale", "0", "--time-scale must be > 0, got 0.0"),
])
def test_serve_refuses_a_time_out_of_range_before_opening_anything(
        option: str, value: str, said: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = serve("--scenario", str(GUARDS_PASS), "--db", str(db), option, value)
    assert done.returncode == 2
    assert said in done.stderr
    assert not db.exists()


@pytest.mark.slow
def test_serve_with_a_scenario_that_is_not_there_names_the_file() -> None:
    done = serve("--scenario", "no/such.yaml")
    assert done.returncode == 2
    assert "no/such.yaml" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("db", "says"), [
    ("{tmp}/nope/runs.db", "--db {tmp}/nope/runs.db: the directory {tmp}/nope does not exist"),
    ("sqlite:///{tmp}/nope/runs.db",
     "--db sqlite:///{tmp}/nope/runs.db: the directory {tmp}/nope does not exist"),
    ("{tmp}", "--db {tmp}: {tmp} is a directory, not a database file"),
    ("sqlite:///{tmp}", "--db sqlite:///{tmp}: {tmp} is a directory, not a database file"),
], ids=["a path", "a URL", "a directory's path", "a directory's URL"])
def test_serve_refuses_a_sqlite_file_that_cannot_be_one_before_serving(
        tmp_path: Path, db: str, says: str) -> None:
    done = serve("--scenario", str(GUARDS_PASS), "--db", db.format(tmp=tmp_path))
    assert done.returncode == 2
    assert done.stderr == f"harness-lab serve: {says.format(tmp=tmp_path)}\n"
    assert not (tmp_path / "nope").exists()


@pytest.mark.slow
def test_serve_refuses_an_address_already_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = serve("--scenario", str(GUARDS_PASS), "--port", str(port),
                     "--db", str(tmp_path / "runs.db"))
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


@pytest.mark.slow
def test_a_server_refused_its_address_is_recorded_stopped_not_lost(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        done = serve("--scenario", str(GUARDS_PASS), "--port", str(taken.getsockname()[1]),
                     "--db", str(db))
    assert done.returncode == 2
    with sqlite3.connect(db) as conn:
        stops = conn.execute("SELECT stop FROM serve_instance").fetchall()
    assert stops in ([], [("stopped",)])


def test_serve_without_the_live_extra_names_the_extra_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['uvicorn'] = None\n"
            "from harness_lab.cli import main\n"
            f"raise SystemExit(main(['serve', '--scenario', {str(GUARDS_PASS)!r}, "
            f"'--db', {str(tmp_path / 'runs.db')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "pip install 'harness_lab[live]'" in done.stderr


@pytest.mark.slow
def test_serve_stops_on_an_interrupt_with_exit_0() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01") as served:
        assert httpx.get(f"{served.url}/healthz").status_code == 200
    assert served.process.returncode == 0


@pytest.fixture
def empty_postgres(postgres_url: str) -> str:
    """The PostgreSQL URL, its run tables dropped."""
    engine = create_engine(postgres_url)
    metadata.drop_all(engine)
    engine.dispose()
    return postgres_url


def test_serve_with_a_postgresql_url_stores_runs_there(empty_postgres: str) -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 db=empty_postgres) as served:
        with httpx.stream("POST", f"{served.url}/chat", json={"query": "why?"},
                          timeout=30.0) as response:
            events = parse_sse(list(response.iter_lines()))
        run_id = events[0]["data"]["runId"]
    store = SqlRunStore(empty_postgres)
    try:
        row = store.get_run(run_id)
        trace = store.trace(run_id)
    finally:
        store.close()
    assert [e["kind"] for e in events][-1] == "done"
    assert row is not None and row["status"] == "SUCCESS"
    assert trace[-1]["type"] == "RUN_FINISHED"


@pytest.mark.slow
def test_serve_stops_on_sigterm_with_exit_0_and_ends_the_runs_in_flight() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1", "--grace", "0"
                 ) as served:
        with httpx.stream("POST", f"{served.url}/chat", json={"query": "why?"},
                          timeout=30.0) as response:
            lines = response.iter_lines()
            run_id = parse_sse([next(lines), next(lines), next(lines)])[0]["data"]["runId"]
            served.process.terminate()
            assert served.process.wait(timeout=30) == 0
        store = SqlRunStore(f"sqlite:///{served.db}")
        try:
            row = store.get_run(run_id)
        finally:
            store.close()
    assert row is not None and row["status"] == "CANCELLED"
    assert row["termination_reason"] == "SERVER_SHUTDOWN"


NOTICE = GUARDS_PASS.parents[1] / "policy" / "user-cancel-notice.yaml"


@pytest.mark.slow
def test_serve_plays_the_chosen_variant_of_a_matrix_file() -> None:
    with serving("--scenario", str(NOTICE), "--variant", "silent",
                 "--time-scale", "1") as served:  # the cancel must come within the model call
        with httpx.stream("POST", f"{served.url}/chat", json={"query": "why?"},
                          timeout=30.0) as response:
            lines = response.iter_lines()
            seen = [next(lines), next(lines), next(lines)]
            run_id = parse_sse(seen)[0]["data"]["runId"]
            cancel = httpx.post(f"{served.url}/runs/{run_id}/cancel")
            seen += list(lines)
    assert cancel.status_code == 202
    assert "failure" not in [e["kind"] for e in parse_sse(seen)]  # silent: the stream just ends


@pytest.mark.slow
def test_serve_with_an_unknown_variant_lists_the_files_variants() -> None:
    done = serve("--scenario", str(NOTICE), "--variant", "loud")
    assert done.returncode == 2
    assert "'loud'" in done.stderr and "[silent]" in done.stderr
