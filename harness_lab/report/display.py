"""Jupyter display of the toolkit's results: records, scenario results, sweeps, explorations.

The value classes know nothing of HTML. Importing :mod:`harness_lab` inside IPython calls
:func:`register_display`, which tells IPython's HTML formatter how to show each of them by the
class's dotted name, so no value class is imported (or made to import presentation) for it.
The views themselves are :mod:`harness_lab.report.notebook`'s, imported on first display.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["VIEWS", "register_display"]

VIEWS: dict[tuple[str, str], str] = {
    ("harness_lab.record", "RunRecord"): "record_html",
    ("harness_lab.runner.run", "ScenarioResult"): "result_html",
    ("harness_lab.runner.results", "ResultSet"): "results_html",
    ("harness_lab.sweep.result", "SweepResult"): "sweep_html",
}
"""``(module, class) -> view``: the function of :mod:`harness_lab.report.notebook` that shows
each displayable class as HTML."""


def _view(name: str) -> Callable[[Any], str]:
    def show(value: Any) -> str:
        return str(getattr(importlib.import_module("harness_lab.report.notebook"), name)(value))

    show.__name__ = name
    return show


def register_display(shell: Any = None) -> bool:
    """Register the HTML views of :data:`VIEWS` with IPython's display formatter.

    ``shell`` defaults to the running IPython shell; without one (plain Python, or IPython
    not imported) nothing happens and the result is False. Registering again is harmless.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    for (module, cls), name in VIEWS.items():
        formatter.for_type_by_name(module, cls, _view(name))
    return True
