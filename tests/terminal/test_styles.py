"""Terminal colours come from the shared palette, so an outcome looks the same everywhere."""

from __future__ import annotations

from harness_lab.report.palette import OUTCOME_COLORS, RUN_STATE_COLORS, VERDICT_COLORS
from harness_lab.terminal.styles import (
    fallback_style,
    release_style,
    state_style,
    verdict_style,
)


def test_a_fallback_release_takes_the_colour_of_its_type_as_in_the_html_report() -> None:
    row = {"release_outcome": "FALLBACK", "fallback_type": "SEMANTIC_UNSUPPORTED",
           "run_state": "SUCCESS"}
    assert release_style(row) == OUTCOME_COLORS["FALLBACK:SEMANTIC_UNSUPPORTED"]
    assert fallback_style("SEMANTIC_UNSUPPORTED") == release_style(row)


def test_a_failed_release_is_coloured_by_its_timeout_or_budget_run_state() -> None:
    timed_out = {"release_outcome": "FAILED", "fallback_type": None, "run_state": "TIMED_OUT"}
    assert release_style(timed_out) == OUTCOME_COLORS["FAILED:TIMED_OUT"]
    plain = {"release_outcome": "FAILED", "fallback_type": None, "run_state": "FAILED"}
    assert release_style(plain) == OUTCOME_COLORS["FAILED"]


def test_states_and_verdicts_use_the_palette_and_nothing_gets_no_colour() -> None:
    assert state_style("TIMED_OUT") == RUN_STATE_COLORS["TIMED_OUT"]
    assert verdict_style("FAILED") == VERDICT_COLORS["FAILED"]
    assert release_style({"release_outcome": None}) is None
    assert fallback_style("-") is None
