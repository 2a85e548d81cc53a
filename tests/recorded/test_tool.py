"""HttpJsonTool: the request it sends and how answers become ToolOutput or errors."""

from __future__ import annotations

import json

import httpx
import pytest

from harness_lab.errors import ToolExecutionError
from harness_lab.ports import Tool, ToolInput
from harness_lab.recorded import HttpJsonTool
from tests.recorded.conftest import reply_with

REQUEST = ToolInput("run-1", "run-1-inv-1", "logs", {"service": "checkout", "limit": 5})


def tool(handler: object, **kw: object) -> HttpJsonTool:
    http = httpx.Client(transport=httpx.MockTransport(handler))  # type: ignore[arg-type]
    return HttpJsonTool("logs", "http://tools.test/", http_client=http, **kw)  # type: ignore


def test_it_is_a_read_only_evidence_tool() -> None:
    t = tool(reply_with({"items": []}), required=("service",))
    assert isinstance(t, Tool) and t.read_only and t.evidence
    assert t.url == "http://tools.test/query"
    assert t.validate({"service": "x"}) is None
    assert "missing required key(s) 'service'" in (t.validate({}) or "")
    assert "must be an object" in (t.validate([1]) or "")  # type: ignore[arg-type]


def test_the_scope_is_posted_as_canonical_json_and_items_come_back() -> None:
    seen: list[httpx.Request] = []
    answer = {"items": [{"line": "timeout"}, {"line": "retry"}], "total": 2}
    out = tool(reply_with(answer, seen=seen), path="logs/search",
               headers={"X-Tenant": "t1"}).invoke(REQUEST)
    assert out.items == ({"line": "timeout"}, {"line": "retry"})
    assert out.size_bytes == len(json.dumps(answer).encode())
    assert out.projectable and out.latency_s is None and out.meta["http_status"] == 200
    sent = seen[0]
    assert (sent.method, str(sent.url)) == ("POST", "http://tools.test/logs/search")
    assert sent.content == b'{"limit":5,"service":"checkout"}'
    assert sent.headers["x-tenant"] == "t1"


def test_an_empty_item_list_is_no_evidence() -> None:
    out = tool(reply_with({"items": []})).invoke(REQUEST)
    assert out.items == () and out.projectable


@pytest.mark.parametrize("body", [{"rows": []}, {"items": "x"}, {"items": [1, 2]}, [1],
                                  b"not json", b"[" * 100_000,
                                  b'{"items": [1' + b"0" * 5000 + b"]}"])
def test_a_body_without_a_list_of_items_is_unprojectable(body: object) -> None:
    out = tool(reply_with(body)).invoke(REQUEST)
    assert out.projectable is False and out.items == () and out.size_bytes > 0


@pytest.mark.parametrize("status", [400, 404, 500, 503])
def test_http_errors_raise_tool_execution_error(status: int) -> None:
    with pytest.raises(ToolExecutionError, match=f"HTTP {status}"):
        tool(reply_with({"error": "down"}, status=status)).invoke(REQUEST)


@pytest.mark.parametrize(("error", "words"), [(httpx.ReadTimeout("slow"), "timed out"),
                                              (httpx.ConnectError("refused"), "transport")])
def test_timeouts_and_connection_errors_raise_tool_execution_error(error: Exception,
                                                                  words: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    with pytest.raises(ToolExecutionError, match=words):
        tool(handler).invoke(REQUEST)
