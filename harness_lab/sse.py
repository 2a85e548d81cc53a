"""ChatSseSession: the public event stream and its connection state machine (doc §11).

Public order is ``metadata -> status* -> content | failure -> done``. Content goes out at
most once, a result's session and run identity must match the metadata, late content after
TERMINAL or DISCONNECTED is refused (and counted), and ``ReleaseOutcome.CANCELLED`` is never
a public done.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness_lab.errors import SseProtocolError
from harness_lab.frozen import value_class
from harness_lab.states import (
    SSE_TRANSITIONS,
    ReleaseOutcome,
    SseEventKind,
    SseState,
    advance,
)

__all__ = ["ChatSseSession", "SseEvent", "SseProtocolError"]


@dataclass(frozen=True, slots=True, init=False)
class SseEvent:
    """One event as sent to the client."""

    seq: int
    t: float
    kind: SseEventKind
    data: Mapping[str, Any]

    def __init__(self, seq: int, t: float, kind: SseEventKind, data: Mapping[str, Any]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "seq", seq)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "data", data)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of this event."""
        return {"seq": self.seq, "t": self.t, "kind": self.kind.value, "data": dict(self.data)}


value_class(SseEvent)  # see frozen.py


SendHook = Callable[["ChatSseSession", int, SseEventKind], None]


class ChatSseSession:
    """One client's SSE connection; the only owner of :class:`SseState`.

    ``before_send(session, k, kind)`` is called before the k-th event (1-based) is written;
    it may call :meth:`disconnect` to model a send failure. ``on_disconnect`` is told once when
    the connection is lost, so the run can be cancelled. ``allow_second_content`` seeds the
    defect :attr:`~harness_lab.defects.Defect.SECOND_CONTENT_EVENT`: a second result is sent
    instead of refused (for testing the invariants only).
    """

    __slots__ = ("state", "events", "refused", "session_id", "run_id", "_clock", "before_send",
                 "on_disconnect", "_result_sent", "_allow_second_content", "history",
                 "trace_marks", "trace")

    def __init__(self, clock: Callable[[], float], before_send: SendHook | None = None, *,
                 allow_second_content: bool = False) -> None:
        self.state = SseState.NEW
        self.events: list[SseEvent] = []
        self.refused: list[SseEventKind] = []
        self.session_id: str | None = None
        self.run_id: str | None = None
        self._clock = clock
        self.before_send = before_send
        self.on_disconnect: Callable[[], None] | None = None
        self._result_sent = False
        self._allow_second_content = allow_second_content
        # every state entered, with when (virtual seconds): NEW first
        self.history: list[tuple[str, float]] = [(SseState.NEW.value, clock())]
        # the run's trace (the run sets its own): each event sent marks how much came first
        self.trace: list[Any] = []
        self.trace_marks: list[int] = []

    @property
    def is_open(self) -> bool:
        """True while events can still be sent: the one rule every send obeys."""
        return self.state is SseState.OPEN

    def open(self, session_id: str, run_id: str) -> bool:
        """Send ``metadata`` with the exact session and run id: NEW -> OPEN."""
        if self.state is not SseState.NEW:
            return self._refuse(SseEventKind.METADATA)
        self.session_id, self.run_id = session_id, run_id
        self._enter(SseState.OPEN)
        return self._send(SseEventKind.METADATA, {"sessionId": session_id, "runId": run_id})

    def status(self, status: str) -> bool:
        """Send a ``status`` event (OPEN -> OPEN)."""
        if not self.is_open:
            return self._refuse(SseEventKind.STATUS)
        if self._result_sent:
            raise SseProtocolError("status after the result breaks the public order")
        return self._send(SseEventKind.STATUS, {"status": status})

    def content(self, session_id: str, run_id: str, body: Mapping[str, Any]) -> bool:
        """Send the one ``content`` event; refused after TERMINAL or DISCONNECTED."""
        return self._result(SseEventKind.CONTENT, session_id, run_id, body)

    def failure(self, session_id: str, run_id: str, body: Mapping[str, Any]) -> bool:
        """Send the one ``failure`` event; refused after TERMINAL or DISCONNECTED."""
        return self._result(SseEventKind.FAILURE, session_id, run_id, body)

    def done(self, outcome: ReleaseOutcome) -> bool:
        """Send ``done`` with the ReleaseOutcome: OPEN -> TERMINAL. CANCELLED is never public."""
        if outcome is ReleaseOutcome.CANCELLED:
            raise SseProtocolError("ReleaseOutcome.CANCELLED is never a public done outcome")
        if not self.is_open:
            return self._refuse(SseEventKind.DONE)
        if not self._result_sent:
            raise SseProtocolError("done before content or failure breaks the public order")
        sent = self._send(SseEventKind.DONE, {"outcome": outcome.value})
        if sent:
            self._enter(SseState.TERMINAL)
        return sent

    def close(self) -> None:
        """Server-side close without ``done`` (user cancel): OPEN -> TERMINAL."""
        if self.is_open:
            self._enter(SseState.TERMINAL)

    def disconnect(self) -> None:
        """The client went away (or a send failed): NEW/OPEN -> DISCONNECTED."""
        if self.state in (SseState.NEW, SseState.OPEN):
            self._enter(SseState.DISCONNECTED)
            if self.on_disconnect is not None:
                self.on_disconnect()

    def _enter(self, state: SseState) -> None:
        """Move to ``state`` (an illegal move raises) and remember when."""
        self.state = advance("ChatSseSession", SSE_TRANSITIONS, self.state, state)
        self.history.append((state.value, self._clock()))

    def _result(self, kind: SseEventKind, session_id: str, run_id: str,
                body: Mapping[str, Any]) -> bool:
        if not self.is_open:
            return self._refuse(kind)
        if (session_id, run_id) != (self.session_id, self.run_id):
            raise SseProtocolError(
                f"result identity {session_id}/{run_id} does not match metadata "
                f"{self.session_id}/{self.run_id}"
            )
        if self._result_sent and not self._allow_second_content:
            return self._refuse(kind)
        self._result_sent = True
        return self._send(kind, {"sessionId": session_id, "runId": run_id, **body})

    def _send(self, kind: SseEventKind, data: Mapping[str, Any]) -> bool:
        if self.before_send is not None:
            self.before_send(self, len(self.events) + 1, kind)
            if not self.is_open:  # the send failed: the hook disconnected the client
                return self._refuse(kind)
        self.events.append(SseEvent(len(self.events), self._clock(), kind, data))
        self.trace_marks.append(len(self.trace))
        return True

    def _refuse(self, kind: SseEventKind) -> bool:
        self.refused.append(kind)
        return False
