"""``harness-lab serve --otlp URL``: each live run reaches a real receiver as one trace when it
finishes, placed on the wall clock; a receiver that is not there costs no run; a bad URL
stops the server before it listens; without the flag nothing of OpenTelemetry is imported
(a real server, real clients)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.bench_live_load import serving
from tests.cli.conftest import ROOT
from tests.live.test_server import chat
from tests.otel.conftest import SCENARIOS, Receiver, string_attributes

GUARDS_PASS = str(SCENARIOS / "outcomes" / "conclusion-guards-pass.yaml")

pytestmark = pytest.mark.live


def roots_received(receiver: Receiver, count: int) -> list[object]:
    """The root spans received, once there are ``count`` of them (or after 30 s)."""
    deadline = time.monotonic() + 30.0
    while True:
        roots = [s for _, s in receiver.spans() if not s.parent_span_id]
        if len(roots) >= count or time.monotonic() > deadline:
            return roots
        time.sleep(0.05)


def test_each_live_run_is_sent_as_one_trace_once_it_finishes(receiver: Receiver) -> None:
    with serving("--scenario", GUARDS_PASS, "--time-scale", "0.05", "--otlp",
                 receiver.url) as server:
        before = time.time_ns()
        run_ids = [chat(server.url, {"query": "why is checkout slow?"})[0]["data"]["runId"]
                   for _ in range(2)]
        after = time.time_ns()
        roots = roots_received(receiver, 2)  # while the server still runs
        server.process.send_signal(signal.SIGINT)
        out, err = server.process.communicate(timeout=60)
    assert server.process.returncode == 0, err
    assert sorted(string_attributes(r)["harness_lab.run_id"] for r in roots) == sorted(run_ids)
    assert {string_attributes(r)["harness_lab.scenario"] for r in roots} == {
        "conclusion-guards-pass"}
    spans = [s for _, s in receiver.spans()]
    assert len(spans) == 22 and len({s.trace_id for s in spans}) == 2
    for root in roots:  # on the wall clock: each run starts when its row was created
        assert before <= root.start_time_unix_nano <= after  # type: ignore[attr-defined]
    assert f"otlp: 22 span(s) of 2 run(s) sent to {receiver.url}/v1/traces" in out
    assert "stopped after 2 run(s)" in out


def test_a_receiver_that_is_not_there_costs_no_run_and_is_said_at_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the exporter retries a refused connection until its timeout (10 s by default): a
    # second is as refused, and the test no longer waits for the rest
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    with serving("--scenario", GUARDS_PASS, "--time-scale", "0.05", "--otlp",
                 "http://127.0.0.1:9/v1/traces") as server:
        events = [chat(server.url, {"query": "why?"}) for _ in range(2)]
        server.process.send_signal(signal.SIGINT)
        out, err = server.process.communicate(timeout=120)
    assert server.process.returncode == 0, err
    assert all([e["kind"] for e in run][-2:] == ["content", "done"] for run in events)
    assert "stopped after 2 run(s)" in out
    assert "otlp: 0 span(s) of 0 run(s) sent to http://127.0.0.1:9/v1/traces; 2 run(s) " \
           "not sent" in out
    assert "Traceback" not in err
    assert err.count("run(s) not sent to http://127.0.0.1:9/v1/traces") == 1


def test_serve_refuses_a_url_that_is_not_otlp_http_before_it_listens(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness_lab", "serve", "--scenario", GUARDS_PASS, "--port",
         "0", "--db", str(tmp_path / "runs.db"), "--otlp", "grpc://127.0.0.1:4317"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.startswith("harness-lab serve: --otlp: 'grpc://127.0.0.1:4317' is not "
                                  "an http:// or https:// URL")
    assert "listening" not in done.stdout
    assert not (tmp_path / "runs.db").exists()


def test_serve_without_otlp_imports_nothing_of_opentelemetry() -> None:
    code = ("import sys\n"
            "from harness_lab.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'\n"
            "                or m.startswith('harness_lab.otel'))\n"
            "print('loaded:', loaded, file=sys.stderr)\n"
            "raise SystemExit(code)\n")
    with serving("--scenario", GUARDS_PASS, "--time-scale", "0.05",
                 launcher=[sys.executable, "-c", code]) as server:
        chat(server.url, {"query": "why?"})
        server.process.send_signal(signal.SIGINT)
        _, err = server.process.communicate(timeout=60)
    assert server.process.returncode == 0, err
    assert "loaded: []" in err
