"""Checks of the numbers a fake is given: refused where they are given, never mid-run.

A latency is a finite number of seconds, not negative; a byte size or a token count is an
integer from 0 to the largest the run store keeps (signed 64 bits). ``nan`` would make every
comparison false (a run that never ends, or ends at once), ``inf`` a duration the record cannot
hold, and a negative size would be byte usage running backwards.
"""

from __future__ import annotations

import math
from typing import Any

from harness_lab.bounds import INT_MAX
from harness_lab.messages import TokenUsage

__all__ = ["check_count", "check_reply", "check_seconds", "check_usage"]


def check_seconds(owner: str, name: str, value: float | None) -> float | None:
    """``value`` when it is None or a finite number of seconds >= 0; else ValueError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{owner}: {name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{owner}: {name} must be a finite number of seconds >= 0, "
                         f"got {value!r}")
    return value


def check_count(owner: str, name: str, value: int | None) -> int | None:
    """``value`` when it is None or an integer from 0 to :data:`INT_MAX`; else ValueError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{owner}: {name} must be an integer, got {value!r}")
    if not 0 <= value <= INT_MAX:
        raise ValueError(f"{owner}: {name} must be from 0 to {INT_MAX} (what the run store "
                         f"keeps), got {value}")
    return value


def check_usage(owner: str, name: str, usage: TokenUsage | None) -> TokenUsage | None:
    """``usage`` when each of its token counts passes :func:`check_count`; else ValueError."""
    if usage is not None:
        check_count(owner, f"{name}.input_tokens", usage.input_tokens)
        check_count(owner, f"{name}.output_tokens", usage.output_tokens)
    return usage


def check_reply(owner: str, step: Any) -> Any:
    """``step``, after checking the latency and usage a scripted reply carries (if any)."""
    latency = getattr(step, "latency_s", None)
    if not isinstance(step, BaseException) and not callable(step):
        check_seconds(owner, "latency_s", latency)
        usage = getattr(step, "usage", None)
        if isinstance(usage, TokenUsage):
            check_usage(owner, "usage", usage)
        size = getattr(step, "size_bytes", None)
        if size is not None:
            check_count(owner, "size_bytes", size)
    elif isinstance(step, BaseException) and isinstance(latency, int | float):
        check_seconds(owner, "latency_s", latency)
    return step
