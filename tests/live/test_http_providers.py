"""serve with providers over HTTP: the recorded adapters, no cassette, a real provider server."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from benchmarks.bench_live_load import Served, parse_sse, serving
from harness_lab.scripted import ProvidersServer, load_script
from tests.live.test_server import GUARDS_PASS, leave_once_diagnosis_runs, settled

pytestmark = [pytest.mark.live, pytest.mark.slow]  # a serve and a provider server per test


@contextmanager
def on_http_providers(time_scale: float) -> Iterator[tuple[Served, ProvidersServer]]:
    """serve on the guards-pass scenario's providers, served over HTTP (latencies scaled)."""
    providers = ProvidersServer(load_script(str(GUARDS_PASS), None, None), port=0,
                                time_scale=time_scale).start()
    try:
        with serving("--scenario", str(GUARDS_PASS), "--provider-url", f"{providers.url}/v1",
                     "--time-scale", str(time_scale)) as server:
            yield server, providers
    finally:
        providers.stop()


@pytest.fixture
def served() -> Iterator[Served]:
    """Fast providers: the whole run takes some 0.7 s."""
    with on_http_providers(0.1) as (server, _):
        yield server


@pytest.fixture
def slow() -> Iterator[tuple[Served, ProvidersServer]]:
    """Providers at their scripted speed: each model call is in flight for a whole second."""
    with on_http_providers(1.0) as pair:
        yield pair


def model_call_arrived(providers: ProvidersServer) -> Callable[[], bool]:
    """Whether the providers got the diagnosis model's first call (then in flight a second)."""
    return lambda: any(e["phase"] == "arrived" and e["kind"] == "model"
                       for e in providers.events_after(0))


def test_a_run_on_http_providers_streams_the_released_report(served: Served) -> None:
    with httpx.stream("POST", f"{served.url}/chat", json={"query": "why is checkout slow?"},
                      timeout=30.0) as response:
        events = parse_sse(list(response.iter_lines()))
    assert [e["kind"] for e in events] == ["metadata", "status", "status", "status",
                                           "content", "done"]
    assert events[4]["data"]["conclusion"] == (
        "The checkout database connection pool is exhausted.")
    row = httpx.get(f"{served.url}/runs/{events[0]['data']['runId']}").json()
    assert (row["status"], row["tool_calls"]) == ("SUCCESS", 2)


def test_a_disconnect_during_a_blocking_http_call_discards_its_late_result(
        slow: tuple[Served, ProvidersServer]) -> None:
    served, providers = slow
    run_id = leave_once_diagnosis_runs(served.url, until=model_call_arrived(providers))
    left = time.monotonic()
    row = settled(served.url, run_id)
    record = httpx.get(f"{served.url}/runs/{run_id}/record").json()
    assert (row["status"], row["termination_reason"]) == ("CANCELLED", "CLIENT_DISCONNECTED")
    terminal_at = record["terminations"][0][2]
    assert record["discarded"], [(e["t"], e["type"], e["status"]) for e in record["trace"]]
    assert terminal_at <= record["discarded"][0][2]  # cancelled first, the result came later
    assert record["sse_state"] == "DISCONNECTED"
    assert time.monotonic() - left < 10.0
