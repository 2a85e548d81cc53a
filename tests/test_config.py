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


def _floors() -> dict[str, tuple[float, bool]]:
    """Each whole-number setting's least value and the deadline's exclusive floor, as the
    scenario file's JSON Schema states them (what editors show)."""
    from harness_lab.scenarios.spec import BudgetSpec, ConfigSpec

    config = ConfigSpec.model_json_schema()["properties"]
    floors = {name: (spec["minimum"], False) for name, spec in config.items()
              if "minimum" in spec}
    floors["deadline_s"] = (config["deadline_s"]["exclusiveMinimum"], True)
    for name, spec in BudgetSpec.model_json_schema()["properties"].items():
        floors[f"budget.{name}"] = (spec["anyOf"][0]["minimum"], False)
    return floors


def test_the_schema_states_a_floor_for_every_setting_the_core_checks() -> None:
    assert set(_floors()) == {"deadline_s", "no_gain_threshold", "protocol_violation_threshold",
                              "history_limit", "projection_max_items", "projection_max_bytes",
                              "budget.model_calls", "budget.tool_calls", "budget.tokens",
                              "budget.bytes"}


def _setting(name: str, value: float) -> dict[str, Any]:
    """``HarnessConfig.with_`` keywords setting ``name`` (``budget.KIND`` too) to ``value``."""
    field, _, kind = name.partition(".")
    return {"budget": {kind: value}} if kind else {field: value}


@pytest.mark.parametrize(("name", "floor"), sorted(_floors().items()))
def test_the_core_refuses_exactly_below_the_floor_a_scenario_files_schema_states(
        name: str, floor: tuple[float, bool]) -> None:
    least, exclusive = floor
    below, at = (least, least + 0.5) if exclusive else (least - 1, least)
    with pytest.raises(ValueError, match=f"^HarnessConfig: {re.escape(name)} "):
        HarnessConfig().with_(**_setting(name, below))
    config = HarnessConfig().with_(**_setting(name, at))
    field, _, kind = name.partition(".")
    assert (getattr(config.budget, kind) if kind else getattr(config, field)) == at
