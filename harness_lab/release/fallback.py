"""SafeFallback: the public content of every FallbackType, and of a released report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness_lab.diagnosis.schema import DiagnosisDraft, Fact, json_dumper_of
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
        "facts": [f.model_dump(mode="json") for f in facts],
        "missingInfo": list(missing_info),
    }


_CITED = {"evidence", "findings"}
_dump_draft = json_dumper_of(DiagnosisDraft)


def report_content(draft: DiagnosisDraft) -> dict[str, Any]:
    """The public diagnosis report of a draft that passed every guard."""
    cited = _dump_draft(draft, mode="json", include=_CITED)  # one call, not one a reference
    return {
        "contentType": "diagnosis_report",
        "conclusion": draft.conclusion,
        "evidence": cited["evidence"],
        "findings": cited["findings"],
        "recommendations": list(draft.recommendations),
    }
