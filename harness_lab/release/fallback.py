"""SafeFallback: the public content of every FallbackType, and of a released report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness_lab.diagnosis.data import evidence_data, fact_data
from harness_lab.diagnosis.schema import DiagnosisDraft, Fact
from harness_lab.states import FallbackType

__all__ = ["FALLBACK_MESSAGES", "fallback_content", "report_content"]

FALLBACK_MESSAGES: dict[FallbackType, str] = {
    FallbackType.MISSING_REQUIRED_CONTEXT:
        "I need more context before I can diagnose this; please provide the details listed.",
    FallbackType.INSUFFICIENT_EVIDENCE:
        "The checks so far did not establish a cause. These are the verified findings.",
    FallbackType.EVIDENCE_VALIDATION_FAILED:
        "A conclusion was drafted but its evidence could not be validated, so it is withheld.",
    FallbackType.SEMANTIC_UNSUPPORTED:
        "A conclusion was drafted but the evidence does not support it, so it is withheld.",
    FallbackType.SEMANTIC_UNAVAILABLE:
        "A conclusion was drafted but could not be safety-checked, so it is withheld.",
}


def fallback_content(kind: FallbackType, facts: Sequence[Fact] = (),
                     missing_info: Sequence[str] = ()) -> dict[str, Any]:
    """The safe content of a fallback: never a conclusion, only verified facts."""
    return {
        "contentType": "fallback",
        "fallbackType": kind.value,
        "message": FALLBACK_MESSAGES[kind],
        "facts": [fact_data(f) for f in facts],
        "missingInfo": list(missing_info),
    }


def report_content(draft: DiagnosisDraft) -> dict[str, Any]:
    """The public diagnosis report of a draft that passed every guard."""
    return {
        "contentType": "diagnosis_report",
        "conclusion": draft.conclusion,
        "evidence": [evidence_data(e) for e in draft.evidence],
        "findings": [fact_data(f) for f in draft.findings],
        "recommendations": list(draft.recommendations),
    }
