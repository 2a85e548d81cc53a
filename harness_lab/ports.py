"""The protocols every model, tool, router, retriever and guard implements, and their data.

Scripted fakes (``harness_lab.fakes``) and recorded adapters implement the same protocols,
so the harness cannot tell them apart. Every reply carries its token usage and, optionally,
its virtual latency in seconds (``None`` lets the run's latency model decide).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from harness_lab.frozen import quick_init
from harness_lab.states import EvidenceStatus, IntentType, InvocationStatus

__all__ = [
    "AgentRequest",
    "AnswerReply",
    "AnswerRequest",
    "CallKind",
    "DiagnosisModel",
    "EvidenceRepair",
    "GuardReply",
    "GuardRequest",
    "ModelReply",
    "Observation",
    "PreviousTurn",
    "Responder",
    "Retriever",
    "RetrievalReply",
    "RetrievalRequest",
    "RepairRequest",
    "RouteReply",
    "RouteRequest",
    "Router",
    "SemanticGuard",
    "TokenUsage",
    "Tool",
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


NO_USAGE = TokenUsage()


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier turn of the session, as routing history."""

    run_id: str
    query: str
    intent: IntentType | None
    answer: str | None


@dataclass(frozen=True, slots=True)
class PreviousTurn:
    """The last published DIAGNOSIS success of the session (doc §12.2); never a fallback."""

    run_id: str
    query: str
    conclusion: str | None
    published_result: Mapping[str, Any]


@quick_init
@dataclass(frozen=True, slots=True)
class RouteRequest:
    """What the router sees: the query and bounded history."""

    query: str
    history: tuple[Turn, ...]
    previous_turn: PreviousTurn | None


@quick_init
@dataclass(frozen=True, slots=True)
class RouteReply:
    """The router's intent."""

    intent: IntentType
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """A single controlled answer for the SYSTEM_CHAT or KNOWLEDGE_QUERY path."""

    intent: IntentType
    query: str
    history: tuple[Turn, ...]
    passages: tuple[str, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class AnswerReply:
    """The answer text."""

    text: str
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """One knowledge retrieval."""

    query: str


@dataclass(frozen=True, slots=True)
class RetrievalReply:
    """Retrieved passages."""

    passages: tuple[str, ...]
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool request as the model wrote it."""

    name: str
    scope: Mapping[str, Any]
    call_id: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
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


@quick_init
@dataclass(frozen=True, slots=True)
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


@quick_init
@dataclass(frozen=True, slots=True)
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


@quick_init
@dataclass(frozen=True, slots=True)
class GuardRequest:
    """SemanticGuard input: the conclusion and the READY records it cites."""

    run_id: str
    query: str
    draft: Mapping[str, Any]
    evidence: tuple[Mapping[str, Any], ...]


@quick_init
@dataclass(frozen=True, slots=True)
class GuardReply:
    """SemanticGuard's verdict: ``True`` for SUPPORTED."""

    supported: bool
    rationale: str = ""
    usage: TokenUsage = NO_USAGE
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class RepairRequest:
    """EvidenceRepair input: the draft and what EvidenceGuard found wrong."""

    run_id: str
    query: str
    draft: Mapping[str, Any]
    problems: tuple[str, ...]
    citable: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class ToolInput:
    """An admitted tool invocation as the backend receives it."""

    run_id: str
    invocation_id: str
    tool: str
    scope: Mapping[str, Any]


@quick_init
@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool backend returned; an empty ``items`` is NO_EVIDENCE.

    ``projectable=False`` models a backend answer the projection cannot read.
    """

    items: tuple[Mapping[str, Any], ...]
    size_bytes: int = 0
    latency_s: float | None = None
    projectable: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)


class Router(Protocol):
    """Chooses the intent of a query."""

    def route(self, request: RouteRequest) -> RouteReply:
        """Return the intent, or raise ProviderError."""
        ...


class Responder(Protocol):
    """Answers SYSTEM_CHAT and KNOWLEDGE_QUERY turns in one controlled model call."""

    def answer(self, request: AnswerRequest) -> AnswerReply:
        """Return the answer, or raise ProviderError."""
        ...


class Retriever(Protocol):
    """The knowledge path's single retrieval."""

    def retrieve(self, request: RetrievalRequest) -> RetrievalReply:
        """Return passages, or raise ProviderError."""
        ...


class DiagnosisModel(Protocol):
    """The ReAct diagnosis agent's model."""

    def step(self, request: AgentRequest) -> ModelReply:
        """Return one step, or raise ProviderError."""
        ...


class EvidenceRepair(Protocol):
    """Rewrites a draft's evidence once after EvidenceGuard found it invalid."""

    def repair(self, request: RepairRequest) -> ModelReply:
        """Return a reply whose payload or content is the repaired draft."""
        ...


class SemanticGuard(Protocol):
    """Judges whether the cited evidence supports the conclusion."""

    def judge(self, request: GuardRequest) -> GuardReply:
        """Return the verdict, or raise ProviderError when unavailable."""
        ...


@runtime_checkable
class Tool(Protocol):
    """A read-only diagnosis tool behind the tool boundary."""

    name: str
    read_only: bool
    evidence: bool

    def validate(self, scope: Mapping[str, Any]) -> str | None:
        """Return why ``scope`` is not a valid request for this tool, or None."""
        ...

    def invoke(self, request: ToolInput) -> ToolOutput:
        """Execute, or raise ToolExecutionError."""
        ...

