"""The runner: plays scenario files on the harness and judges each run against them.

* :mod:`~harness_lab.runner.run`: a scenario's harness built from its script, its earlier
  turns played, its faults injected, the run checked against ``expect`` and the invariants;
  ``run_paths`` runs what paths select;
* :mod:`~harness_lab.runner.observe`: a run's normalised observation, what expectations read;
* :mod:`~harness_lab.runner.expect`: expectations compared with an observation;
* :mod:`~harness_lab.runner.snapshot`: whole observations pinned in files beside scenarios;
* :mod:`~harness_lab.runner.results`: many results as rows, for tables and exports.

Names are imported on first use.
"""

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
    from harness_lab.runner.results import ResultSet
    from harness_lab.runner.run import (
        ROW_COLUMNS,
        ScenarioResult,
        ScenarioRun,
        expectations,
        run_paths,
        run_plan,
        run_scenario,
    )

_EXPORTS = {
    "ResultSet": "harness_lab.runner.results",
    "ROW_COLUMNS": "harness_lab.runner.run", "ScenarioResult": "harness_lab.runner.run",
    "ScenarioRun": "harness_lab.runner.run", "expectations": "harness_lab.runner.run",
    "run_paths": "harness_lab.runner.run", "run_plan": "harness_lab.runner.run",
    "run_scenario": "harness_lab.runner.run",
}

__all__ = [
    "ROW_COLUMNS",
    "ResultSet",
    "ScenarioResult",
    "ScenarioRun",
    "expectations",
    "run_paths",
    "run_plan",
    "run_scenario",
]

__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)
