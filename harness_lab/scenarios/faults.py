"""Fault specifications of the scenario format, one model per ``kind``.

A fault is addressed by virtual time (``at_s``: seconds after the run starts), by lifecycle
point (``at``: before or after the k-th call of a kind, or of a named tool) or, for a client
disconnect, by the k-th SSE event (``sse_event``: the send of that event fails). Faults that
change what a call returns (``provider_error``, ``tool_error``, ``latency_spike``...) say which
call with ``call``/``tool`` and ``n`` (1-based); a ``store_failure`` says which store operation
of the run fails with ``operation``. Every fault must fire during the run; one that points past
its end is reported as an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from harness_lab.ports import CallKind
from harness_lab.scenarios.limits import INT_MAX
from harness_lab.scenarios.model_base import SpecModel, exactly_one

__all__ = ["FAULT_KINDS", "At", "Fault", "StartConfiguration", "describe", "from_start",
           "start_configuration"]

Positive = Annotated[int, Field(ge=1, le=INT_MAX)]
_KIND = Field(description="The fault kind.")


def _named_tool(tool: str | None, info: ValidationInfo) -> str | None:
    """``tool`` when the ``call`` beside it is ``tool``: only tool calls have a tool name."""
    call = info.data.get("call")
    if tool is not None and call is not None and call is not CallKind.TOOL:
        raise ValueError(f"tool names a tool call, and this is a {call.value} call; "
                         f"write `call: tool` or leave `tool` out")
    return tool


class At(SpecModel):
    """A lifecycle point: ``when`` the ``n``-th call of ``call`` (of ``tool`` when given)."""

    when: Literal["before", "after"] = "before"
    """Before or after the call."""
    call: CallKind
    """The kind of call."""
    n: Positive = 1
    """Which call of that kind (1-based)."""
    tool: str | None = None
    """With `call: tool`, count the calls of this tool only."""

    _tool_call = field_validator("tool")(_named_tool)

    def label(self) -> str:
        """A short text such as ``before tool:logs#2``."""
        name = f"{self.call.value}:{self.tool}" if self.tool else self.call.value
        return f"{self.when} {name}#{self.n}"


class _Fault(SpecModel):
    note: str | None = None
    """A note for people; not read by runs."""


class _Timed(_Fault):
    at_s: float | None = Field(None, ge=0)
    """Virtual seconds after the run starts."""
    at: At | None = None
    """A lifecycle point: before or after the n-th call of a kind."""

    @model_validator(mode="after")
    def _one_locator(self) -> _Timed:
        return exactly_one(self, ("at_s", "at"), "give exactly one of at_s and at")


class ClientDisconnect(_Fault):
    """The client goes away (at a time, a boundary, or when sending the k-th SSE event)."""

    kind: Annotated[Literal["client_disconnect"], _KIND]
    at_s: float | None = Field(None, ge=0)
    """Virtual seconds after the run starts."""
    at: At | None = None
    """A lifecycle point: before or after the n-th call of a kind."""
    sse_event: Positive | None = None
    """Sending the n-th SSE event fails (1-based)."""

    @model_validator(mode="after")
    def _one_locator(self) -> ClientDisconnect:
        return exactly_one(self, ("at_s", "at", "sse_event"),
                           "give exactly one of at_s, at and sse_event")


class UserCancel(_Timed):
    """The user cancels while the client stays connected."""

    kind: Annotated[Literal["user_cancel"], _KIND]


class ServerShutdown(_Timed):
    """The server stops with the run in flight, its grace period over (SPEC 5.9): the run is
    cancelled SERVER_SHUTDOWN and a client still connected is told so."""

    kind: Annotated[Literal["server_shutdown"], _KIND]


class Deadline(_Timed):
    """The deadline is reached: ``at_s`` sets it; ``at`` makes it pass at that point."""

    kind: Annotated[Literal["deadline"], _KIND]


class BudgetExhausted(_Fault):
    """A budget kind runs out: its limit becomes what is already used, at ``at`` (or start)."""

    kind: Annotated[Literal["budget_exhausted"], _KIND]
    budget: Literal["model_calls", "tool_calls", "tokens", "bytes"]
    """The budget that runs out."""
    at: At | None = None
    """When it runs out (default: at the start)."""


