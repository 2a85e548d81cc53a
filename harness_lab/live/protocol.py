"""The HTTP/1.1 protocol ``serve`` runs: uvicorn's h11 protocol with a time limit on headers.

uvicorn closes a kept-alive connection that stays idle, but a client that sends its request
headers a byte at a time keeps a connection (and its socket) for ever. Here each request's
headers must be complete within a time limit from the moment the connection opens or the
previous response ends; a connection that misses it is closed (one log line at ``info``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

__all__ = ["HEADER_TIMEOUT_S", "header_timeout_protocol"]

HEADER_TIMEOUT_S = 10.0
"""Seconds a client has to send a request's headers (``serve --header-timeout``)."""

log = logging.getLogger("harness_lab.serve")


def header_timeout_protocol(timeout_s: float) -> type:
    """uvicorn's h11 protocol class, closing connections whose headers take over
    ``timeout_s`` seconds (pass it as ``uvicorn.Config(http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutProtocol(H11Protocol):
        """H11Protocol with a deadline for each request's headers."""

        header_timer: asyncio.TimerHandle | None = None
        armed_cycle: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.header_timer is not None and self.cycle is not self.armed_cycle:
                self.disarm()  # a request's headers arrived whole

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self.arm()  # the next request on this connection has its own limit

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def arm(self) -> None:
            self.disarm()
            self.armed_cycle = self.cycle
            self.header_timer = self.loop.call_later(timeout_s, self.headers_late)

        def disarm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None

        def headers_late(self) -> None:
            self.header_timer = None
            if self.cycle is self.armed_cycle and not self.transport.is_closing():
                log.info("closed a connection from %s: no complete request headers within "
                         "%g s", self.client, timeout_s)
                self.transport.close()

    return HeaderTimeoutProtocol
