"""BackgroundHTTPServer: a local HTTP server answering from a daemon thread.

The lab's stand-in for a real harness's neighbours (the scripted providers that recording
and a live harness call, :mod:`harness_lab.scripted`) is a ``http.server`` handler served
this way: bound to a host and port (0 takes a free one),
listening with a deep backlog so a burst of connections waits instead of being refused, one
daemon thread per connection, and at most ``max_connections`` threads at once when a cap is
given (further connections wait in the backlog, so idle clients cannot pile up threads).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["LISTEN_BACKLOG", "BackgroundHTTPServer"]

LISTEN_BACKLOG = 1024
"""Connections the kernel queues before the server accepts them."""


class BackgroundHTTPServer:
    """Serves ``handler`` on ``host:port`` from a daemon thread named ``name``.

    ``start`` binds and serves (again after ``stop``); ``stop`` stops serving and frees the
    port; ``port`` and ``url`` say where while it runs. A context manager serves in its body.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str,
                 host: str = "127.0.0.1", port: int = 0,
                 max_connections: int | None = None) -> None:
        self.handler = handler
        self.name = name
        self.host = host
        self.requested_port = port
        self.max_connections = max_connections
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether the server is bound and serving."""
        return self._httpd is not None

    def start(self) -> Self:
        """Bind the port and serve in the background; nothing when already serving."""
        if self._httpd is not None:
            return self
        httpd = _Server((self.host, self.requested_port), self.handler, self.max_connections)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,),
                                        name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; nothing when not serving."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        """The bound port; RuntimeError when the server is not running."""
        if self._httpd is None:
            raise RuntimeError(f"the {self.name} is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://host:port``: the base URL of its paths."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    """A threading HTTP server with a deep listen backlog and daemon handler threads, at most
    ``max_connections`` of them at once when a cap is given."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 max_connections: int | None) -> None:
        super().__init__(address, handler)
        self._slots = (threading.BoundedSemaphore(max_connections)
                       if max_connections is not None else None)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Start the connection's thread once a slot is free."""
        if self._slots is None:
            super().process_request(request, client_address)
            return
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve the connection, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            if self._slots is not None:
                self._slots.release()
