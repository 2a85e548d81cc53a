"""The terminal's colours for states and verdicts, from the shared palette, so an outcome
looks the same in the terminal and in the HTML report."""

from __future__ import annotations

__all__ = ["fallback_style", "outcome_style", "state_style", "verdict_style"]


def outcome_style(value: str) -> str | None:
    """A ReleaseOutcome's colour (or that of an outcome label such as ``FALLBACK:...``)."""
    from harness_lab.report.palette import MISSING_COLOR, outcome_color

    color = outcome_color(value)
    return None if color == MISSING_COLOR else color


def fallback_style(value: str) -> str | None:
    """A FallbackType's colour: that of the FALLBACK of this type."""
    return outcome_style(f"FALLBACK:{value}") if value and value != "-" else None


def state_style(value: str) -> str | None:
    """A RunState's (or stored status's) colour."""
    from harness_lab.report.palette import RUN_STATE_COLORS

    return RUN_STATE_COLORS.get(value)


def verdict_style(value: str) -> str | None:
    """A verdict's colour (``ok``, ``FAILED``, ``ERROR``)."""
    from harness_lab.report.palette import MISSING_COLOR, verdict_color

    color = verdict_color(value)
    return None if color == MISSING_COLOR else color
