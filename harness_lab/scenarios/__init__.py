"""Scenario files: a YAML format that scripts every component, injects faults and states
expectations; a loader that names file, line and field of every problem; discovery of the
files a command's paths name; and the JSON Schema for editors.

What a script becomes (components, faults) is :mod:`harness_lab.scripted`; playing and
judging a scenario is :mod:`harness_lab.runner`. Names are imported on first use, so checking
files (``harness-lab validate``) loads neither the run core nor SQLAlchemy."""

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
    from harness_lab.scenarios.spec import Expect, Scenario

_EXPORTS = {
    "LoadedScenario": "loader", "Problem": "loader", "ScenarioError": "loader",
    "discover": "discovery", "load_file": "loader", "load_text": "loader",
    "Expect": "spec", "Scenario": "spec",
}

__all__ = ["Expect", "LoadedScenario", "Problem", "Scenario", "ScenarioError", "discover",
           "load_file", "load_text"]


__getattr__, __dir__ = on_first_use(
    __name__, globals(), {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()})