class NoGainStreak(_Fault):
    """``count`` consecutive tool results come back NO_EVIDENCE, from the ``n``-th tool call."""

    kind: Annotated[Literal["no_gain_streak"], _KIND]
    count: Positive = 3
    """Consecutive tool results that come back NO_EVIDENCE."""
    n: Positive = 1
    """The tool call the streak starts at (1-based)."""
    tool: str | None = None
    """Count the calls of this tool only."""


class ProtocolViolation(_Fault):
    """``count`` consecutive model steps from step ``n`` break the progress protocol."""

    kind: Annotated[Literal["protocol_violation"], _KIND]
    count: Positive = 1
    """Consecutive model steps that break the protocol."""
    n: Positive = 2
    """The model step the violations start at (1-based)."""
    mode: Literal["missing", "invalid", "bad_citation"] = "missing"
    """How the progress report breaks the protocol."""


class ToolRejection(_Fault):
    """A preflight rejection of ``tool``.

    AUTH and READ_ONLY apply to every call of the tool (authorisation and the read-only flag
    are properties of the tool); REQUEST, ID and STORE hit its ``n``-th call.
    """

    kind: Annotated[Literal["tool_rejection"], _KIND]
    reason: Literal["AUTH", "READ_ONLY", "REQUEST", "ID", "STORE"]
    """The preflight rejection reason."""
    tool: str
    """The tool rejected."""
    n: Positive = 1
    """Which call of the tool (REQUEST, ID and STORE; 1-based)."""


class ToolError(_Fault):
    """The ``n``-th call of ``tool`` fails in execution, projection, size or store, or its
    connection is reset."""

    kind: Annotated[Literal["tool_error"], _KIND]
    error: Literal["execution", "connection", "projection", "size", "store"]
    """Where the call fails (``connection``: the tool's client raises an OSError, a reset
    connection, after the call's usual latency)."""
    tool: str
    """The tool that fails."""
    n: Positive = 1
    """Which call of the tool (1-based)."""
    latency_s: float | None = Field(None, ge=0)
    """Virtual seconds the failing call takes."""


class ProviderFault(_Fault):
    """The ``n``-th call of a model-like provider fails technically."""

    kind: Annotated[Literal["provider_error"], _KIND]
    call: Literal["router", "model", "guard", "repair", "responder", "retriever"]
    """The provider that fails."""
    n: Positive = 1
    """Which call of it (1-based)."""
    latency_s: float = Field(0.0, ge=0)
    """Virtual seconds the failing call takes."""
    message: str = "provider unavailable"
    """The provider error message."""
    connection: bool = False
    """The call's connection is reset instead: the client raises an OSError, which the
    harness takes as the provider's technical failure (``latency_s`` does not apply)."""


class LatencySpike(_Fault):
    """The ``n``-th call of ``call`` takes ``latency_s`` of virtual time.

    With ``tool``, ``n`` counts the calls of that tool; ``call: tool`` without ``tool``
    counts every tool call of the run. A spiked call that fails takes the spike too.
    """

    kind: Annotated[Literal["latency_spike"], _KIND]
    call: CallKind
    """The kind of call that is slow."""
    n: Positive = 1
    """Which call (1-based; of `tool` when given)."""
    tool: str | None = None
    """With `call: tool`, count the calls of this tool only."""
    latency_s: float = Field(ge=0)
    """Virtual seconds the call takes."""

    _tool_call = field_validator("tool")(_named_tool)


class InvalidDraft(_Fault):
    """Model step ``n`` is replaced by an invalid draft."""

    kind: Annotated[Literal["invalid_draft"], _KIND]
    form: Literal["invalid_json", "schema_invalid", "empty"]
    """The invalid form the model step takes."""
    n: Positive = 1
    """Which model step (1-based)."""


class SemanticFault(_Fault):
    """The ``n``-th SemanticGuard call says UNSUPPORTED or is technically UNAVAILABLE."""

    kind: Annotated[Literal["semantic_guard"], _KIND]
    verdict: Literal["UNSUPPORTED", "UNAVAILABLE"]
    """UNSUPPORTED, or UNAVAILABLE (a technical failure)."""
    n: Positive = 1
    """Which guard call (1-based)."""


class RepairFailed(_Fault):
    """The EvidenceRepair call fails: an error, invalid JSON, or a draft still invalid."""

    kind: Annotated[Literal["repair_failed"], _KIND]
    form: Literal["error", "invalid_json", "still_invalid"] = "still_invalid"
    """How the repair fails."""


class RouterUnavailable(_Fault):
    """The intent router is unavailable."""

    kind: Annotated[Literal["router_unavailable"], _KIND]


