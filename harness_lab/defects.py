"""Known defects that can be seeded into the harness, for testing the testers.

A harness that breaks a lifecycle rule must be caught by the invariant checker, the fault
explorer and the property search. These switches put such bugs in on purpose. They are
**test-only**: set them through ``HarnessConfig(defects=...)`` or a scenario's
``config.defects`` list, never in production configurations. With no defect seeded (the
default) none of these code paths exists.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Defect"]


class Defect(StrEnum):
    """One seeded defect."""

    # RunLifecycle lets a later terminal state override the first (no compare-and-set),
    # and the boundary after a call stops discarding late results.
    LATE_SUCCESS_OVERRIDES_CANCEL = "late_success_overrides_cancel"
    # The tool boundary forgets the SATURATED preflight check.
    EVIDENCE_TOOL_AFTER_SATURATION = "evidence_tool_after_saturation"
    # The SSE session accepts, and the application sends, a second content event.
    SECOND_CONTENT_EVENT = "second_content_event"
    # The application persists published_result for fallbacks too.
    FALLBACK_AS_PREVIOUS_TURN = "fallback_as_previous_turn"
