"""Scenario files: a YAML format that scripts every component, injects faults and states
expectations; a loader that names file, line and field of every problem; and a runner."""

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
