"""LiveRun: the mutable objects of one run while it executes (not part of the public record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness_lab.core.context import RunContext
from harness_lab.diagnosis.agent import DiagnosisAgent, DiagnosisAgentExecution
from harness_lab.diagnosis.collection import CollectionController
from harness_lab.release.pipeline import ReleaseDecision, ReleasePipeline
from harness_lab.sse import ChatSseSession
from harness_lab.states import CancellationReason, ChatApplicationStatus, IntentType
from harness_lab.tools.boundary import ToolBoundary

__all__ = ["LiveRun", "cancel_once"]


@dataclass(slots=True, init=False)
class LiveRun:
    """One submitted request and the live state of its run.

    Created before the run starts so that a disconnect or cancel scheduled at a virtual
    instant can reach it; the application fills the rest in as the run goes.
    """

    run_id: str
    session_id: str
    query: str
    sse: ChatSseSession
    ctx: RunContext | None = None
    intent: IntentType | None = None
    statuses: list[ChatApplicationStatus] = field(default_factory=list)
    collection: CollectionController | None = None
    boundary: ToolBoundary | None = None
    agent: DiagnosisAgent | None = None
    execution: DiagnosisAgentExecution | None = None
    decision: ReleaseDecision | None = None
    release: ReleasePipeline | None = None
    error: str | None = None
    draft_error: str | None = None
    pending_cancel: CancellationReason | None = None
    requested: set[CancellationReason] = field(default_factory=set)
    """The reasons this run was asked to end for once it had started: one reason asked again
    (a live server cancels at once when a client leaves, then tells the SSE session) is the
    same request, not a second one to reject and trace."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __init__(self, run_id: str, session_id: str, query: str, sse: ChatSseSession) -> None:
        """A run not started yet: only its request and SSE session (compiled: native stores;
        dataclasses' generated ``__init__`` runs as Python even in a compiled class)."""
        self.run_id = run_id
        self.session_id = session_id
        self.query = query
        self.sse = sse
        self.ctx = None
        self.intent = None
        self.statuses = []
        self.collection = None
        self.boundary = None
        self.agent = None
        self.execution = None
        self.decision = None
        self.release = None
        self.error = None
        self.draft_error = None
        self.pending_cancel = None
        self.requested = set()
        self.extra = {}

    def cancel(self, reason: CancellationReason, detail: str = "") -> bool:
        """Cancel the run now; before it started, the cancel applies at its start. True if
        this cancel ends the run (the context's compare-and-set: the first terminal wins).

        Safe from another thread than the run's: before the run has a context the reason is
        left for it (the first one left wins), and the context is read again after, so a run
        starting at this very moment sees the reason or is cancelled here. A reason asked
        again once the run has started is the same request (False, nothing traced).
        """
        ctx = self.ctx
        if ctx is None:
            if self.pending_cancel is None:
                self.pending_cancel = reason
            ctx = self.ctx
            if ctx is None:
                return True
        return cancel_once(self.requested, ctx, reason, detail)

    def user_cancel(self) -> None:
        """The user cancels the run now (the client stays connected)."""
        self.cancel(CancellationReason.USER_REQUESTED, "user requested")

    def server_shutdown(self) -> None:
        """The server stops with the run still in flight, its grace period over (SPEC 5.9)."""
        self.cancel(CancellationReason.SERVER_SHUTDOWN, "server shutting down")

    def disconnect(self) -> None:
        """The client goes away now (the SSE session tells the run to cancel)."""
        if self.ctx is None and self.pending_cancel is None:
            self.pending_cancel = CancellationReason.CLIENT_DISCONNECTED
        self.sse.disconnect()


def cancel_once(requested: set[CancellationReason], ctx: RunContext,
                reason: CancellationReason, detail: str = "") -> bool:
    """Cancel ``ctx`` for ``reason`` unless ``requested`` (a run's
    :attr:`LiveRun.requested`) holds it already: the same request again, which ends nothing
    and is not traced. True if this cancel ends the run."""
    if reason in requested:
        return False
    requested.add(reason)
    return ctx.cancel(reason, detail)  # an empty detail is the reason's own
