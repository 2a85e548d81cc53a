"""The scripted providers as a real HTTP server: the adapters' requests answered from a
scenario's script, faults as real HTTP errors, latencies really slept, the control paths."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from harness_lab.harness import Harness
from harness_lab.live.sources import HttpSource
from harness_lab.scripted import ProvidersServer, load_script
from harness_lab.states import ReleaseOutcome, RunState

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@contextmanager
def _served(server: ProvidersServer, name: str) -> Iterator[Harness]:
    sc = load_script(str(SCENARIOS / name), None, None)
    server.load(sc)
    source = HttpSource(f"{server.url}/v1", tool_url=server.url, scenario=sc)
    try:
        parts = source.parts()
        yield Harness(parts.components, parts.config)
    finally:
        source.close()


def test_a_harness_on_the_http_adapters_plays_the_scenario_as_its_fakes_would() -> None:
    with ProvidersServer(time_scale=0.001) as server:
        with _served(server, "paths/diagnosis.yaml") as harness:
            record = harness.run("Why do payments fail?")
        kinds = [(e["kind"], e["name"]) for e in server.events_after(0)
                 if e["phase"] == "arrived"]
    assert (record.run_state, record.release_outcome) == (RunState.SUCCESS,
                                                           ReleaseOutcome.SUCCESS)
    assert kinds == [("router", ""), ("model", ""), ("tool", "deploys"), ("model", ""),
                     ("tool", "logs"), ("model", ""), ("guard", "")]


def test_a_text_reply_naming_the_simulated_runs_invocation_names_the_served_runs() -> None:
    sc = load_script(str(SCENARIOS / "paths/repair-reply-forms.yaml"), None, "bare-draft")
    with ProvidersServer(time_scale=0.001) as server:
        server.load(sc)
        source = HttpSource(f"{server.url}/v1", tool_url=server.url, scenario=sc)
        try:
            parts = source.parts()
            harness = Harness(parts.components, parts.config)
            harness.run("Why is checkout slow?")  # run-000001: the scripts are then played
            server.load(sc)
            record = harness.run("Why is checkout slow?")
        finally:
            source.close()
    # the repair's text cites run-000001-inv-2; the served run is run-000002
    assert record.run_id == "run-000002"
    assert (record.release_outcome, record.fallback_type) == (ReleaseOutcome.SUCCESS, None)
    assert record.content is not None
    assert [e["invocation_id"] for e in record.content["evidence"]] == ["run-000002-inv-2"]


def test_a_scripted_provider_error_is_a_real_http_error() -> None:
    sc = load_script(str(SCENARIOS / "faults/provider-error-router.yaml"), None, None)
    body = {"model": "m", "messages": [
        {"role": "system", "content": __import__(
            "harness_lab.recorded.adapters", fromlist=["x"]).ROUTER_SYSTEM_PROMPT},
        {"role": "user", "content": json.dumps({"query": "q"})}]}
    with ProvidersServer(sc, time_scale=0.001) as server:
        answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 503
    assert "injected" in answer.json()["error"]["message"]


def test_an_oversize_tool_result_is_a_really_oversize_body() -> None:
    sc = load_script(str(SCENARIOS / "faults/tool-error-size.yaml"), None, None)
    with ProvidersServer(sc, time_scale=0.001) as server:
        answer = httpx.post(f"{server.url}/tools/logs", json={"service": "checkout"})
    assert len(answer.content) > sc.config.projection_max_bytes


def test_a_scripted_latency_is_really_slept_scaled() -> None:
    sc = load_script(str(SCENARIOS / "faults/tool-error-size.yaml"), None, None)
    with ProvidersServer(sc, time_scale=0.2) as server:  # tool latency 1.0 s -> 0.2 s
        began = time.monotonic()
        httpx.post(f"{server.url}/tools/logs", json={"service": "checkout"})
        took = time.monotonic() - began
    assert took >= 0.2


def test_a_held_call_waits_for_its_release_and_says_so_in_the_events() -> None:
    sc = load_script(str(SCENARIOS / "faults/tool-error-size.yaml"), None, None)
    with ProvidersServer(sc, time_scale=0.001) as server:
        hold = httpx.put(f"{server.url}/_hold",
                         json={"when": "before", "call": "tool", "n": 1}).json()["id"]
        answers: list[int] = []
        caller = threading.Thread(target=lambda: answers.append(httpx.post(
            f"{server.url}/tools/logs", json={"service": "checkout"}).status_code))
        caller.start()
        events = httpx.get(f"{server.url}/_events", params={"after": 1, "wait": 5}).json()
        held_before_release = list(answers)
        httpx.post(f"{server.url}/_release", json={"id": hold})
        caller.join(5)
    assert [e["phase"] for e in events["events"]] == ["held"]
    assert held_before_release == []
    assert answers == [200]


def test_loading_a_malformed_script_names_the_field_and_line() -> None:
    with ProvidersServer() as server:
        answer = httpx.put(f"{server.url}/_script", json={
            "content": "name: x\ndescription: y\nmodel:\n  - {tool: logs, colour: red}\n",
            "path": "broken.yaml"})
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert "broken.yaml" in message and "colour" in message and ":4" in message


def test_a_malformed_provider_call_is_refused_before_the_scenario_plays_it() -> None:
    sc = load_script(str(SCENARIOS / "faults/tool-error-size.yaml"), None, None)
    with ProvidersServer(sc, time_scale=0.001) as server:
        refused = httpx.post(f"{server.url}/tools/logs", content=b'{"service": "checkout"}',
                             headers={"Content-Type": "text/plain"})
        events = server.events_after(0)
    assert refused.status_code == 415
    assert "text/plain" in refused.json()["error"]["message"]
    assert events == [] and server.rejected == 1
