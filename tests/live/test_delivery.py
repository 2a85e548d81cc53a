"""A record says a result was delivered only when it was: a client that leaves after the run
decided its result, but before the result was written, is DISCONNECTED and its content
refused (a real server; the SQLite file held locked by another process keeps the run between
its decision and its delivery)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from benchmarks.bench_live_load import parse_sse, serving
from tests.live.test_server import GUARDS_PASS, settled
from tests.live.test_store_failures import lock

pytestmark = pytest.mark.live


def test_a_client_that_leaves_while_its_decided_result_waits_is_not_counted_as_served(
        tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "1",
                 db=f"sqlite:///{db}?timeout=30") as server:
        seen: list[str] = []
        with httpx.stream("POST", f"{server.url}/chat", json={"query": "why?"},
                          timeout=30.0) as response:
            lines = response.iter_lines()  # held: the connection stays open after the loop
            for line in lines:
                seen.append(line)
                if "SAFETY_VALIDATING" in line:  # the guard answers in 0.5 s
                    break
            holder = lock(db)  # the run's completion now waits for the file
            time.sleep(1.5)  # the guard has answered: SUCCESS is decided, not yet stored
        time.sleep(0.5)  # the client has left; the server has noticed
        holder.execute("ROLLBACK")
        holder.close()
        run_id = parse_sse([*seen, ""])[0]["data"]["runId"]
        row = settled(server.url, run_id)
        record = httpx.get(f"{server.url}/runs/{run_id}/record").json()
    assert (row["status"], row["release_outcome"]) == ("SUCCESS", "SUCCESS")
    assert record["sse_state"] == "DISCONNECTED"
    assert "content" in record["sse_refused"]
    assert "content" not in [e["kind"] for e in record["sse_events"]]
