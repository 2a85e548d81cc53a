"""Harness configuration: budgets, deadline, thresholds and the named policy settings.

The lifecycle document is silent on a few cases; each decision the toolkit takes there is a
named setting here (SPEC §5), so a user can switch it and compare outcomes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from harness_lab.core.budget import BudgetLimits
from harness_lab.defects import Defect

__all__ = ["DeadlineDetection", "HarnessConfig", "Policy", "UserCancelNotice"]


class UserCancelNotice(StrEnum):
    """What a still-connected client receives when the user cancels (SPEC §5.2)."""

    FAILURE = "failure"  # a ``failure`` event with code CANCELLED, then the stream closes; no done
    SILENT = "silent"  # the stream closes with no further event


class DeadlineDetection(StrEnum):
    """How a passed deadline becomes the run's termination (SPEC §5.7)."""

    BOUNDARY = "boundary"  # the next check_active finds it; a cancel before that boundary wins
    INSTANT = "instant"  # it fires at its own instant; a later cancel loses to it


@dataclass(frozen=True, slots=True)
class Policy:
    """Decisions where the lifecycle document is silent (SPEC §5), each switchable.

    * ``timeout_progress_fallback`` (§5.1): after the deadline, may a safe ProgressSnapshot
      still be released as an INSUFFICIENT_EVIDENCE fallback? Default ``False``: after the
      deadline no boundary passes, and release is a boundary, so the run is TIMED_OUT / FAILED.
    * ``user_cancel_notice`` (§5.2): what a connected client gets on a user cancel.
    * ``require_progress_reports`` (§5.5): every agent step after a tool observation must carry
      a progress report; a missing one counts as a progress-protocol violation.
    * ``deadline_detection`` (§5.7): ``boundary`` (default) makes the deadline the termination
      the next ``check_active`` finds (doc §3.2), so a client disconnect or user cancel that
      arrives after the deadline instant but before that boundary ends the run CANCELLED (doc
      §3.1: the first terminal transition wins); ``instant`` fires the deadline at its own
      instant (the run is TIMED_OUT from then, the call in flight still awaited and its
      result discarded), so such a cancel loses to TIMED_OUT.
    """

    timeout_progress_fallback: bool = False
    user_cancel_notice: UserCancelNotice = UserCancelNotice.FAILURE
    require_progress_reports: bool = True
    deadline_detection: DeadlineDetection = DeadlineDetection.BOUNDARY

    def __post_init__(self) -> None:
        # the enums' text values are accepted too (``with_(policy={...})``); a wrong one is a
        # ValueError naming the accepted values
        object.__setattr__(self, "user_cancel_notice", UserCancelNotice(self.user_cancel_notice))
        object.__setattr__(self, "deadline_detection",
                           DeadlineDetection(self.deadline_detection))


@dataclass(frozen=True, slots=True)
class HarnessConfig:
    """Everything a run is configured with; frozen, cheap to share between runs."""

    budget: BudgetLimits = field(
        default_factory=lambda: BudgetLimits(model_calls=16, tool_calls=8, tokens=64_000,
                                             bytes=1_000_000)
    )
    deadline_s: float = 60.0
    no_gain_threshold: int = 3
    protocol_violation_threshold: int = 3
    history_limit: int = 6
    projection_max_items: int = 50
    projection_max_bytes: int = 65_536
    authorized_tools: frozenset[str] | None = None  # None: every registered tool
    policy: Policy = field(default_factory=Policy)
    defects: frozenset[Defect] = frozenset()  # test-only seeded bugs (harness_lab.defects)

    def __post_init__(self) -> None:
        # the rules a scenario file's config block states too (its JSON Schema, for editors)
        if not (math.isfinite(self.deadline_s) and self.deadline_s > 0):
            raise ValueError(f"HarnessConfig: deadline_s must be a finite number of seconds "
                             f"> 0, got {self.deadline_s!r}")
        for name, least in (("no_gain_threshold", 1), ("protocol_violation_threshold", 1),
                            ("history_limit", 0), ("projection_max_items", 1),
                            ("projection_max_bytes", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"HarnessConfig: {name} must be a whole number >= {least}, "
                                 f"got {value!r}")
        for kind in ("model_calls", "tool_calls", "tokens", "bytes"):
            limit = getattr(self.budget, kind)
            if limit is not None and (isinstance(limit, bool) or limit < 0):
                raise ValueError(f"HarnessConfig: budget.{kind} must be a whole number >= 0 "
                                 f"or None (unlimited), got {limit!r}")

    def with_(self, **changes: Any) -> HarnessConfig:
        """A copy with ``changes`` applied (``policy`` and ``budget`` take mappings too)."""
        if isinstance(changes.get("policy"), dict):
            changes["policy"] = replace(self.policy, **changes["policy"])
        if isinstance(changes.get("budget"), dict):
            changes["budget"] = replace(self.budget, **changes["budget"])
        return replace(self, **changes)
