"""harness_lab: an executable model of a diagnosis harness's lifecycle, on virtual time.

The whole harness (routing, ReAct diagnosis over read-only tools, guards, release, SSE,
persistence and trace) runs against scriptable fakes or recorded models on simpy's virtual
clock. Scenario files, reports, sweeps and the fault explorer live in the subpackages
``scenarios``, ``report``, ``sweep`` and ``explore``.
"""

# first: it decides whether the compiled or the pure-Python run core serves this process
import harness_lab.native  # noqa: F401

# isort: split

from harness_lab.application.components import Components
from harness_lab.config import HarnessConfig, Policy, UserCancelNotice
from harness_lab.core import BudgetLimits, RunBudget, RunCancellation, RunLifecycle
from harness_lab.defects import Defect
from harness_lab.harness import Harness, RunHandle
from harness_lab.invariants import Violation, check
from harness_lab.record import RunRecord
from harness_lab.sse import ChatSseSession

__version__ = "0.1.0"

__all__ = [
    "BudgetLimits",
    "ChatSseSession",
    "Components",
    "Defect",
    "Harness",
    "HarnessConfig",
    "Policy",
    "RunBudget",
    "RunCancellation",
    "RunHandle",
    "RunLifecycle",
    "RunRecord",
    "UserCancelNotice",
    "Violation",
    "check",
]
