"""Run core (doc §3-§4): lifecycle, cancellation, budget, deadline and the active check."""

from harness_lab.core.budget import BudgetLimits, RunBudget, Usage
from harness_lab.core.cancellation import RunCancellation
from harness_lab.core.lifecycle import RunLifecycle, RunTermination

__all__ = [
    "BudgetLimits",
    "RunBudget",
    "RunCancellation",
    "RunLifecycle",
    "RunTermination",
    "Usage",
]
