"""A round trip through Arize Phoenix, a GenAI-aware backend: a simulated run sent by
``run --otlp`` and a live one sent by ``serve --otlp`` are read back through Phoenix's own
REST API as the span tree and the attributes that were sent."""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest

from benchmarks.bench_live_load import serving
from tests.cli.conftest import run_cli
from tests.live.test_server import chat
from tests.otel.conftest import SCENARIOS, TREE
from tests.otel.phoenix import PhoenixServer

GUARDS_PASS = str(SCENARIOS / "outcomes" / "conclusion-guards-pass.yaml")

pytestmark = pytest.mark.slow  # Phoenix takes some 20 s to start


def outline(spans: Sequence[dict[str, Any]], parent: str | None = None,
            depth: int = 0) -> list[str]:
    """The names of Phoenix's spans as an indented tree, by their parent ids."""
    lines = []
    below = sorted((s for s in spans if s["parent_id"] == parent),
                   key=lambda s: (s["start_time"], s["end_time"]))
    for span in below:
        lines.append("  " * depth + span["name"])
        lines += outline(spans, span["context"]["span_id"], depth + 1)
    return lines


def attribute(spans: Sequence[dict[str, Any]], name: str, key: str) -> list[Any]:
    """Attribute ``key`` of each span called ``name``, in time order."""
    return [s["attributes"].get(key) for s in sorted(spans, key=lambda s: s["start_time"])
            if s["name"] == name]


def test_a_simulated_run_reads_back_from_phoenix_as_the_tree_it_was_sent_as(
        phoenix: PhoenixServer) -> None:
    done = run_cli("run", GUARDS_PASS, "-q", "--no-log", "--otlp", f"{phoenix.url}/v1/traces")
    assert done.returncode == 0, done.stderr
    spans = phoenix.trace_of(11, **{"harness_lab.scenario": "conclusion-guards-pass",
                                    "harness_lab.run_id": "run-000001"})
    assert outline(spans) == TREE
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    assert attribute(spans, "harness_lab.run", "harness_lab.run_state") == ["SUCCESS"]
    assert attribute(spans, "harness_lab.run", "harness_lab.release_outcome") == ["SUCCESS"]
    assert attribute(spans, "routing", "gen_ai.operation.name") == ["chat"]
    assert attribute(spans, "chat", "gen_ai.operation.name") == ["chat"] * 3
    assert attribute(spans, "invoke_agent diagnosis", "gen_ai.agent.name") == ["diagnosis"]
    for tool in ("logs", "metrics"):
        assert attribute(spans, f"execute_tool {tool}", "gen_ai.operation.name") == [
            "execute_tool"]
        assert attribute(spans, f"execute_tool {tool}", "gen_ai.tool.name") == [tool]
        assert attribute(spans, f"execute_tool {tool}",
                         "harness_lab.invocation.status") == ["READY"]
    assert attribute(spans, "semantic_guard", "harness_lab.detail.verdict") == ["SUPPORTED"]
    assert {s["status_code"] for s in spans} == {"UNSET"}


def test_a_live_run_reads_back_from_phoenix_beside_the_simulated_ones(
        phoenix: PhoenixServer) -> None:
    with serving("--scenario", GUARDS_PASS, "--time-scale", "0.05", "--otlp",
                 phoenix.url) as server:
        before = time.time()
        run_id = chat(server.url, {"query": "why is checkout slow?"})[0]["data"]["runId"]
        spans = phoenix.trace_of(11, **{"harness_lab.run_id": run_id})
        server.process.send_signal(signal.SIGINT)
        server.process.communicate(timeout=60)
    assert outline(spans) == TREE
    (root,) = [s for s in spans if s["parent_id"] is None]
    assert root["attributes"]["harness_lab.scenario"] == "conclusion-guards-pass"
    # placed on the wall clock, when the run's row was created
    assert before <= datetime.fromisoformat(root["start_time"]).timestamp() <= time.time()
