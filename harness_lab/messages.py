"""The requests and replies that cross the ports, and the kinds of call that carry them.

Every one is a frozen dataclass. They live apart from the protocols in
:mod:`harness_lab.ports` (which re-exports them, and is where to import them from) so the
compiled run core builds and reads them natively; the protocols stay interpreted, where
``runtime_checkable`` works.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from harness_lab.frozen import value_class
from harness_lab.states import EvidenceStatus, IntentType, InvocationStatus

__all__ = [
    "AgentRequest",
    "CallKind",
    "AnswerReply",
    "AnswerRequest",
    "GuardReply",
    "GuardRequest",
    "ModelReply",
    "Observation",
    "PreviousTurn",
    "RepairRequest",
    "RetrievalReply",
    "RetrievalRequest",
    "RouteReply",
    "RouteRequest",
    "TokenUsage",
    "ToolCallRequest",
    "ToolInput",
    "ToolOutput",
    "Turn",
]


class CallKind(StrEnum):
    """The kinds of external call a run makes; each is a boundary with virtual latency."""

    ROUTER = "router"
    RESPONDER = "responder"
    RETRIEVER = "retriever"
    MODEL = "model"
    TOOL = "tool"
    REPAIR = "repair"
    GUARD = "guard"


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens one call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0


value_class(TokenUsage)  # see frozen.py


NO_USAGE = TokenUsage()


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier turn of the session, as routing history."""

    run_id: str
    query: str
    intent: IntentType | None
    answer: str | None


value_class(Turn)  # see frozen.py


@dataclass(frozen=True, slots=True)
class PreviousTurn:
    """The last published DIAGNOSIS success of the session (doc §12.2); never a fallback."""

    run_id: str
    query: str
    conclusion: str | None
    published_result: Mapping[str, Any]


value_class(PreviousTurn)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class RouteRequest:
    """What the router sees: the query and bounded history."""

    query: str
    history: tuple[Turn, ...]
    previous_turn: PreviousTurn | None

    def __init__(self,
                 query: str, history: tuple[Turn, ...],
                 previous_turn: PreviousTurn | None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "history", history)
        object.__setattr__(self, "previous_turn", previous_turn)


value_class(RouteRequest)  # see frozen.py


@dataclass(frozen=True, slots=True)
class RouteReply:
    """The router's intent."""

    intent: IntentType
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


value_class(RouteReply)  # see frozen.py


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """A single controlled answer for the SYSTEM_CHAT or KNOWLEDGE_QUERY path."""

    intent: IntentType
    query: str
    history: tuple[Turn, ...]
    passages: tuple[str, ...] = ()


value_class(AnswerRequest)  # see frozen.py


@dataclass(frozen=True, slots=True)
class AnswerReply:
    """The answer text."""

    text: str
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


value_class(AnswerReply)  # see frozen.py


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """One knowledge retrieval."""

    query: str


value_class(RetrievalRequest)  # see frozen.py


@dataclass(frozen=True, slots=True)
class RetrievalReply:
    """Retrieved passages."""

    passages: tuple[str, ...]
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


value_class(RetrievalReply)  # see frozen.py


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool request as the model wrote it."""

    name: str
    scope: Mapping[str, Any]
    call_id: str | None = None


value_class(ToolCallRequest)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class Observation:
    """What the agent is shown of one tool request's outcome."""

    call_id: str | None
    tool: str
    scope: Mapping[str, Any]
    invocation_id: str | None  # None when rejected before any canonical record
    status: InvocationStatus | None
    evidence_status: EvidenceStatus | None
    items: tuple[Mapping[str, Any], ...] = ()
    error: str | None = None
    needs_assessment: bool = False  # the agent must judge GAINED / NO_GAIN in its next report

    def __init__(self,
                 call_id: str | None, tool: str, scope: Mapping[str, Any],
                 invocation_id: str | None, status: InvocationStatus | None,
                 evidence_status: EvidenceStatus | None, items: tuple[Mapping[str, Any], ...] = (),
                 error: str | None = None, needs_assessment: bool = False) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "call_id", call_id)
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "invocation_id", invocation_id)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "evidence_status", evidence_status)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "needs_assessment", needs_assessment)


