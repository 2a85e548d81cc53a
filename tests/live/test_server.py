"""``harness-lab serve`` over a real socket: a real uvicorn server, a real streaming client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.bench_live_load import Served, parse_sse, serving
from harness_lab.store.sql import SqlRunStore

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
GUARDS_PASS = SCENARIOS / "outcomes" / "conclusion-guards-pass.yaml"

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """serve on the guards-pass scenario, its ~6.7 virtual seconds run in ~0.67 s."""
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.1") as server:
        yield server


def chat(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST /chat and read the whole stream."""
    with httpx.stream("POST", f"{url}/chat", json=body, timeout=30.0) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return parse_sse(list(response.iter_lines()))


def settled(url: str, run_id: str) -> dict[str, Any]:
    """The run's row once it is no longer RUNNING."""
    deadline = time.monotonic() + 20.0
    while True:
        row: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if row["status"] != "RUNNING" or time.monotonic() > deadline:
            return row
        time.sleep(0.02)


def test_a_chat_streams_metadata_statuses_content_and_done_with_the_exact_ids(
        served: Served) -> None:
    events = chat(served.url, {"query": "why is checkout slow?", "sessionId": "s-1"})
    assert [e["kind"] for e in events] == ["metadata", "status", "status", "status",
                                           "content", "done"]
    run_id = events[0]["data"]["runId"]
    assert events[0]["data"] == {"sessionId": "s-1", "runId": run_id}
    assert [e["data"]["status"] for e in events[1:4]] == [
        "ROUTING", "DIAGNOSIS_RUNNING", "SAFETY_VALIDATING"]
    assert (events[4]["data"]["sessionId"], events[4]["data"]["runId"]) == ("s-1", run_id)
    assert events[4]["data"]["conclusion"] == (
        "The checkout database connection pool is exhausted.")
    assert events[5]["data"] == {"outcome": "SUCCESS"}
    assert [e["id"] for e in events] == [0, 1, 2, 3, 4, 5]


def test_a_chat_without_a_session_id_gets_a_fresh_one(served: Served) -> None:
    first = chat(served.url, {"query": "why?"})[0]["data"]["sessionId"]
    second = chat(served.url, {"query": "why?", "sessionId": None})[0]["data"]["sessionId"]
    assert first and second and first != second


def test_a_run_takes_its_scripted_latencies_scaled_on_the_wall_clock(served: Served) -> None:
    started = time.monotonic()
    events = chat(served.url, {"query": "why is checkout slow?"})
    wall = time.monotonic() - started
    row = httpx.get(f"{served.url}/runs/{events[0]['data']['runId']}").json()
    # router 0.2 + model 1.0 + logs 2.0 + model 1.0 + metrics 1.0 + model 1.0 + guard 0.5
    assert 6.7 <= row["duration_ms"] / 1000 < 9.0
    assert 0.67 <= wall < 5.0


def test_the_stored_row_and_trace_are_readable_per_run(served: Served) -> None:
    run_id = chat(served.url, {"query": "why is checkout slow?"})[0]["data"]["runId"]
    row = httpx.get(f"{served.url}/runs/{run_id}").json()
    trace = httpx.get(f"{served.url}/runs/{run_id}/trace").json()
    assert (row["run_id"], row["status"], row["termination_reason"]) == (
        run_id, "SUCCESS", "completed")
    assert [e["type"] for e in trace][:3] == ["RUN_STARTED", "ROUTING_ATTEMPT",
                                              "ROUTING_DECISION"]
    assert trace[-1]["type"] == "RUN_FINISHED"
    assert [e["seq"] for e in trace] == list(range(len(trace)))


def test_a_client_that_disconnects_mid_run_leaves_a_cancelled_row_in_the_sqlite_file(
        served: Served) -> None:
    with httpx.stream("POST", f"{served.url}/chat", json={"query": "why?"},
                      timeout=30.0) as response:
        lines = response.iter_lines()
        seen: list[str] = []
        for line in lines:  # leave once the diagnosis is running: a tool call is in flight
            seen.append(line)
            if "DIAGNOSIS_RUNNING" in line:
                break
    run_id = parse_sse(seen)[0]["data"]["runId"]
    row = settled(served.url, run_id)
    assert (row["status"], row["termination_state"], row["termination_reason"]) == (
        "CANCELLED", "CANCELLED", "CLIENT_DISCONNECTED")
    stored = SqlRunStore(f"sqlite:///{served.db}")
    try:
        in_file = stored.get_run(run_id)
        trace = [e["type"] for e in stored.trace(run_id)]
    finally:
        stored.close()
    assert in_file is not None and in_file["status"] == "CANCELLED"
    assert in_file["answer_json"] is not None and "CLIENT_DISCONNECTED" in in_file["answer_json"]
    assert "RUN_CANCELLED" in trace and "RELEASE_DECISION" not in trace


