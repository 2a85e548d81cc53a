"""Exceptions the harness raises and catches at its boundaries."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the states module imports IllegalTransition from here
    from harness_lab.states import RunState

__all__ = [
    "BudgetExceeded",
    "DraftContractError",
    "EmptyDraft",
    "HarnessError",
    "IllegalTransition",
    "InvalidDraftJson",
    "ModelFailure",
    "ProcessCrash",
    "ProviderError",
    "ReleaseFailed",
    "RouterUnavailable",
    "RunAborted",
    "SchemaInvalidDraft",
    "ScriptExhausted",
    "SseProtocolError",
    "StoreError",
    "ToolExecutionError",
]


class HarnessError(Exception):
    """Base class of every error the harness itself raises."""


class RunAborted(HarnessError):
    """``check_active`` found the run terminal: no further work may start or be used."""

    def __init__(self, run_id: str, state: RunState, boundary: str) -> None:
        self.run_id = run_id
        self.state = state
        self.boundary = boundary
        super().__init__(f"run {run_id} is {state.value}; refused at {boundary}")


class BudgetExceeded(HarnessError):
    """A hard budget limit was exceeded; carries the kind, the value and the limit."""

    def __init__(self, kind: str, value: int, limit: int) -> None:
        self.kind = kind
        self.value = value
        self.limit = limit
        super().__init__(f"{kind} budget exceeded: {value} > {limit}")


class ProviderError(HarnessError):
    """A model-like provider (model, router, guard, repair, retriever) failed technically.

    ``latency_s`` is how long the failing call took in virtual time; ``None`` lets the run's
    latency model decide, as for a reply that carries no latency.
    """

    def __init__(self, message: str, *, latency_s: float | None = None,
                 status: int | None = None) -> None:
        self.latency_s = latency_s
        self.status = status
        super().__init__(message)


class ToolExecutionError(HarnessError):
    """A tool backend failed while executing an admitted invocation."""

    def __init__(self, message: str, *, latency_s: float | None = None) -> None:
        self.latency_s = latency_s
        super().__init__(message)


class RouterUnavailable(HarnessError):
    """The intent router could not route the query."""


class ModelFailure(HarnessError):
    """The diagnosis model call failed (wraps a ProviderError)."""


class DraftContractError(HarnessError):
    """The agent's final output broke the draft contract (doc §6): an exception, not a stop.

    ``progress`` is the ProgressSnapshot taken when the contract failed; only its verified
    facts may still become a process-type fallback.
    """

    kind = "DRAFT_CONTRACT"

    def __init__(self, message: str, progress: Any = None) -> None:
        self.progress = progress
        super().__init__(message)


class EmptyDraft(DraftContractError):
    """The model produced neither a draft nor an action."""

    kind = "EMPTY_DRAFT"


class InvalidDraftJson(DraftContractError):
    """The model's output was not valid JSON."""

    kind = "INVALID_JSON"


class SchemaInvalidDraft(DraftContractError):
    """The draft was JSON but failed the DiagnosisDraft schema."""

    kind = "SCHEMA_INVALID"


class ReleaseFailed(HarnessError):
    """Release found no safe content to publish: the run must fail."""


class SweepError(HarnessError):
    """A sweep cannot start as asked; raised before any sample runs, so nothing is lost."""


class ScriptExhausted(HarnessError):
    """A scripted fake was asked for more steps than its script holds."""

    def __init__(self, component: str, step: int, available: int) -> None:
        self.component = component
        self.step = step
        super().__init__(
            f"{component}: script exhausted at step {step} (it holds {available} step(s))"
        )


class ProcessCrash(BaseException):  # noqa: N818 - models a process dying, not an error to handle
    """Simulates the host process dying mid-run: nothing in the harness catches it."""


class SseProtocolError(RuntimeError):
    """The application tried an SSE event the public protocol forbids."""


class StoreError(HarnessError):
    """A run store refused a write; ``run_id`` names the run it concerned."""

    def __init__(self, message: str, run_id: str | None = None) -> None:
        self.run_id = run_id
        super().__init__(message)


class IllegalTransition(RuntimeError):
    """An owner tried a move its axis's transition table does not allow."""

    def __init__(self, owner: str, current: StrEnum, target: StrEnum) -> None:
        self.owner = owner
        self.current = current
        self.target = target
        super().__init__(
            f"{owner}: illegal {type(current).__name__} transition "
            f"{current.value} -> {target.value}"
        )
