"""The protocols every model, tool, router, retriever and guard implements, and their data.

Scripted fakes (``harness_lab.fakes``) and recorded adapters implement the same protocols,
so the harness cannot tell them apart. Every reply carries its token usage and, optionally,
its virtual latency in seconds (``None`` lets the run's latency model decide). The requests
and replies are defined in :mod:`harness_lab.messages` (compiled with the run core) and
re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from harness_lab.messages import (
    AgentRequest,
    AnswerReply,
    AnswerRequest,
    CallKind,
    GuardReply,
    GuardRequest,
    ModelReply,
    Observation,
    PreviousTurn,
    RepairRequest,
    RetrievalReply,
    RetrievalRequest,
    RouteReply,
    RouteRequest,
    TokenUsage,
    ToolCallRequest,
    ToolInput,
    ToolOutput,
    Turn,
)

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