def leave_once_diagnosis_runs(url: str, wait_s: float = 0.0,
                              until: Callable[[], bool] | None = None) -> str:
    """POST a query, read the stream until DIAGNOSIS_RUNNING, wait ``wait_s`` (or, given
    ``until``, until it holds) and close the connection; the run's id.

    The status is sent just before the model call starts: leaving at once may cancel the run
    before the call (a real race); ``wait_s`` later the call is in flight.
    """
    with httpx.stream("POST", f"{url}/chat", json={"query": "why?"},
                      timeout=30.0) as response:
        seen: list[str] = []
        lines = response.iter_lines()  # held: a dropped iterator would close the stream
        for line in lines:
            seen.append(line)
            if "DIAGNOSIS_RUNNING" in line:
                break
        time.sleep(wait_s)
        deadline = time.monotonic() + 10.0
        while until is not None and not until():
            assert time.monotonic() < deadline, "what the client waited for never happened"
            time.sleep(0.005)
    return str(parse_sse(seen)[0]["data"]["runId"])


def test_a_disconnect_discards_the_result_of_the_call_in_flight(served: Served) -> None:
    # the model call takes 0.1 s here: 0.05 s after its status it is surely in flight
    run_id = leave_once_diagnosis_runs(served.url, 0.05)
    settled(served.url, run_id)
    record = httpx.get(f"{served.url}/runs/{run_id}/record").json()
    assert record["sse_state"] == "DISCONNECTED"
    assert len(record["discarded"]) == 1
    assert [e["kind"] for e in record["sse_events"]] == ["metadata", "status", "status"]


def test_a_user_cancel_ends_the_run_with_a_failure_and_no_content(served: Served) -> None:
    with httpx.stream("POST", f"{served.url}/chat", json={"query": "why?"},
                      timeout=30.0) as response:
        lines = response.iter_lines()
        seen = [next(lines), next(lines), next(lines)]  # the metadata event
        run_id = parse_sse(seen)[0]["data"]["runId"]
        answer = httpx.post(f"{served.url}/runs/{run_id}/cancel")
        seen += list(lines)
    kinds = [e["kind"] for e in parse_sse(seen)]
    assert answer.status_code == 202
    assert "content" not in kinds and "done" not in kinds
    assert kinds[-1] == "failure"
    row = settled(served.url, run_id)
    assert (row["status"], row["termination_reason"]) == ("CANCELLED", "USER_REQUESTED")


def test_cancelling_a_finished_run_is_a_conflict_and_an_unknown_run_is_not_found(
        served: Served) -> None:
    run_id = chat(served.url, {"query": "why?"})[0]["data"]["runId"]
    done = httpx.post(f"{served.url}/runs/{run_id}/cancel")
    unknown = httpx.post(f"{served.url}/runs/run-nope/cancel")
    assert done.status_code == 409 and done.json()["error"]["code"] == "conflict"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    assert httpx.get(f"{served.url}/runs/{run_id}").json()["status"] == "SUCCESS"


@pytest.mark.parametrize(("headers", "content", "status", "words"), [
    ({"content-type": "text/plain"}, b'{"query": "x"}', 415, "application/json"),
    ({"content-type": "application/json"}, b"{not json", 400, "not JSON"),
    ({"content-type": "application/json"}, b'["x"]', 400, "JSON object"),
    ({"content-type": "application/json"}, b'{"query": ""}', 400, "'query'"),
    ({"content-type": "application/json"}, b'{"query": "x", "sessionId": 7}', 400,
     "'sessionId'"),
    ({"content-type": "application/json"}, b'{"query": "' + b"x" * 70_000 + b'"}', 413,
     "bytes"),
    ({"content-type": "application/json"}, b"[" * 30_000 + b"]" * 30_000, 400,
     "nested 30000 levels deep"),
    ({"content-type": "application/json"}, b'{"query": ' + b"7" * 5_000 + b"}", 400,
     "an integer of 5000 digits"),
    ({"content-type": "application/json"}, b'{"query": "a\\ud800b"}', 400,
     "unpaired surrogate"),
    ({"content-type": "application/json"}, b'{"query": "a\\u0000b"}', 400, "NUL"),
    ({"content-type": "application/json"}, b'{"query": "x", "sessionId": "s\\u0000"}', 400,
     "'sessionId': a NUL"),
    ({"content-type": "application/json"}, b'{"query": "x", "session_id": "s-1"}', 422,
     "unknown field(s) 'session_id'"),
    ({"content-type": "application/json"}, b'{"query": "x"\xff}', 400, "not UTF-8"),
])
def test_a_bad_chat_request_gets_a_json_error_naming_the_problem(
        served: Served, headers: dict[str, str], content: bytes, status: int,
        words: str) -> None:
    answer = httpx.post(f"{served.url}/chat", headers=headers, content=content)
    assert answer.status_code == status
    assert words in answer.json()["error"]["message"]


