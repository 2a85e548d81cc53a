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


# Machado, Oliveira & Fernandes (2009): full-severity dichromacy on linear RGB.
CVD_MATRICES: dict[str, tuple[tuple[float, float, float], ...]] = {
    "normal": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}


def _linear(color: str) -> list[float]:
    channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def _lab(color: str, vision: str) -> tuple[float, float, float]:
    """CIELAB (D65) of ``color`` as seen with ``vision``."""
    rgb = [min(max(sum(m * c for m, c in zip(row, _linear(color), strict=True)), 0.0), 1.0)
           for row in CVD_MATRICES[vision]]
    xyz = [sum(m * c for m, c in zip(row, rgb, strict=True)) for row in (
        (0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))]
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
         for t in (xyz[0] / 0.95047, xyz[1], xyz[2] / 1.08883)]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


@pytest.mark.parametrize("vision", list(CVD_MATRICES))
def test_outcome_colours_stay_apart_in_normal_and_colour_blind_vision(vision: str) -> None:
    colors = list(OUTCOME_COLORS.values())
    assert len(set(colors)) == len(colors)
    points = [_lab(c, vision) for c in colors]
    closest = min(math.dist(a, b) for i, a in enumerate(points) for b in points[i + 1:])
    assert closest > 15


def test_the_colour_vision_simulation_tells_apart_what_it_must() -> None:
    # red and green merge for a deuteranope, not for normal vision: the check can fail
    assert math.dist(_lab("#CC6677", "normal"), _lab("#999933", "normal")) > 30
    assert math.dist(_lab("#882255", "deuteranopia"), _lab("#555555", "deuteranopia")) < 5


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
