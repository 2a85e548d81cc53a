"""Scenario files: a YAML format that scripts every component, injects faults and states
expectations; a loader that names file, line and field of every problem; and a runner.

Names are imported on first use, so checking files (``harness-lab validate``) loads neither
the run core nor SQLAlchemy."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness_lab.scenarios.loader import (
        LoadedScenario,
        Problem,
        ScenarioError,
        discover,
        load_file,
        load_text,
    )
    from harness_lab.scenarios.results import ResultSet
    from harness_lab.scenarios.runner import (
        ROW_COLUMNS,
        ScenarioResult,
        ScenarioRun,
        expectations,
        run_paths,
        run_scenario,
    )
    from harness_lab.scenarios.spec import Expect, Scenario

_EXPORTS = {
    "LoadedScenario": "loader", "Problem": "loader", "ScenarioError": "loader",
    "discover": "loader", "load_file": "loader", "load_text": "loader",
    "ResultSet": "results",
    "ROW_COLUMNS": "runner", "ScenarioResult": "runner", "ScenarioRun": "runner",
    "expectations": "runner", "run_paths": "runner", "run_scenario": "runner",
    "Expect": "spec", "Scenario": "spec",
}

__all__ = [
    "ROW_COLUMNS",
    "Expect",
    "ResultSet",
    "LoadedScenario",
    "Problem",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "ScenarioRun",
    "discover",
    "expectations",
    "load_file",
    "load_text",
    "run_paths",
    "run_scenario",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness_lab.scenarios' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"harness_lab.scenarios.{module}"), name)
    globals()[name] = value
    return value
