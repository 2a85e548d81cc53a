"""The harness configuration refuses what no run could honour, where it is given."""

from __future__ import annotations

import re
from typing import Any

import pytest

from harness_lab.config import HarnessConfig


@pytest.mark.parametrize(("given", "says"), [
    ({"deadline_s": -1.0}, "deadline_s must be a finite number of seconds > 0, got -1.0"),
    ({"deadline_s": 0}, "deadline_s must be a finite number of seconds > 0, got 0"),
    ({"deadline_s": float("nan")}, "deadline_s must be a finite number of seconds > 0, got nan"),
    ({"deadline_s": float("inf")}, "deadline_s must be a finite number of seconds > 0, got inf"),
    ({"no_gain_threshold": 0}, "no_gain_threshold must be a whole number >= 1, got 0"),
    ({"protocol_violation_threshold": 2.5},
     "protocol_violation_threshold must be a whole number >= 1, got 2.5"),
    ({"history_limit": -1}, "history_limit must be a whole number >= 0, got -1"),
    ({"projection_max_items": True}, "projection_max_items must be a whole number >= 1, got True"),
    ({"projection_max_bytes": 0}, "projection_max_bytes must be a whole number >= 1, got 0"),
    ({"budget": {"tokens": -5}},
     "budget.tokens must be a whole number >= 0 or None (unlimited), got -5"),
    ({"budget": {"tool_calls": True}},
     "budget.tool_calls must be a whole number >= 0 or None (unlimited), got True"),
])
def test_a_setting_no_run_could_honour_is_refused_naming_it(given: dict[str, Any],
                                                            says: str) -> None:
    with pytest.raises(ValueError, match=rf"^HarnessConfig: {re.escape(says)}$"):
        HarnessConfig().with_(**given)


def test_the_smallest_settings_a_scenario_file_allows_are_accepted() -> None:
    config = HarnessConfig(deadline_s=0.001, no_gain_threshold=1, protocol_violation_threshold=1,
                           history_limit=0, projection_max_items=1, projection_max_bytes=1)
    assert (config.deadline_s, config.history_limit) == (0.001, 0)
