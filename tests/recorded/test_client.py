"""OpenAICompatibleClient: the request it sends and how each failure maps to ProviderError."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import httpx
import pytest

from harness_lab.errors import ProviderError
from harness_lab.recorded import ChatToolCall, OpenAICompatibleClient
from harness_lab.recorded.client import encode_body, http_client, shared_ssl_context
from tests.recorded.conftest import chat_body, mock_client, reply_with

MESSAGES = [{"role": "user", "content": "hi"}]


def test_a_completion_is_parsed_with_content_tool_calls_and_usage() -> None:
    body = chat_body("done", tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "logs", "arguments": '{"service": "checkout"}'}}], usage=(11, 4))
    result = mock_client(reply_with(body)).complete(MESSAGES)
    assert result.content == "done"
    assert result.tool_calls == (ChatToolCall("logs", {"service": "checkout"}, "c1"),)
    assert (result.prompt_tokens, result.completion_tokens) == (11, 4)
    assert result.usage.input_tokens == 11 and result.usage.output_tokens == 4
    assert result.finish_reason == "stop" and result.model == "gpt-4o-mini"


def test_a_usage_past_what_a_store_holds_is_read_for_the_store_to_refuse() -> None:
    body = chat_body("done", usage=(9223372036854775807, 1))
    body["usage"]["total_tokens"] = 9223372036854775808  # one past the signed 64-bit range
    result = mock_client(reply_with(body)).complete(MESSAGES)
    assert (result.prompt_tokens, result.completion_tokens) == (9223372036854775807, 1)


def test_the_request_is_deterministic_with_sorted_keys_and_credentials_in_headers() -> None:
    seen: list[httpx.Request] = []
    client = mock_client(reply_with(chat_body("x"), seen=seen), organization="org-abc")
    tools = [{"type": "function", "function": {"name": "logs", "parameters": {}}}]
    client.complete([{"content": "hi", "role": "user"}], tools=tools, json_output=True)
    client.complete([{"role": "user", "content": "hi"}], tools=tools, json_output=True)
    first, second = (r.content for r in seen)
    assert first == second
    body = json.loads(first)
    assert first == encode_body(body)  # sorted keys, compact
    assert body["temperature"] == 0 and body["model"] == "gpt-4o-mini"
    assert body["response_format"] == {"type": "json_object"}
    assert body["tools"] == tools
    assert seen[0].url == "https://provider.test/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer k"
    assert seen[0].headers["openai-organization"] == "org-abc"


def test_plain_requests_carry_neither_tools_nor_a_response_format() -> None:
    body = mock_client(reply_with(chat_body("x"))).request_body(MESSAGES)
    assert set(body) == {"model", "messages", "temperature"}


@pytest.mark.parametrize("status", [400, 401, 429, 500, 503])
def test_http_errors_raise_provider_error_with_the_status_and_message(status: int) -> None:
    body = {"error": {"message": "slow down", "type": "rate_limit"}}
    with pytest.raises(ProviderError) as caught:
        mock_client(reply_with(body, status=status)).complete(MESSAGES)
    assert caught.value.status == status
    assert f"HTTP {status}" in str(caught.value) and "slow down" in str(caught.value)


def test_an_error_body_that_is_not_json_is_quoted() -> None:
    with pytest.raises(ProviderError, match="upstream exploded") as caught:
        mock_client(reply_with(b"upstream exploded", status=502)).complete(MESSAGES)
    assert caught.value.status == 502


@pytest.mark.parametrize(("body", "words"), [
    (b"<html>nope</html>", "is not JSON"),
    (b"[" * 100_000, "is JSON this toolkit does not read: nested 100000 levels deep"),
    (b'{"choices": 1' + b"0" * 5000 + b"}",
     "is JSON this toolkit does not read: an integer of 5001 digits"),
    (chat_body(None, tool_calls=[{"id": "c", "function": {"name": "logs",
                                                          "arguments": "[" * 100_000}}]),
     "arguments are not JSON"),
    ({"choices": []}, "no choices"),
    ({"object": "chat.completion"}, "no choices"),
    ({"choices": [{"index": 0}]}, "no message"),
    ([1, 2], "not a JSON object"),
    (chat_body(None, tool_calls=[{"id": "c", "function": {"name": "logs",
                                                          "arguments": "{oops"}}]),
     "arguments are not JSON"),
    (chat_body(None, tool_calls=[{"id": "c", "function": {"name": "logs",
                                                          "arguments": "[1]"}}]),
     "not a JSON object"),
    (chat_body(None, tool_calls=[{"id": "c", "function": {"arguments": "{}"}}]),
     "no function name"),
])
def test_malformed_bodies_raise_provider_error(body: object, words: str) -> None:
    with pytest.raises(ProviderError, match=words) as caught:
        mock_client(reply_with(body)).complete(MESSAGES)
    assert caught.value.status == 200


@pytest.mark.parametrize(("error", "words"), [
    (httpx.ReadTimeout("read timed out"), "timed out after 30.0s"),
    (httpx.ConnectTimeout("connect timed out"), "timed out"),
    (httpx.ConnectError("connection refused"), "transport error"),
    (httpx.RemoteProtocolError("peer closed"), "transport error"),
])
def test_timeouts_and_connection_errors_raise_provider_error(error: Exception,
                                                             words: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    with pytest.raises(ProviderError, match=words) as caught:
        mock_client(handler).complete(MESSAGES)
    assert caught.value.status is None and caught.value.latency_s is None


def test_missing_ids_and_empty_arguments_are_tolerated() -> None:
    body = chat_body(None, tool_calls=[{"type": "function",
                                        "function": {"name": "logs", "arguments": ""}}])
    result = mock_client(reply_with(body)).complete(MESSAGES)
    assert result.tool_calls == (ChatToolCall("logs", {}, None),)


def test_a_client_it_created_is_closed_but_a_given_one_is_not() -> None:
    given = httpx.Client(transport=httpx.MockTransport(reply_with(chat_body("x"))))
    with OpenAICompatibleClient("http://x/v1/", http_client=given) as client:
        assert client.url == "http://x/v1/chat/completions"
    assert not given.is_closed
    own = OpenAICompatibleClient("http://x/v1")
    own.close()
    assert own._http.is_closed


def test_from_env_reads_the_key_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-env-1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/")
    client = OpenAICompatibleClient.from_env(api_key_env="MY_KEY", model="local")
    assert client.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert client.headers()["Authorization"] == "Bearer sk-env-1" and client.model == "local"
    monkeypatch.delenv("MY_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    keyless = OpenAICompatibleClient.from_env(api_key_env="MY_KEY")
    assert keyless.base_url == "https://api.openai.com/v1"
    assert "Authorization" not in keyless.headers()


def test_every_recording_client_shares_one_tls_context_that_verifies_certificates() -> None:
    context = shared_ssl_context()
    assert shared_ssl_context() is context
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 50  # the CA bundle is loaded


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_recording_client_refuses_a_server_whose_certificate_nobody_signed(
        tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def handshake() -> None:
            connection, _ = listener.accept()
            with contextlib.suppress(OSError), server_context.wrap_socket(
                    connection, server_side=True):
                pass

        thread = threading.Thread(target=handshake, daemon=True)
        thread.start()
        with http_client() as http, pytest.raises(httpx.ConnectError,
                                                  match="CERTIFICATE_VERIFY_FAILED"):
            http.get(f"https://127.0.0.1:{port}/", timeout=10)
        thread.join(timeout=10)
