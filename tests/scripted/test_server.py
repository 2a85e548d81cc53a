"""The scripted providers' server playing a conversation as a hosted provider would
(ReferenceServer): scripted completions, tool routes, the bearer check, hostile requests and
the request log."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import httpx
import pytest

from harness_lab.errors import ProviderError
from harness_lab.recorded import OpenAICompatibleClient
from harness_lab.scripted import (
    Answer,
    ReferenceServer,
    ToolRoute,
    error_response,
    json_completion,
    tool_call_completion,
)
from harness_lab.scripted.server import MAX_CONNECTIONS
from tests.recorded.hostile import CHAT, GOOD_BODY, HELLO, HTTP_REQUESTS, with_length

AUTH = {"Authorization": "Bearer reference-key"}


def test_it_plays_the_script_in_order_with_usage_and_tool_calls() -> None:
    script = [tool_call_completion("logs", {"service": "a"}, usage=(3, 2)),
              json_completion({"ok": True}, usage=(5, 1))]
    with ReferenceServer(script) as server, OpenAICompatibleClient(
            server.base_url, api_key="reference-key", model="m") as client:
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
        with pytest.raises(ProviderError, match="bearer") as caught, OpenAICompatibleClient(
                server.base_url, api_key="wrong") as client:
            client.complete([])
        assert caught.value.status == 401
        response = httpx.post(server.root_url + "/tools/x", json={})
        assert response.status_code == 401
    assert server.used == 0


def test_tool_routes_answer_fixed_bodies_functions_and_raw_responses() -> None:
    routes: dict[str, ToolRoute] = {"/fixed": {"items": [{"a": 1}]},
              "/echo": lambda scope: {"items": [scope]},
              "/broken": Answer(200, b"<html>")}
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
    with ReferenceServer([error_response(429, "slow down"), json_completion({"a": 1})]) as s, \
            OpenAICompatibleClient(s.base_url, api_key="reference-key") as client:
        with pytest.raises(ProviderError, match="slow down"):
            client.complete(HELLO)
        raw = httpx.post(s.base_url + "/chat/completions", json=CHAT, headers={
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


# -- hostile requests over a real socket ---------------------------------------------------------

def exchange(server: ReferenceServer, data: bytes) -> tuple[int, dict[str, Any] | None]:
    """Send raw bytes, half-close, read the whole answer: (status, JSON error body or None)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    try:
        return status, json.loads(body)
    except json.JSONDecodeError:
        return status, None


@pytest.mark.parametrize(("kind", "data", "status", "reason"), HTTP_REQUESTS,
                         ids=[case[0] for case in HTTP_REQUESTS])
def test_a_malformed_request_is_refused_with_a_reason_and_consumes_no_reply(
        kind: str, data: bytes, status: int, reason: str) -> None:
    with ReferenceServer([json_completion({"first": True})]) as server:
        got, body = exchange(server, data)
        assert got == status
        assert body is not None and reason in body["error"]["message"]
        assert (server.used, server.rejected) == (0, 1)
        ok, answer = exchange(server, with_length(str(len(GOOD_BODY)).encode(), GOOD_BODY))
    assert ok == 200 and answer is not None
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"first": True}
    assert [r.status for r in server.requests] == [status, 200]


def test_a_body_that_stops_arriving_is_answered_408_after_the_read_timeout() -> None:
    with ReferenceServer([json_completion({})], read_timeout=0.2) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(with_length(b"100", b'{"model":'))  # and then nothing more
            answer = conn.recv(65536)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert server.used == 0


def test_two_hundred_concurrent_requests_are_all_answered() -> None:
    count = 200
    start = threading.Barrier(count)
    statuses: list[int | str] = []
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
    with ReferenceServer([], tools={"/tools/logs": {"items": [1]}}) as server, \
            httpx.Client(limits=limits, trust_env=False, timeout=60) as http:

        def call() -> None:
            start.wait()
            try:
                statuses.append(http.post(server.root_url + "/tools/logs", json={"s": 1},
                                          headers=AUTH).status_code)
            except httpx.HTTPError as exc:
                statuses.append(repr(exc))

        threads = [threading.Thread(target=call) for _ in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert statuses == [200] * count
    assert server.received == count


def test_the_request_log_keeps_only_the_last_requests_and_bytes() -> None:
    with ReferenceServer([], tools={"/t": {"items": []}}, keep_requests=3,
                         keep_bytes=1000) as server:
        for i in range(5):
            httpx.post(server.root_url + "/t", json={"i": i}, headers=AUTH)
        assert [r.json["i"] for r in server.requests] == [2, 3, 4]
        pad = b'{"pad":"' + b"x" * 990 + b'"}'  # 1,000 bytes: the earlier ones must go
        httpx.post(server.root_url + "/t", content=pad,
                   headers={**AUTH, "Content-Type": "application/json"})
        assert [r.body for r in server.requests] == [pad]
    assert (server.received, server.rejected) == (6, 0)


def test_a_tool_route_that_raises_is_answered_500_naming_the_error() -> None:
    def broken(scope: Any) -> dict[str, Any]:
        raise KeyError("service")

    with ReferenceServer([], tools={"/broken": broken}) as server:
        response = httpx.post(server.root_url + "/broken", json={}, headers=AUTH)
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "reference server: KeyError: 'service'"


def test_idle_connections_hold_at_most_the_connection_limit_of_threads_and_then_time_out() -> None:
    before = threading.active_count()
    with ReferenceServer([], tools={"/t": {"items": []}}, read_timeout=1.0) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10)
                for _ in range(MAX_CONNECTIONS + 44)]
        try:
            time.sleep(0.3)  # let the server accept what it will
            threads = threading.active_count() - before
            answer = httpx.post(server.root_url + "/t", json={}, headers=AUTH, timeout=30)
        finally:
            for conn in idle:
                conn.close()
    assert threads <= MAX_CONNECTIONS + 2  # the handler threads and the serving thread
    assert answer.status_code == 200  # served once idle connections timed out


def test_only_the_last_events_are_kept_and_their_numbers_go_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness_lab.scripted.server.KEEP_EVENTS", 2)
    with ReferenceServer([], tools={"/t": {"items": []}}) as server:
        for _ in range(3):  # an arrived and an answered event each
            httpx.post(server.root_url + "/t", json={}, headers=AUTH)
        kept = [(e["seq"], e["phase"]) for e in server.events_after(0)]
        after_five = [e["seq"] for e in server.events_after(5)]
    assert kept == [(5, "arrived"), (6, "answered")]
    assert after_five == [6] and server.seen == 6


def test_a_held_call_goes_on_unreleased_once_its_hold_reaches_its_limit() -> None:
    with ReferenceServer([], tools={"/t": {"items": []}}) as server:
        hold = server.hold("after", "tool", 1, limit_s=0.2)
        answer = httpx.post(server.root_url + "/t", json={}, headers=AUTH, timeout=30)
        phases = [e["phase"] for e in server.events_after(0)]
        assert hold.hit and not hold.released.is_set()
    assert answer.status_code == 200
    assert phases == ["arrived", "held", "answered"]
