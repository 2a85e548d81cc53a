"""``serve`` closes a connection whose request headers dribble in past the time limit, and
keeps the ones that send them in time (a real server, raw sockets)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from benchmarks.bench_live_load import serving
from tests.live.test_server import GUARDS_PASS

pytestmark = pytest.mark.live


def connect(url: str) -> socket.socket:
    """A raw TCP connection to the server at ``url``."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    return sock


def test_a_client_sending_its_headers_a_byte_at_a_time_is_cut_off() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--header-timeout", "1") as server:
        sock = connect(server.url)
        started = time.monotonic()
        closed = False
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            for _ in range(30):  # one header byte every 0.2 s: never a whole request
                time.sleep(0.2)
                try:
                    sock.sendall(b"X")
                except OSError:
                    closed = True
                    break
                sock.settimeout(0.01)
                try:
                    if sock.recv(1024) == b"":
                        closed = True
                        break
                except TimeoutError:
                    pass
        finally:
            sock.close()
        assert closed
        assert time.monotonic() - started < 5.0
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # others still served


def test_a_kept_alive_connection_keeps_serving_requests_sent_whole() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--header-timeout", "1") as server:
        with httpx.Client() as client:
            for _ in range(3):
                assert client.get(f"{server.url}/healthz").status_code == 200
                time.sleep(0.6)  # under the idle keep-alive limit, each request in time


def test_a_client_cut_off_for_slow_headers_costs_one_log_line_at_log_level_info() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--header-timeout", "0.5", "--log-level",
                 "info") as server:
        sock = connect(server.url)
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert sock.recv(1024) == b""  # closed by the server
        finally:
            sock.close()
        server.process.send_signal(2)
        _, err = server.process.communicate(timeout=60)
    assert err.count("no complete request headers within 0.5 s") == 1, err


def test_a_client_trickling_its_chat_body_gets_a_408_and_its_connection_closed() -> None:
    body = b'{"query": "why is checkout slow?"}'
    with serving("--scenario", str(GUARDS_PASS), "--body-timeout", "1") as server:
        sock = connect(server.url)
        started = time.monotonic()
        answer = b""
        try:
            sock.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body))
            for byte in body[:20]:  # one body byte every 0.2 s: never a whole body in time
                time.sleep(0.2)
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    break
            sock.settimeout(5)
            while chunk := sock.recv(4096):  # the answer, then the server's close
                answer += chunk
        finally:
            sock.close()
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b'"code":"request_timeout"' in answer
        assert b"within 1 s of its headers" in answer
        assert time.monotonic() - started < 4.0
        health = httpx.get(f"{server.url}/healthz").json()
        assert health["runs"]["finished"] == 0 and health["runs"]["active"] == 0


def test_a_chat_body_sent_whole_in_time_starts_its_run() -> None:
    with serving("--scenario", str(GUARDS_PASS), "--body-timeout", "1", "--time-scale",
                 "0.01") as server:
        with httpx.stream("POST", f"{server.url}/chat", json={"query": "why?"},
                          timeout=10) as reply:
            assert reply.status_code == 200
            events = [line for line in reply.iter_lines() if line.startswith("event:")]
        assert events[-1] == "event: done"
