"""ReferenceServer: scripted completions, tool routes, the bearer check and request log."""

from __future__ import annotations

import httpx
import pytest

from harness_lab.errors import ProviderError
from harness_lab.recorded import (
    OpenAICompatibleClient,
    RawResponse,
    ReferenceServer,
    error_response,
    json_completion,
    tool_call_completion,
)
from harness_lab.recorded.reference_server import ToolRoute

AUTH = {"Authorization": "Bearer reference-key"}


def test_it_plays_the_script_in_order_with_usage_and_tool_calls() -> None:
    script = [tool_call_completion("logs", {"service": "a"}, usage=(3, 2)),
              json_completion({"ok": True}, usage=(5, 1))]
    with ReferenceServer(script) as server:
        client = OpenAICompatibleClient(server.base_url, api_key="reference-key", model="m")
        first = client.complete([{"role": "user", "content": "x"}])
        second = client.complete([{"role": "user", "content": "y"}])
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/v1")
        with pytest.raises(ProviderError, match="script exhausted") as caught:
            client.complete([{"role": "user", "content": "z"}])
    assert caught.value.status == 500
    assert first.tool_calls[0].name == "logs" and first.tool_calls[0].id == "call_1_0"
    assert first.finish_reason == "tool_calls" and first.usage.input_tokens == 3
    assert second.content == '{"ok": true}' and second.model == "m"
    assert [r.json["messages"][0]["content"] for r in server.chat_requests] == ["x", "y", "z"]
    assert server.remaining == 0


def test_a_missing_or_wrong_bearer_token_is_refused() -> None:
    with ReferenceServer([json_completion({})]) as server:
        with pytest.raises(ProviderError, match="bearer") as caught:
            OpenAICompatibleClient(server.base_url, api_key="wrong").complete([])
        assert caught.value.status == 401
        response = httpx.post(server.root_url + "/tools/x", json={})
        assert response.status_code == 401
    assert server.used == 0


def test_tool_routes_answer_fixed_bodies_functions_and_raw_responses() -> None:
    routes: dict[str, ToolRoute] = {"/fixed": {"items": [{"a": 1}]},
              "/echo": lambda scope: {"items": [scope]},
              "/broken": RawResponse(200, b"<html>")}
    with ReferenceServer([], tools=routes) as server:
        root = server.root_url
        assert httpx.post(root + "/fixed", json={}, headers=AUTH).json() == {
            "items": [{"a": 1}]}
        assert httpx.post(root + "/echo", json={"s": 2}, headers=AUTH).json() == {
            "items": [{"s": 2}]}
        assert httpx.post(root + "/broken", json={}, headers=AUTH).content == b"<html>"
        assert httpx.post(root + "/nowhere", json={}, headers=AUTH).status_code == 404
        assert httpx.get(root + "/fixed", headers=AUTH).status_code == 405
    assert [r.path for r in server.requests] == ["/fixed", "/echo", "/broken", "/nowhere",
                                                 "/fixed"]


def test_scripted_errors_and_compressed_answers() -> None:
    with ReferenceServer([error_response(429, "slow down"), json_completion({"a": 1})]) as s:
        client = OpenAICompatibleClient(s.base_url, api_key="reference-key")
        with pytest.raises(ProviderError, match="slow down"):
            client.complete([])
        raw = httpx.post(s.base_url + "/chat/completions", json={}, headers={
            **AUTH, "Accept-Encoding": "gzip"})
    assert raw.headers["content-encoding"] == "gzip" and raw.json()["choices"]
    assert raw.headers["openai-organization"] == "org-reference0001"
    assert "set-cookie" in raw.headers


def test_the_port_is_only_known_while_running() -> None:
    server = ReferenceServer([])
    with pytest.raises(RuntimeError):
        _ = server.port
    server.start()
    server.start()  # idempotent
    assert server.port > 0
    server.stop()
    server.stop()
