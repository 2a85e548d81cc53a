"""The one vocabulary of outcome names and colours shared by every view of runs.

The terminal table, the HTML report, ``_repr_html_`` and the plots all name and colour an
outcome through this module, so a FALLBACK:SEMANTIC_UNSUPPORTED is the same purple
everywhere. Colours are hex strings (``"#rrggbb"``) usable from matplotlib and CSS alike;
the schemes and why: docs/plots.md, "Colours and names". Names are kept stable: entries are
only ever added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from harness_lab.messages import CallKind
from harness_lab.report.cells import is_missing
from harness_lab.states import FallbackType, ReleaseOutcome, RunState, TracePhase

__all__ = ["CALL_KIND_COLORS", "EVENT_COLORS", "MISSING_COLOR", "NO_OUTCOME", "OUTCOME_CODES",
           "OUTCOME_COLORS", "OUTCOME_LABELS", "PHASE_COLORS", "RUN_STATE_COLORS",
           "VERDICT_BACKGROUNDS", "VERDICT_COLORS", "VERDICTS", "call_kind_color", "outcome_code",
           "outcome_color", "outcome_label", "text_color", "verdict_color"]

_FALLBACK = ReleaseOutcome.FALLBACK.value
_FAILED = ReleaseOutcome.FAILED.value

NO_OUTCOME: Final = "(none)"
"""The label of a run without a ReleaseOutcome (one that crashed before releasing)."""

MISSING_COLOR: Final = "#BBBBBB"
"""The colour of anything this module has no colour for (a missing or unknown value)."""

_FALLBACK_COLORS: Final[dict[FallbackType, str]] = {
    FallbackType.MISSING_REQUIRED_CONTEXT: "#DDCC77",  # sand
    FallbackType.INSUFFICIENT_EVIDENCE: "#88CCEE",  # cyan
    FallbackType.EVIDENCE_VALIDATION_FAILED: "#44AA99",  # teal
    FallbackType.SEMANTIC_UNSUPPORTED: "#AA4499",  # purple
    FallbackType.SEMANTIC_UNAVAILABLE: "#999933",  # olive
}

OUTCOME_COLORS: Final[dict[str, str]] = {
    ReleaseOutcome.SUCCESS.value: "#117733",  # green
    **{f"{_FALLBACK}:{f.value}": color for f, color in _FALLBACK_COLORS.items()},
    _FALLBACK: "#DDDDDD",  # pale grey: a FALLBACK without a FallbackType
    _FAILED: "#882255",  # wine
    f"{_FAILED}:{RunState.TIMED_OUT.value}": "#CC6677",  # rose
    f"{_FAILED}:{RunState.BUDGET_EXHAUSTED.value}": "#332288",  # indigo
    ReleaseOutcome.CANCELLED.value: "#222222",  # near black
}
"""Each outcome label's colour, in the lifecycle order of :data:`OUTCOME_LABELS`."""

OUTCOME_LABELS: Final[tuple[str, ...]] = tuple(OUTCOME_COLORS)
"""Every outcome label :func:`outcome_label` gives (but :data:`NO_OUTCOME`), in order:
SUCCESS, each ``FALLBACK:<FallbackType>``, an untyped FALLBACK, FAILED, FAILED:TIMED_OUT,
FAILED:BUDGET_EXHAUSTED, CANCELLED."""

OUTCOME_CODES: Final[dict[str, str]] = {
    ReleaseOutcome.SUCCESS.value: "OK",
    f"{_FALLBACK}:{FallbackType.MISSING_REQUIRED_CONTEXT.value}": "MC",
    f"{_FALLBACK}:{FallbackType.INSUFFICIENT_EVIDENCE.value}": "IE",
    f"{_FALLBACK}:{FallbackType.EVIDENCE_VALIDATION_FAILED.value}": "EV",
    f"{_FALLBACK}:{FallbackType.SEMANTIC_UNSUPPORTED.value}": "SU",
    f"{_FALLBACK}:{FallbackType.SEMANTIC_UNAVAILABLE.value}": "SN",
    _FALLBACK: "FB",
    _FAILED: "F",
    f"{_FAILED}:{RunState.TIMED_OUT.value}": "TO",
    f"{_FAILED}:{RunState.BUDGET_EXHAUSTED.value}": "BE",
    ReleaseOutcome.CANCELLED.value: "C",
    NO_OUTCOME: "-",
}
"""A code of one or two letters per outcome label, for cells too small for the label."""

RUN_STATE_COLORS: Final[dict[str, str]] = {
    RunState.RUNNING.value: "#DDDDDD",
    RunState.SUCCESS.value: OUTCOME_COLORS[ReleaseOutcome.SUCCESS.value],
    RunState.FAILED.value: OUTCOME_COLORS[_FAILED],
    RunState.CANCELLED.value: OUTCOME_COLORS[ReleaseOutcome.CANCELLED.value],
    RunState.TIMED_OUT.value: OUTCOME_COLORS[f"{_FAILED}:{RunState.TIMED_OUT.value}"],
    RunState.BUDGET_EXHAUSTED.value:
        OUTCOME_COLORS[f"{_FAILED}:{RunState.BUDGET_EXHAUSTED.value}"],
}
"""Each RunState's colour, the same as the outcome it usually ends in."""

CALL_KIND_COLORS: Final[dict[str, str]] = {
    CallKind.ROUTER.value: "#56B4E9",  # sky blue
    CallKind.RESPONDER.value: "#009E73",  # bluish green
    CallKind.RETRIEVER.value: "#F0E442",  # yellow
    CallKind.MODEL.value: "#0072B2",  # blue
    CallKind.TOOL.value: "#E69F00",  # orange
    CallKind.REPAIR.value: "#D55E00",  # vermillion
    CallKind.GUARD.value: "#CC79A7",  # reddish purple
}
"""Each external call kind's colour (timeline spans), from the Okabe-Ito palette."""

