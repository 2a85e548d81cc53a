"""The JSON data of a draft and its facts, written out for the run core.

A run passes its draft to the semantic guard (and to a repair) and publishes its cited parts
in the report; pydantic's ``model_dump(mode="json")`` gives that data, at several times the
cost of reading the few fields a draft has. These functions read them directly and give the
same data: the same keys in the same order, arrays as lists. A property test holds them
equal to ``model_dump(mode="json")`` for any valid draft, and to the schemas' field lists.
"""

from __future__ import annotations

from typing import Any

from harness_lab.diagnosis.schema import DiagnosisDraft, EvidenceRef, Fact

__all__ = ["draft_data", "evidence_data", "fact_data"]


def fact_data(fact: Fact) -> dict[str, Any]:
    """``fact.model_dump(mode="json")``."""
    return {"statement": fact.statement, "citations": list(fact.citations)}


def evidence_data(ref: EvidenceRef) -> dict[str, Any]:
    """``ref.model_dump(mode="json")``."""
    return {"invocation_id": ref.invocation_id, "claim": ref.claim}


def draft_data(draft: DiagnosisDraft) -> dict[str, Any]:
    """``draft.model_dump(mode="json")``."""
    return {"conclusion": draft.conclusion,
            "evidence": [evidence_data(e) for e in draft.evidence],
            "findings": [fact_data(f) for f in draft.findings],
            "missing_info": list(draft.missing_info),
            "recommendations": list(draft.recommendations)}
