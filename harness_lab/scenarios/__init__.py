"""Scenario files: a YAML format that scripts every component, injects faults and states
expectations; a loader that names file, line and field of every problem; and a runner.

Names are imported on first use, so checking files (``harness-lab validate``) loads neither
the run core nor SQLAlchemy."""

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
    from harness_lab.scenarios.discovery import discover
    from harness_lab.scenarios.loader import (
        LoadedScenario,
        Problem,
        ScenarioError,
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
    "discover": "discovery", "load_file": "loader", "load_text": "loader",
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


__getattr__, __dir__ = on_first_use(
    __name__, globals(), {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()})