def test_an_unknown_path_and_a_wrong_method_get_json_errors(served: Served) -> None:
    missing = httpx.get(f"{served.url}/nowhere")
    wrong = httpx.get(f"{served.url}/chat")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (405, "method_not_allowed")
    assert wrong.headers["allow"] == "POST"


def test_the_record_of_an_unknown_run_is_not_found_without_claiming_a_row(
        served: Served) -> None:
    answer = httpx.get(f"{served.url}/runs/run-nope/record")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == "no run run-nope"


def test_a_client_that_leaves_while_sending_its_body_logs_no_traceback() -> None:
    import socket
    from urllib.parse import urlsplit

    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01") as server:
        where = urlsplit(server.url)
        assert where.hostname is not None and where.port is not None
        for _ in range(5):
            with socket.create_connection((where.hostname, where.port)) as sock:
                sock.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             b"application/json\r\nContent-Length: 1000\r\n\r\n{\"q")
        assert httpx.get(f"{server.url}/healthz").json()["status"] == "ok"
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=30)
    assert server.process.returncode == 0
    assert "Traceback" not in err
    assert "ClientDisconnect" not in err


def test_a_client_that_leaves_while_sending_its_body_costs_one_line_at_log_level_info() -> None:
    import socket
    from urllib.parse import urlsplit

    with serving("--scenario", str(GUARDS_PASS), "--log-level", "info") as server:
        where = urlsplit(server.url)
        assert where.hostname is not None and where.port is not None
        with socket.create_connection((where.hostname, where.port)) as sock:
            sock.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         b"application/json\r\nContent-Length: 1000\r\n\r\n{\"q")
        time.sleep(0.5)
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=30)
    assert err.count("POST /chat: the client left before its body was read") == 1, err


def test_health_names_the_version_and_counts_runs(served: Served) -> None:
    body = httpx.get(f"{served.url}/healthz").json()
    assert body["status"] == "ok" and body["version"]
    assert body["runs"]["late_sent"] == 0 and body["runs"]["worker_errors"] == 0


def test_a_long_silent_call_keeps_the_stream_open_with_comments() -> None:
    # the guards-pass scenario's calls take 0.2-2.0 virtual seconds, here a fifth as many wall
    # ones: the longest is still eight keep-alive periods of silence
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.2",
                 "--keepalive", "0.05") as server, \
            httpx.stream("POST", f"{server.url}/chat", json={"query": "why?"},
                         timeout=30.0) as response:
        lines = list(response.iter_lines())
    assert lines.count(": keep-alive") >= 3
    assert [e["kind"] for e in parse_sse(lines)][-2:] == ["content", "done"]


def test_cors_is_off_by_default_and_answers_a_preflight_for_a_named_origin(
        served: Served) -> None:
    preflight = {"origin": "http://localhost:5173", "access-control-request-method": "POST",
                 "access-control-request-headers": "content-type"}
    assert "access-control-allow-origin" not in httpx.options(
        f"{served.url}/chat", headers=preflight).headers
    with serving("--scenario", str(GUARDS_PASS), "--time-scale", "0.01",
                 "--cors-origin", "http://localhost:5173") as server:
        answer = httpx.options(f"{server.url}/chat", headers=preflight)
        stream = chat(server.url, {"query": "why?"})
        simple = httpx.get(f"{server.url}/healthz", headers={"origin": "http://localhost:5173"})
        other = httpx.options(f"{server.url}/chat", headers={**preflight,
                                                            "origin": "http://evil.example"})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert "POST" in answer.headers["access-control-allow-methods"]
    assert stream[-1]["kind"] == "done"
    assert simple.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert "access-control-allow-origin" not in other.headers
