"""The ProgressSnapshot and the per-step progress protocol (doc §6, §8; SPEC §5.5).

After every tool observation the agent's next reply must carry a progress report. A report is
valid when it matches :class:`ProgressReport`, judges the observation the agent must assess
(a non-empty, non-duplicate READY result), and its facts cite only READY invocations of this
run. Facts of valid reports accumulate in the run's ProgressSnapshot; those are the only
"verified facts" a process-type fallback may publish.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from harness_lab.diagnosis.data import fact_data
from harness_lab.diagnosis.schema import Fact, ProgressReport, refusal, validator_of
from harness_lab.frozen import value_class

__all__ = ["VIOLATION_KINDS", "ProgressSnapshot", "ProgressTracker", "check_report"]


@dataclass(frozen=True, slots=True, init=False)
class ProgressSnapshot:
    """What the agent has verifiably established so far."""

    facts: tuple[Fact, ...] = ()
    missing_info: tuple[str, ...] = ()
    steps: int = 0

    def __init__(self,
                 facts: tuple[Fact, ...] = (), missing_info: tuple[str, ...] = (),
                 steps: int = 0) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "facts", facts)
        object.__setattr__(self, "missing_info", missing_info)
        object.__setattr__(self, "steps", steps)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"facts": [fact_data(f) for f in self.facts],
                "missing_info": list(self.missing_info), "steps": self.steps}


value_class(ProgressSnapshot)  # see frozen.py

_parse_report = validator_of(ProgressReport)


MISSING_REPORT = "MISSING_REPORT"
INVALID_REPORT = "INVALID_REPORT"
UNVERIFIED_CITATION = "UNVERIFIED_CITATION"
MISSING_ASSESSMENT = "MISSING_ASSESSMENT"
VIOLATION_KINDS: tuple[str, ...] = (MISSING_REPORT, INVALID_REPORT, UNVERIFIED_CITATION,
                                    MISSING_ASSESSMENT)
"""The kinds of progress-protocol violation, as the trace names them."""


def check_report(raw: Any, ready: frozenset[str], needs_assessment: bool
                 ) -> tuple[ProgressReport | None, str, str]:
    """Validate one raw progress report.

    Return ``(report, "", "")``, or ``(None, kind, problem)`` for a violation: ``kind`` is one
    of :data:`VIOLATION_KINDS`, ``problem`` says what was wrong.
    """
    if raw is None:
        return None, MISSING_REPORT, "a progress report is required after a tool observation"
    try:
        report = _parse_report(raw)
    except ValidationError as exc:
        return None, INVALID_REPORT, f"progress report invalid {refusal(exc, 'progress')}"
    for fact in report.facts:
        bad = [c for c in fact.citations if c not in ready]
        if bad:
            return None, UNVERIFIED_CITATION, (f"fact {fact.statement!r} cites non-READY "
                                               f"invocation(s) {bad}")
    if needs_assessment and report.assessment is None:
        return None, MISSING_ASSESSMENT, ("the last observation needs an assessment "
                                          "(GAINED or NO_GAIN)")
    return report, "", ""


class ProgressTracker:
    """Accumulates verified facts and the latest missing information of valid reports."""

    __slots__ = ("_facts", "_missing")

    def __init__(self) -> None:
        self._facts: dict[str, Fact] = {}
        self._missing: tuple[str, ...] = ()

    def accept(self, report: ProgressReport) -> None:
        """Fold a valid report into the snapshot (facts dedupe by statement)."""
        for fact in report.facts:
            self._facts.setdefault(fact.statement, fact)
        if report.missing_info:
            self._missing = tuple(report.missing_info)

    def add_facts(self, facts: Iterable[Fact]) -> None:
        """Add already verified facts (from a valid draft's findings)."""
        for fact in facts:
            self._facts.setdefault(fact.statement, fact)

    def snapshot(self, steps: int) -> ProgressSnapshot:
        """The snapshot now, after the agent's ``steps`` model steps."""
        return ProgressSnapshot(tuple(self._facts.values()), self._missing, steps)


def verified(facts: Iterable[Fact], ready: frozenset[str]) -> tuple[Fact, ...]:
    """The facts whose every citation is a READY invocation of this run."""
    return tuple(f for f in facts if all(c in ready for c in f.citations))
