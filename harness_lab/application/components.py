"""The models, tools and guards one harness runs with, bundled."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness_lab.frozen import value_class
from harness_lab.ports import (
    DiagnosisModel,
    EvidenceRepair,
    Responder,
    Retriever,
    Router,
    SemanticGuard,
    Tool,
)

__all__ = ["Components", "tool_map"]


def tool_map(tools: Iterable[Tool] | Mapping[str, Tool]) -> dict[str, Tool]:
    """Tools keyed by name; a duplicate name is an error."""
    if isinstance(tools, Mapping):
        return dict(tools)
    out: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in out:
            raise ValueError(f"two tools are named {tool.name!r}")
        out[tool.name] = tool
    return out


@dataclass(frozen=True, slots=True)
class Components:
    """Everything external a run calls: each implements a protocol of ``harness_lab.ports``.

    Scripted fakes, recorded adapters and live clients are interchangeable here.
    """

    router: Router
    model: DiagnosisModel
    guard: SemanticGuard
    repair: EvidenceRepair
    responder: Responder
    retriever: Retriever
    tools: Mapping[str, Tool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tool_map(self.tools))


value_class(Components)  # see frozen.py