PHASE_COLORS: Final[dict[str, str]] = {
    TracePhase.RUN.value: "#BBBBBB",
    TracePhase.ROUTING.value: CALL_KIND_COLORS[CallKind.ROUTER.value],
    TracePhase.RESPONSE.value: CALL_KIND_COLORS[CallKind.RESPONDER.value],
    TracePhase.AGENT.value: CALL_KIND_COLORS[CallKind.MODEL.value],
    TracePhase.TOOL.value: CALL_KIND_COLORS[CallKind.TOOL.value],
    TracePhase.COLLECTION.value: "#999999",
    TracePhase.GUARD.value: CALL_KIND_COLORS[CallKind.GUARD.value],
    TracePhase.RELEASE.value: "#000000",
}
"""Each TracePhase's colour, that of the call kind working in it."""

EVENT_COLORS: Final[dict[str, str]] = {
    "client_disconnect": "#000000",
    "user_cancel": "#CC3311",
    "deadline": "#CC3311",
    "discarded": "#555555",
    "budget_exhausted": OUTCOME_COLORS[f"{_FAILED}:{RunState.BUDGET_EXHAUSTED.value}"],
    "sse": "#0077BB",
    "lost_termination": "#EE7733",
}
"""Colours of the instant markers of a run: disconnect, cancel, deadline, SSE events..."""

VERDICTS: Final[tuple[str, ...]] = ("ok", "FAILED", "ERROR")
"""A scenario's verdicts: its expectations held, did not hold, or the run errored."""

VERDICT_COLORS: Final[dict[str, str]] = {"ok": "#228833", "FAILED": "#CC3311",
                                         "ERROR": "#EE7733"}
"""Each verdict's foreground colour (text, badges, bars)."""

VERDICT_BACKGROUNDS: Final[dict[str, str]] = {"ok": "#E6F2E6", "FAILED": "#FFDDD6",
                                              "ERROR": "#FFEBD9"}
"""Each verdict's pale background (table rows), dark text stays readable on it."""


def _value(member: Any) -> str | None:
    """A member's value, a string as is, None for anything missing (None, NA, NaN)."""
    value = getattr(member, "value", member)
    if isinstance(value, str):
        return value or None
    return None if is_missing(value) else str(value)


def outcome_label(release_outcome: Any, fallback_type: Any = None,
                  run_state: Any = None) -> str:
    """The outcome label of a run, one of :data:`OUTCOME_LABELS` (or :data:`NO_OUTCOME`).

    A FALLBACK with a FallbackType is ``FALLBACK:<FallbackType>``; a FAILED run whose
    RunState is TIMED_OUT or BUDGET_EXHAUSTED is ``FAILED:<RunState>`` when ``run_state`` is
    given; otherwise the ReleaseOutcome's value. Arguments may be enum members, strings, or
    missing values (None, NA), as they come from records or frames.
    """
    outcome = _value(release_outcome)
    if outcome is None:
        return NO_OUTCOME
    if outcome == _FALLBACK:
        kind = _value(fallback_type)
        return outcome if kind is None else f"{outcome}:{kind}"
    if outcome == _FAILED:
        state = _value(run_state)
        if state in (RunState.TIMED_OUT.value, RunState.BUDGET_EXHAUSTED.value):
            return f"{outcome}:{state}"
    return outcome


def outcome_code(label: str) -> str:
    """The short code of an outcome label (:data:`OUTCOME_CODES`); other text's initials.

    ``outcome_code("FAILED:TIMED_OUT")`` is ``TO``; an unknown ``CRASH`` is ``C``... so a
    caller mixing other categories in checks its codes stay distinct.
    """
    if label in OUTCOME_CODES:
        return OUTCOME_CODES[label]
    words = [w for w in label.split(":")[-1].replace("-", "_").split("_") if w]
    return "".join(w[0] for w in words).upper() or "?"


def outcome_color(release_outcome: Any, fallback_type: Any = None,
                  run_state: Any = None) -> str:
    """The colour of :func:`outcome_label` of the same arguments; a label works too.

    ``outcome_color("FALLBACK:SEMANTIC_UNSUPPORTED")`` is the colour of that label;
    anything unknown or missing gets :data:`MISSING_COLOR`.
    """
    label = _value(release_outcome)
    if label not in OUTCOME_COLORS or fallback_type is not None or run_state is not None:
        label = outcome_label(release_outcome, fallback_type, run_state)
    return OUTCOME_COLORS.get(label, MISSING_COLOR)


def verdict_color(verdict: str, *, background: bool = False) -> str:
    """A verdict's colour (``ok``, ``FAILED``/``failed``, ``ERROR``/``error``).

    ``background=True`` gives its pale row background instead; an unknown verdict gets
    :data:`MISSING_COLOR` (or white as a background).
    """
    key = "ok" if verdict.lower() == "ok" else verdict.upper()
    table: Mapping[str, str] = VERDICT_BACKGROUNDS if background else VERDICT_COLORS
    return table.get(key, "#FFFFFF" if background else MISSING_COLOR)


def call_kind_color(kind: Any) -> str:
    """The colour of a call kind (a :class:`~harness_lab.messages.CallKind` or its value)."""
    return CALL_KIND_COLORS.get(str(_value(kind)), MISSING_COLOR)


def text_color(background: str) -> str:
    """``#000000`` or ``#FFFFFF``, whichever reads better on ``background`` (``#rrggbb``).

    Picks by the WCAG relative luminance of the background, so labels drawn on a coloured
    bar or badge keep their contrast.
    """
    channels = [int(background[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "#000000" if luminance > 0.179 else "#FFFFFF"
