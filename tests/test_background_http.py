"""A background HTTP server: serves from its thread, caps its connections, frees its port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from harness_lab.background_http import BackgroundHTTPServer


class _Gate:
    """Handlers that wait at a gate, counting how many wait at once."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with gate.lock:
                    gate.inside += 1
                    gate.most = max(gate.most, gate.inside)
                gate.open.wait(10)
                with gate.lock:
                    gate.inside -= 1
                body = b"ok"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        return Handler


def _clients(port: int, count: int) -> tuple[list[threading.Thread], list[int]]:
    statuses: list[int] = []

    def get() -> None:
        statuses.append(httpx.get(f"http://127.0.0.1:{port}/", timeout=20).status_code)

    threads = [threading.Thread(target=get) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, statuses


def _wait_for(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


@pytest.fixture
def gate() -> Iterator[_Gate]:
    gate = _Gate()
    yield gate
    gate.open.set()


def _most_at_once(gate: _Gate, clients: int, max_connections: int | None) -> int:
    """How many of ``clients`` held connections the server served at once; all answered."""
    server = BackgroundHTTPServer(gate.handler(), name="test server",
                                  max_connections=max_connections)
    server.start()
    try:
        threads, statuses = _clients(server.port, clients)
        _wait_for(lambda: gate.inside == min(clients, max_connections or clients))
        time.sleep(0.3)  # the others would have arrived by now, were they let in
        most = gate.most
        gate.open.set()
        for thread in threads:
            thread.join(20)
        assert statuses == [200] * clients
        return most
    finally:
        server.stop()


def test_a_capped_server_serves_no_more_connections_at_once_than_its_cap(gate: _Gate) -> None:
    assert _most_at_once(gate, clients=8, max_connections=3) == 3


def test_an_uncapped_server_serves_every_connection_at_once(gate: _Gate) -> None:
    assert _most_at_once(gate, clients=20, max_connections=None) == 20


def test_a_stopped_server_has_no_port_and_has_freed_it(gate: _Gate) -> None:
    server = BackgroundHTTPServer(gate.handler(), name="test server")
    server.start()
    port = server.port
    assert server.running is True
    server.stop()
    assert server.running is False
    with pytest.raises(RuntimeError, match="the test server is not running"):
        _ = server.port
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))  # raises OSError if the port were still held


def test_starting_a_running_server_again_keeps_its_port(gate: _Gate) -> None:
    server = BackgroundHTTPServer(gate.handler(), name="test server")
    server.start()
    try:
        port = server.port
        server.start()
        assert server.port == port
    finally:
        server.stop()
