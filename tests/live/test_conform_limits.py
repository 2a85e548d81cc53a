"""conform against a harness that streams without end: bounded memory and time, and a
verdict naming the limit it broke."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import httpx
import pytest

from harness_lab.background_http import BackgroundHTTPServer
from harness_lab.live.adapter import StreamLimitsSpec
from harness_lab.live.conform import StreamLimitError, _Stream


class Misbehaving(BaseHTTPRequestHandler):
    """POST /chat answers 200 text/event-stream and then misbehaves as ``mode`` says."""

    mode: ClassVar[str] = "endless-line"
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            if self.mode == "endless-line":
                self.wfile.write(b"event: content\ndata: ")
                while True:
                    self.wfile.write(b"x" * 65_536)
            elif self.mode == "endless-events":
                while True:
                    self.wfile.write(b"event: status\ndata: {\"status\": \"ROUTING\"}\n\n")
            elif self.mode == "trickle":
                while True:
                    self.wfile.write(b":")
                    self.wfile.flush()
                    time.sleep(0.05)
            elif self.mode == "flood":
                while True:
                    self.wfile.write(b": " + b"y" * 4096 + b"\n")
        except OSError:
            pass  # the reader closed the connection: what it should do


LIMITS = StreamLimitsSpec(event_bytes=1 << 20, events=200, total_bytes=8 << 20, seconds=1.5)


@pytest.mark.parametrize(("mode", "why"), [
    ("endless-line", "an SSE line longer than 1,048,576 bytes"),
    ("endless-events", "the stream sent more than 200 events"),
    ("flood", "the stream sent more than 8,388,608 bytes"),
    ("trickle", "still open after 1.5 s"),
])
def test_a_stream_beyond_a_limit_stops_with_a_verdict_naming_it(mode: str, why: str) -> None:
    Misbehaving.mode = mode
    with BackgroundHTTPServer(Misbehaving, name=f"misbehaving-{mode}") as server, \
            httpx.Client(trust_env=False) as client:
        stream = _Stream(client, f"{server.url}/chat", {"query": "why?"}, {}, LIMITS)
        started = time.monotonic()
        with pytest.raises(StreamLimitError, match=f"broke a limit: {why}"):
            stream.read(lambda kind, data: None, timeout_s=10.0)
        assert time.monotonic() - started < 10.0
    assert len(stream.events) <= LIMITS.events
