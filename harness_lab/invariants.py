"""The lifecycle invariants of doc §16 (and the SSE and persistence rules), checked on records.

Each check reads only a :class:`RunRecord`; :func:`check` returns every violation found, so a
test, a scenario run or the fault explorer can say exactly which rule broke. The rules
themselves live in :mod:`harness_lab.invariant_rules`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness_lab.invariant_rules import INVARIANTS, TIMES, breaches
from harness_lab.record import RunRecord

__all__ = ["INVARIANTS", "TIMES", "Violation", "check", "invariant_names", "time_contradictions"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant of one run."""

    invariant: str
    run_id: str
    message: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.message}"


def invariant_names() -> list[str]:
    """Every invariant's name, in doc §16 order."""
    return list(INVARIANTS)


def check(record: RunRecord) -> list[Violation]:
    """Every violation of every invariant on one run."""
    return [Violation(name, record.run_id, msg) for name, msg in breaches(record)]


def time_contradictions(record: RunRecord) -> list[str]:
    """What the :data:`TIMES` invariant finds wrong with one run's times (empty when they
    agree): what a plot or an answer checks before it draws or quotes them."""
    return list(INVARIANTS[TIMES](record))