class StoreFailure(_Fault):
    """The run store refuses one of the run's own operations (doc §12).

    ``read_session``: the session's history and PreviousTurn cannot be read; ``insert_running``:
    the RUNNING row (with RUN_STARTED) cannot be written; ``complete``: the completion (the
    outcome, the invocations and the trace) cannot be written.
    """

    kind: Annotated[Literal["store_failure"], _KIND]
    operation: Literal["read_session", "insert_running", "complete"]
    """The store operation that fails."""
    message: str = "store unavailable"
    """The store error message."""


class Crash(_Fault):
    """The host process dies at a lifecycle point (nothing after it is written)."""

    kind: Annotated[Literal["crash"], _KIND]
    at: At
    """The lifecycle point the host process dies at."""


Fault = Annotated[
    ClientDisconnect | UserCancel | ServerShutdown | Deadline | BudgetExhausted | NoGainStreak
    | ProtocolViolation | ToolRejection | ToolError | ProviderFault | LatencySpike
    | InvalidDraft | SemanticFault | RepairFailed | RouterUnavailable | StoreFailure | Crash,
    Field(discriminator="kind"),
]

FAULT_KINDS = ("client_disconnect", "user_cancel", "server_shutdown", "deadline",
               "budget_exhausted", "no_gain_streak", "protocol_violation", "tool_rejection",
               "tool_error", "provider_error", "latency_spike", "invalid_draft", "semantic_guard",
               "repair_failed", "router_unavailable", "store_failure", "crash")


def describe(fault: BaseModel) -> str:
    """A one-line description of a fault, for messages and tables."""
    fields = fault.model_dump(exclude_none=True, exclude={"kind", "note"})
    at = fields.pop("at", None)
    parts = [f"{k}={v}" for k, v in fields.items()]
    if at is not None:
        parts.append(At.model_validate(at).label())
    kind = getattr(fault, "kind", type(fault).__name__)
    return f"{kind}({', '.join(parts)})" if parts else str(kind)


def from_start(fault: BaseModel) -> bool:
    """Whether ``fault`` holds from the run's start, as its configuration rather than an event
    of the run: a deadline in seconds, a budget exhausted from the start, a tool not
    authorised or not read-only. A live harness is started with these; it cannot be wrapped."""
    if isinstance(fault, Deadline):
        return fault.at_s is not None
    if isinstance(fault, BudgetExhausted):
        return fault.at is None
    return isinstance(fault, ToolRejection) and fault.reason in ("AUTH", "READ_ONLY")


@dataclass(frozen=True, slots=True)
class StartConfiguration:
    """What the faults holding from a run's start (:func:`from_start`) change of its
    configuration and tools, the one definition of those changes: a ``deadline_s`` (None:
    the configured one), the budgets ``exhausted`` (0 from the start), the tools
    ``unauthorized`` and those ``writable`` (not read-only), and the indices of the faults
    ``applied`` (they fire with the run)."""

    deadline_s: float | None = None
    exhausted: tuple[str, ...] = ()
    unauthorized: frozenset[str] = frozenset()
    writable: frozenset[str] = frozenset()
    applied: tuple[int, ...] = ()

    def authorized(self, current: Iterable[str] | None, tools: Iterable[str]) -> list[str]:
        """The authorised tools (``current``, or every tool when None), in their order, less
        :attr:`unauthorized`."""
        return [t for t in (tools if current is None else current)
                if t not in self.unauthorized]


def start_configuration(faults: Sequence[Any], tools: Iterable[str]) -> StartConfiguration:
    """The configuration changes of ``faults`` for a run with these ``tools``; a READ_ONLY
    rejection of a tool the run does not have changes nothing (and does not fire)."""
    names = set(tools)
    held = [(i, f) for i, f in enumerate(faults) if from_start(f) and not (
        isinstance(f, ToolRejection) and f.reason == "READ_ONLY" and f.tool not in names)]
    deadlines = [f.at_s for _, f in held if isinstance(f, Deadline)]
    rejected = [f for _, f in held if isinstance(f, ToolRejection)]
    return StartConfiguration(
        deadlines[-1] if deadlines else None,
        tuple(f.budget for _, f in held if isinstance(f, BudgetExhausted)),
        frozenset(f.tool for f in rejected if f.reason == "AUTH"),
        frozenset(f.tool for f in rejected if f.reason == "READ_ONLY"), tuple(i for i, _ in held))
