"""The shared outcome vocabulary: labels, colours distinct and colour-blind safe, contrast."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness_lab.messages import CallKind
from harness_lab.report.palette import (
    CALL_KIND_COLORS,
    MISSING_COLOR,
    NO_OUTCOME,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    PHASE_COLORS,
    VERDICT_COLORS,
    call_kind_color,
    outcome_color,
    outcome_label,
    text_color,
    verdict_color,
)
from harness_lab.states import FallbackType, ReleaseOutcome, RunState, TracePhase


def test_every_fallback_type_and_terminal_failure_has_its_own_label() -> None:
    assert OUTCOME_LABELS == (
        "SUCCESS",
        "FALLBACK:MISSING_REQUIRED_CONTEXT", "FALLBACK:INSUFFICIENT_EVIDENCE",
        "FALLBACK:EVIDENCE_VALIDATION_FAILED", "FALLBACK:SEMANTIC_UNSUPPORTED",
        "FALLBACK:SEMANTIC_UNAVAILABLE", "FALLBACK",
        "FAILED", "FAILED:TIMED_OUT", "FAILED:BUDGET_EXHAUSTED", "CANCELLED",
    )
    assert {f"FALLBACK:{f.value}" for f in FallbackType} <= set(OUTCOME_LABELS)


def test_outcome_labels_read_members_strings_and_missing_values_alike() -> None:
    assert outcome_label(ReleaseOutcome.FALLBACK, FallbackType.SEMANTIC_UNSUPPORTED) == (
        "FALLBACK:SEMANTIC_UNSUPPORTED")
    assert outcome_label("FALLBACK", pd.NA) == "FALLBACK"
    assert outcome_label("FAILED", None, RunState.TIMED_OUT) == "FAILED:TIMED_OUT"
    assert outcome_label("FAILED", None, "BUDGET_EXHAUSTED") == "FAILED:BUDGET_EXHAUSTED"
    assert outcome_label("FAILED", None, "FAILED") == "FAILED"
    assert outcome_label("FAILED") == "FAILED"
    assert outcome_label("CANCELLED", None, "CANCELLED") == "CANCELLED"
    assert outcome_label(None) == NO_OUTCOME
    assert outcome_label(float("nan")) == NO_OUTCOME


def test_an_outcome_colour_is_found_from_its_parts_or_its_label() -> None:
    assert outcome_color("FALLBACK", "SEMANTIC_UNSUPPORTED") == "#AA4499"
    assert outcome_color("FALLBACK:SEMANTIC_UNSUPPORTED") == "#AA4499"
    assert outcome_color("FAILED", None, "TIMED_OUT") == "#CC6677"
    assert outcome_color("no such outcome") == MISSING_COLOR
    assert outcome_color(None) == MISSING_COLOR


def _rgb(color: str) -> tuple[float, float, float]:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return float(r), float(g), float(b)


def _deuteranope(color: str) -> tuple[float, float, float]:
    """Brettel/Vienot-style simulation of deuteranopia on sRGB values (a rough linear map)."""
    r, g, b = _rgb(color)
    return (0.625 * r + 0.375 * g, 0.7 * r + 0.3 * g, 0.3 * g + 0.7 * b)


@pytest.mark.parametrize("view", [_rgb, _deuteranope], ids=["normal", "deuteranopia"])
def test_outcome_colours_stay_apart_in_normal_and_red_green_blind_vision(view: object) -> None:
    colors = list(OUTCOME_COLORS.values())
    assert len(set(colors)) == len(colors)
    points = [view(c) for c in colors]  # type: ignore[operator]
    closest = min(math.dist(a, b) for i, a in enumerate(points) for b in points[i + 1:])
    assert closest > 20


def test_every_call_kind_and_phase_has_a_distinct_colour() -> None:
    assert set(CALL_KIND_COLORS) == {k.value for k in CallKind}
    assert len(set(CALL_KIND_COLORS.values())) == len(CallKind)
    assert set(PHASE_COLORS) == {p.value for p in TracePhase}
    assert call_kind_color(CallKind.TOOL) == CALL_KIND_COLORS["tool"]
    assert call_kind_color("nothing") == MISSING_COLOR


def test_verdict_colours_accept_either_case_and_have_backgrounds() -> None:
    assert verdict_color("failed") == verdict_color("FAILED") == VERDICT_COLORS["FAILED"]
    assert verdict_color("ok", background=True) != verdict_color("ok")
    assert len(set(VERDICT_COLORS.values())) == 3
    assert verdict_color("maybe", background=True) == "#FFFFFF"


def test_text_colour_is_dark_on_pale_and_light_on_dark_backgrounds() -> None:
    assert text_color("#DDDDDD") == "#000000"
    assert text_color("#332288") == "#FFFFFF"
    assert text_color("#FFFFFF") == "#000000"
