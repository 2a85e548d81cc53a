"""EvidenceGuard: a conclusion's evidence must cite READY, EVIDENCE_FOUND records (doc §9).

Only READY records may be cited (invariant 3), and a NO_EVIDENCE result can never be promoted
to support a conclusion (invariant 5), so both are checked here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness_lab.diagnosis.schema import DiagnosisDraft
from harness_lab.frozen import value_class
from harness_lab.states import EvidenceStatus
from harness_lab.tools.records import CanonicalInvocation

__all__ = ["EvidenceCheck", "EvidenceGuard"]


@dataclass(frozen=True, slots=True, init=False)
class EvidenceCheck:
    """The guard's finding: valid, or the list of problems."""

    problems: tuple[str, ...]

    def __init__(self, problems: tuple[str, ...]) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "problems", problems)

    @property
    def valid(self) -> bool:
        """True when no problem was found."""
        return not self.problems


value_class(EvidenceCheck)  # see frozen.py


class EvidenceGuard:
    """Checks drafts against the run's canonical records."""

    __slots__ = ("_record",)

    def __init__(self, record: Callable[[str], CanonicalInvocation | None]) -> None:
        self._record = record

    def check_conclusion(self, draft: DiagnosisDraft) -> EvidenceCheck:
        """Full check of a draft with a conclusion: evidence present and all citable."""
        problems: list[str] = []
        if draft.conclusion is None:
            problems.append("the draft has no conclusion")
        if not draft.evidence:
            problems.append("a conclusion needs at least one piece of evidence")
        return EvidenceCheck(tuple(problems + self._cited(draft, need_evidence=True)))

    def check_references(self, draft: DiagnosisDraft) -> EvidenceCheck:
        """The no-conclusion check: every tool reference the draft makes must be READY."""
        return EvidenceCheck(tuple(self._cited(draft, need_evidence=False)))

    def _cited(self, draft: DiagnosisDraft, *, need_evidence: bool) -> list[str]:
        """The problems of every reference ``draft`` makes: its evidence first (which must have
        found some when ``need_evidence``), then its findings' citations."""
        problems: list[str] = []
        for ref in draft.evidence:
            problems.extend(self._problems(ref.invocation_id, need_evidence=need_evidence))
        for fact in draft.findings:
            for cid in fact.citations:
                problems.extend(self._problems(cid, need_evidence=False))
        return problems

    def _problems(self, invocation_id: str, *, need_evidence: bool) -> list[str]:
        rec = self._record(invocation_id)
        if rec is None:
            return [f"{invocation_id}: no invocation of this run"]
        if not rec.citable:
            return [f"{invocation_id}: is {rec.status.value}, only READY may be cited"]
        if need_evidence and rec.evidence_status is EvidenceStatus.NO_EVIDENCE:
            return [f"{invocation_id}: NO_EVIDENCE cannot support a conclusion"]
        return []
