"""The outcome-table cases a scenario may name with ``case:`` (SPEC §4, doc §10)."""

from __future__ import annotations

from harness_lab.outcome_table import OUTCOME_BY_CASE, ExpectedOutcome

__all__ = ["CASES", "ExpectedOutcome"]

CASES = OUTCOME_BY_CASE
"""Each case key of the outcome table and the states the document prescribes for it."""