value_class(Observation)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class AgentRequest:
    """One ReAct step's input to the diagnosis model."""

    run_id: str
    query: str
    step: int
    observations: tuple[Observation, ...]
    tools: tuple[str, ...]
    stop_required: bool = False
    previous_turn: PreviousTurn | None = None
    notice: str | None = None  # harness feedback, e.g. a protocol violation

    def __init__(self,
                 run_id: str, query: str, step: int, observations: tuple[Observation, ...],
                 tools: tuple[str, ...], stop_required: bool = False,
                 previous_turn: PreviousTurn | None = None, notice: str | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "step", step)
        object.__setattr__(self, "observations", observations)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "stop_required", stop_required)
        object.__setattr__(self, "previous_turn", previous_turn)
        object.__setattr__(self, "notice", notice)


value_class(AgentRequest)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class ModelReply:
    """One model response: JSON content (progress and/or draft) and/or one tool request.

    ``payload`` is the already-parsed JSON object when the producer has one (fakes do); the
    harness parses ``content`` only when ``payload`` is absent.
    """

    content: str | None = None
    payload: Mapping[str, Any] | None = None
    tool_call: ToolCallRequest | None = None
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None

    def __init__(self,
                 content: str | None = None, payload: Mapping[str, Any] | None = None,
                 tool_call: ToolCallRequest | None = None, usage: TokenUsage = NO_USAGE,
                 latency_s: float | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "tool_call", tool_call)
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "latency_s", latency_s)


value_class(ModelReply)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class GuardRequest:
    """SemanticGuard input: the conclusion and the READY records it cites."""

    run_id: str
    query: str
    draft: Mapping[str, Any]
    evidence: tuple[Mapping[str, Any], ...]

    def __init__(self,
                 run_id: str, query: str, draft: Mapping[str, Any],
                 evidence: tuple[Mapping[str, Any], ...]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "draft", draft)
        object.__setattr__(self, "evidence", evidence)


value_class(GuardRequest)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class GuardReply:
    """SemanticGuard's verdict: ``True`` for SUPPORTED."""

    supported: bool
    rationale: str = ""
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None

    def __init__(self,
                 supported: bool, rationale: str = "", usage: TokenUsage = NO_USAGE,
                 latency_s: float | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "supported", supported)
        object.__setattr__(self, "rationale", rationale)
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "latency_s", latency_s)


value_class(GuardReply)  # see frozen.py


@dataclass(frozen=True, slots=True)
class RepairRequest:
    """EvidenceRepair input: the draft and what EvidenceGuard found wrong."""

    run_id: str
    query: str
    draft: Mapping[str, Any]
    problems: tuple[str, ...]
    citable: tuple[str, ...]


value_class(RepairRequest)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class ToolInput:
    """An admitted tool invocation as the backend receives it."""

    run_id: str
    invocation_id: str
    tool: str
    scope: Mapping[str, Any]

    def __init__(self,
                 run_id: str, invocation_id: str, tool: str, scope: Mapping[str, Any]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "run_id", run_id)
        object.__setattr__(self, "invocation_id", invocation_id)
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "scope", scope)


value_class(ToolInput)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class ToolOutput:
    """What a tool backend returned; an empty ``items`` is NO_EVIDENCE.

    ``projectable=False`` models a backend answer the projection cannot read.
    """

    items: tuple[Mapping[str, Any], ...]
    size_bytes: int = 0
    latency_s: float | None = None
    projectable: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self,
                 items: tuple[Mapping[str, Any], ...], size_bytes: int = 0,
                 latency_s: float | None = None, projectable: bool = True,
                 meta: Mapping[str, Any] | None = None) -> None:
        """Set every field (a native setter each, once compiled); no ``meta`` is ``{}``."""
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "size_bytes", size_bytes)
        object.__setattr__(self, "latency_s", latency_s)
        object.__setattr__(self, "projectable", projectable)
        object.__setattr__(self, "meta", {} if meta is None else meta)


value_class(ToolOutput)  # see frozen.py
