"""The SSE wire format of a live run's events, encoded on the run's own thread in batches.

The event loop that serves every stream should do as little as it can per event: a run's
worker encodes the events it sent since its last hand-over into one :class:`Frames` (their
kinds, and their bytes on the wire joined), and the loop writes each batch with one send.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness_lab.logs.codec import data
from harness_lab.sse import SseEvent
from harness_lab.states import SseEventKind

__all__ = ["KEEPALIVE_FRAME", "Frames", "sse_frame"]

KEEPALIVE_FRAME = b": keep-alive\n\n"
"""An SSE comment line: sent on a silent stretch so proxies and browsers keep the stream."""


def sse_frame(event: SseEvent) -> bytes:
    """One SSE event on the wire: ``id``, ``event`` (the kind) and ``data`` (the payload)."""
    payload = json.dumps(data(event.data), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.kind.value}\ndata: {payload}\n\n".encode()


class Frames:
    """Consecutive SSE events of one run: their kinds, and their frames joined (``wire``)."""

    __slots__ = ("kinds", "wire")

    def __init__(self, events: Sequence[SseEvent]) -> None:
        self.kinds: tuple[SseEventKind, ...] = tuple(event.kind for event in events)
        self.wire = b"".join(sse_frame(event) for event in events)
