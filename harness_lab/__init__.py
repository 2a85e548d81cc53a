"""harness_lab: an executable model of a diagnosis harness's lifecycle, on virtual time."""

from harness_lab.config import HarnessConfig, Policy, UserCancelNotice
from harness_lab.core import BudgetLimits, RunBudget, RunCancellation, RunLifecycle
from harness_lab.sse import ChatSseSession

__all__ = [
    "BudgetLimits",
    "ChatSseSession",
    "HarnessConfig",
    "Policy",
    "RunBudget",
    "RunCancellation",
    "RunLifecycle",
    "UserCancelNotice",
]
