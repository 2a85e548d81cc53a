"""Builders for the recorded-adapter tests: a scripted reference conversation and a harness."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness_lab.application.components import Components
from harness_lab.fakes import ScriptedRetriever
from harness_lab.harness import Harness
from harness_lab.ports import CallKind
from harness_lab.record import RunRecord
from harness_lab.recorded import (
    HttpJsonTool,
    OpenAICompatibleClient,
    ToolSpec,
    cassette,
    openai_providers,
)
from harness_lab.scripted import (
    ReferenceServer,
    ScriptedCompletion,
    completion,
    json_completion,
    tool_call_completion,
)
from harness_lab.store.memory import MemoryRunStore

API_KEY = "sk-test-SECRET0123456789abcdef"
INV1, INV2 = "run-000001-inv-1", "run-000001-inv-2"
DIAGNOSIS_QUERY = "why is checkout slow?"
CHAT_QUERY = "hello there"

SERVICE_SCHEMA = {"type": "object", "properties": {"service": {"type": "string"}},
                  "required": ["service"]}
TOOL_SPECS = (ToolSpec("logs", "Search the service's logs.", SERVICE_SCHEMA),
              ToolSpec("metrics", "Read the service's metrics.", SERVICE_SCHEMA))
TOOL_ROUTES: dict[str, Any] = {
    "/tools/logs": {"items": [{"line": "timeout after 30s"}]},
    "/tools/metrics": {"items": [{"pool_use": 1.0}]},
}


def script() -> list[ScriptedCompletion]:
    """Two runs: a diagnosis that needs one evidence repair, then a system chat."""
    return [
        json_completion({"intent": "DIAGNOSIS"}, usage=(40, 6)),
        tool_call_completion("logs", {"service": "checkout"}, usage=(300, 18)),
        tool_call_completion("metrics", {"service": "checkout"}, usage=(360, 40), content={
            "progress": {"assessment": "GAINED",
                         "facts": [{"statement": "timeouts in checkout logs",
                                    "citations": [INV1]}]}}),
        json_completion({"progress": {"assessment": "GAINED"},
                         "draft": {"conclusion": "the db connection pool is exhausted",
                                   "evidence": [
                                       {"invocation_id": INV1, "claim": "timeouts in logs"},
                                       {"invocation_id": "run-000001-inv-9",
                                        "claim": "made up"}]}}, usage=(420, 60)),
        json_completion({"draft": {"conclusion": "the db connection pool is exhausted",
                                   "evidence": [
                                       {"invocation_id": INV1, "claim": "timeouts in logs"},
                                       {"invocation_id": INV2, "claim": "pool at 100%"}]}},
                        usage=(200, 50)),
        json_completion({"supported": True, "rationale": "timeouts and a saturated pool"},
                        usage=(250, 12)),
        json_completion({"intent": "SYSTEM_CHAT"}, usage=(30, 6)),
        completion("Hello! Ask me why a service is slow.", usage=(20, 9)),
    ]


class FixedLatency:
    """A latency model: a fixed number of virtual seconds per call kind."""

    SECONDS = {CallKind.ROUTER: 0.5, CallKind.MODEL: 2.0, CallKind.TOOL: 1.0,
               CallKind.REPAIR: 1.5, CallKind.GUARD: 1.0, CallKind.RESPONDER: 0.5,
               CallKind.RETRIEVER: 0.25}

    def latency(self, kind: CallKind, name: str, reply_latency: float | None) -> float:
        """The reply's own latency if it has one, else the fixed seconds of ``kind``."""
        return reply_latency if reply_latency is not None else self.SECONDS[kind]


_OPEN: list[httpx.Client] = []
"""The clients :func:`build_harness` made, closed when the test that made them ends."""


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """No kept-alive connection outlives its test, to be reported in another one."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def build_harness(base_url: str, tool_url: str, *, api_key: str = API_KEY) -> Harness:
    """A harness on the OpenAI adapters and two HttpJsonTools (a fake retriever)."""
    http = httpx.Client(trust_env=False)  # no proxy from the environment, ever
    _OPEN.append(http)
    client = OpenAICompatibleClient(base_url, api_key=api_key, model="gpt-4o-mini",
                                    http_client=http)
    auth = {"Authorization": f"Bearer {api_key}"}
    tools = [HttpJsonTool(name, tool_url, path=f"/tools/{name}", required=("service",),
                          headers=auth, http_client=http) for name in ("logs", "metrics")]
    components = Components(**openai_providers(client, TOOL_SPECS),
                            retriever=ScriptedRetriever(), tools={t.name: t for t in tools})
    return Harness(components, store=MemoryRunStore(), latency=FixedLatency())


def run_both(harness: Harness, diagnosis_query: str = DIAGNOSIS_QUERY) -> list[RunRecord]:
    """The diagnosis run, then the system-chat run."""
    return [harness.run(diagnosis_query), harness.run(CHAT_QUERY)]


@dataclass(frozen=True)
class Recording:
    """A cassette recorded against the reference server, and what the live runs gave."""

    path: Path
    base_url: str
    tool_url: str
    records: list[RunRecord]
    server: ReferenceServer


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """Record the two runs once per module, through the real HTTP path."""
    path = tmp_path_factory.mktemp("cassettes") / "reference_run.yaml"
    with ReferenceServer(script(), tools=TOOL_ROUTES, api_key=API_KEY) as server:
        base_url, tool_url = server.base_url, server.root_url
        with cassette(path, record_mode="once") as report:
            records = run_both(build_harness(base_url, tool_url))
    assert report.recorded == len(server.requests) == 10
    return Recording(path, base_url, tool_url, records, server)


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests to 127.0.0.1 must never be routed through a proxy from the environment."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every socket connect raises; the addresses tried are collected."""
    tried: list[Any] = []

    def blocked(self: socket.socket, address: Any) -> None:
        tried.append(address)
        raise OSError(f"network blocked in this test: connect to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    yield tried


def mock_client(handler: Callable[[httpx.Request], httpx.Response], **kw: Any
                ) -> OpenAICompatibleClient:
    """A client whose HTTP goes to ``handler`` (an httpx.MockTransport)."""
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAICompatibleClient("https://provider.test/v1", api_key="k", http_client=http,
                                  **kw)


def chat_body(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
              usage: tuple[int, int] = (7, 3)) -> dict[str, Any]:
    """An OpenAI chat completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
            "model": "gpt-4o-mini"}


def reply_with(body: Any, status: int = 200, seen: list[httpx.Request] | None = None
               ) -> Callable[[httpx.Request], httpx.Response]:
    """A MockTransport handler answering ``body`` (JSON unless bytes) and noting requests."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if isinstance(body, bytes):
            return httpx.Response(status, content=body)
        return httpx.Response(status, content=json.dumps(body).encode())

    return handler
