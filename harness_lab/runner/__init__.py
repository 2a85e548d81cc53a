"""The runner: plays scenario files on the harness and judges each run against them.

* :mod:`~harness_lab.runner.run`: a scenario's harness built from its script, its earlier
  turns played, its faults injected, the run checked against ``expect`` and the invariants;
  ``run_paths`` runs what paths select;
* :mod:`~harness_lab.runner.observe`: a run's normalised observation, what expectations read;
* :mod:`~harness_lab.runner.expect`: expectations compared with an observation;
* :mod:`~harness_lab.runner.snapshot`: whole observations pinned in files beside scenarios;
* :mod:`~harness_lab.runner.results`: many results as rows, for tables and exports;
* :mod:`~harness_lab.runner.junit` and :mod:`~harness_lab.runner.annotations`: results as
  JUnit XML and as GitHub Actions annotations, for CI.

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

_EXPORTS = {"ResultSet": "results", "ROW_COLUMNS": "run", "ScenarioResult": "run",
            "ScenarioRun": "run", "expectations": "run", "run_paths": "run", "run_plan": "run",
            "run_scenario": "run"}

__all__ = ["ROW_COLUMNS", "ResultSet", "ScenarioResult", "ScenarioRun", "expectations",
           "run_paths", "run_plan", "run_scenario"]

__getattr__, __dir__ = on_first_use(
    __name__, globals(), {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()})
