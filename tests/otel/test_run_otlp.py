"""``harness-lab run --otlp URL``: every run the command makes reaches a real receiver; a
bad URL or a missing extra stops the command before any run; without the flag nothing of
OpenTelemetry is imported."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.conftest import ROOT, run_cli
from tests.otel.conftest import SCENARIOS, Receiver, modules_loaded_by, string_attributes

GUARDS_PASS = str(SCENARIOS / "outcomes" / "conclusion-guards-pass.yaml")
REASON_WINS = str(SCENARIOS / "late" / "first-reason-wins.yaml")  # three matrix variants


def test_run_sends_every_run_it_makes_as_one_trace_each(receiver: Receiver) -> None:
    before = time.time_ns()
    done = run_cli("run", GUARDS_PASS, REASON_WINS, "-q", "--otlp", receiver.url)
    after = time.time_ns()
    assert done.returncode == 0, done.stderr
    spans = [span for _, span in receiver.spans()]
    roots = [s for s in spans if not s.parent_span_id]
    assert sorted(string_attributes(r)["harness_lab.scenario"] for r in roots) == [
        "conclusion-guards-pass", "late-first-reason-wins[cancel-pressed-twice]",
        "late-first-reason-wins[disconnect-first]", "late-first-reason-wins[user-cancel-first]"]
    assert len({s.trace_id for s in spans}) == 4
    assert f"otlp: {len(spans)} span(s) of 4 run(s) sent to {receiver.url}/v1/traces" in (
        done.stderr)
    # virtual second 0 of every run is placed when the command started
    assert len({r.start_time_unix_nano for r in roots}) == 1
    assert before <= roots[0].start_time_unix_nano <= after


def test_run_refuses_a_url_that_is_not_otlp_http_before_any_run(receiver: Receiver) -> None:
    done = run_cli("run", GUARDS_PASS, "--otlp", receiver.url.replace("http", "grpc"))
    assert done.returncode == 2
    assert done.stderr.startswith("harness-lab run: --otlp: 'grpc://127.0.0.1:")
    assert "conclusion-guards-pass" not in done.stdout + done.stderr
    assert receiver.requests == []


def test_run_says_so_and_exits_one_when_the_receiver_refuses_the_spans(
        receiver: Receiver) -> None:
    receiver.status = 400
    done = run_cli("run", GUARDS_PASS, "-q", "--otlp", f"{receiver.url}/v1/traces")
    assert done.returncode == 1
    assert (f"harness-lab run: --otlp: could not send 11 span(s) to {receiver.url}/v1/traces"
            in done.stderr)
    # said once, by the toolkit: the exporter's own lines of each failed batch are not shown
    assert [line for line in done.stderr.splitlines()
            if not line.startswith(("harness-lab run: ", "log: "))] == []


def test_run_with_otlp_but_without_the_otel_extra_names_the_extra_before_any_run() -> None:
    code = ("import sys; sys.modules['opentelemetry'] = None\n"
            "from harness_lab.cli import main\n"
            f"raise SystemExit(main(['run', {GUARDS_PASS!r}, '--otlp', "
            "'http://127.0.0.1:4318']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == ("harness-lab run: this needs the optional package "
                           "'opentelemetry.sdk'; install it with: "
                           "pip install 'harness_lab[otel]'\n")
    assert done.stdout == ""


def test_run_without_otlp_imports_nothing_of_opentelemetry() -> None:
    done = modules_loaded_by("run", GUARDS_PASS, "-q")
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stderr


def test_an_endpoints_password_is_neither_printed_nor_recorded_in_the_run_log(
        receiver: Receiver, tmp_path: Path) -> None:
    with_password = receiver.url.replace("//", "//collector:tok3n@")
    shown = receiver.url.replace("//", "//collector:***@")
    sent = run_cli("run", GUARDS_PASS, "-q", "--otlp", with_password, "--log-dir", str(tmp_path))
    receiver.status = 401
    refused = run_cli("run", GUARDS_PASS, "-q", "--otlp", with_password, "--no-log")
    assert f"sent to {shown}/v1/traces" in sent.stderr
    assert f" span(s) to {shown}/v1/traces (0 sent before them)" in refused.stderr
    (log,) = tmp_path.glob("*.jsonl")
    header = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert header["command"][-4:-2] == ["--otlp", shown]
    for text in (sent.stderr, refused.stderr, log.read_text(encoding="utf-8")):
        assert "tok3n" not in text
