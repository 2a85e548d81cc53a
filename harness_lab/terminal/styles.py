"""The terminal's colours for states and verdicts, from the shared palette, so an outcome
looks the same in the terminal and in the HTML report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness_lab.report.palette import MISSING_COLOR, RUN_STATE_COLORS, outcome_color, verdict_color

__all__ = ["fallback_style", "outcome_style", "release_style", "state_style", "verdict_style"]


def _known(color: str) -> str | None:
    return None if color == MISSING_COLOR else color


def outcome_style(value: str) -> str | None:
    """A ReleaseOutcome's colour (or that of an outcome label such as ``FALLBACK:...``)."""
    return _known(outcome_color(value))


def release_style(row: Mapping[str, Any]) -> str | None:
    """A row's ReleaseOutcome coloured as the HTML report colours the run's outcome: a
    FALLBACK by its FallbackType, a FAILED by a TIMED_OUT or BUDGET_EXHAUSTED RunState."""
    return _known(outcome_color(row.get("release_outcome"), row.get("fallback_type"),
                                row.get("run_state")))


def fallback_style(value: str) -> str | None:
    """A FallbackType's colour: that of the FALLBACK of this type."""
    return outcome_style(f"FALLBACK:{value}") if value and value != "-" else None


def state_style(value: str) -> str | None:
    """A RunState's (or stored status's) colour."""
    return RUN_STATE_COLORS.get(value)


def verdict_style(value: str) -> str | None:
    """A verdict's colour (``ok``, ``FAILED``, ``ERROR``)."""
    return _known(verdict_color(value))
