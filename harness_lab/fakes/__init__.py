"""Scripted fakes of every port: models, tools, routers, responders, retrievers and guards.

They implement the protocols of :mod:`harness_lab.ports`, exactly as recorded adapters do, so
the harness cannot tell them apart. Each records the requests it received in ``requests`` and
raises :class:`~harness_lab.errors.ScriptExhausted` when asked for more than its script holds.
"""

from harness_lab.fakes.model import (
    CallbackModel,
    EvidenceItem,
    FactItem,
    Script,
    ScriptedModel,
    Step,
    call_tool,
    draft,
    empty_reply,
    fresh_error,
    invalid_json,
    play_step,
    progress,
    provider_error,
    report,
    schema_invalid_draft,
    with_defaults,
)
from harness_lab.fakes.providers import (
    DEFAULT_ANSWER,
    DEFAULT_PASSAGES,
    AnswerStep,
    GuardStep,
    RepairStep,
    RetrievalStep,
    RouteStep,
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    repaired,
)
from harness_lab.fakes.tools import (
    Evidence,
    NoEvidence,
    Oversize,
    ScopeTable,
    ScriptedTool,
    ToolBehaviour,
    ToolFailure,
    Unprojectable,
    json_size,
    scope_key,
)

__all__ = ["DEFAULT_ANSWER", "DEFAULT_PASSAGES", "AnswerStep", "CallbackModel", "Evidence",
           "EvidenceItem", "FactItem", "GuardStep", "NoEvidence", "Oversize", "RepairStep",
           "RetrievalStep", "RouteStep", "ScopeTable", "Script", "ScriptedModel", "ScriptedRepair",
           "ScriptedResponder", "ScriptedRetriever", "ScriptedRouter", "ScriptedSemanticGuard",
           "ScriptedTool", "Step", "ToolBehaviour", "ToolFailure", "Unprojectable", "call_tool",
           "draft", "empty_reply", "fresh_error", "invalid_json", "json_size", "play_step",
           "progress", "provider_error", "repaired", "report", "schema_invalid_draft", "scope_key",
           "with_defaults"]
