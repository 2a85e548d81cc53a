"""harness_lab: an executable model of a diagnosis harness's lifecycle, on virtual time.

The whole harness (routing, ReAct diagnosis over read-only tools, guards, release, SSE,
persistence and trace) runs against scriptable fakes or recorded models on simpy's virtual
clock. Scenario files, reports, sweeps and the fault explorer live in the subpackages
``scenarios``, ``report``, ``sweep`` and ``explore``.

The public names are imported on first use, so a command that needs none of them (``--help``,
``validate``) does not load the run core, SQLAlchemy or pandas.
"""

# first: it decides whether the compiled or the pure-Python run core serves this process
import harness_lab.native  # noqa: F401

# isort: split

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use
from harness_lab.version import __version__ as __version__

if TYPE_CHECKING:
    from harness_lab.application.components import Components
    from harness_lab.config import HarnessConfig, Policy, UserCancelNotice
    from harness_lab.core import BudgetLimits, RunBudget, RunCancellation, RunLifecycle
    from harness_lab.defects import Defect
    from harness_lab.explanation import explain
    from harness_lab.harness import Harness, RunHandle
    from harness_lab.invariants import Violation, check
    from harness_lab.logs import read_log
    from harness_lab.logs.diff import diff_logs
    from harness_lab.record import RunRecord
    from harness_lab.sse import ChatSseSession


_EXPORTS = {
    "BudgetLimits": "harness_lab.core",
    "ChatSseSession": "harness_lab.sse",
    "Components": "harness_lab.application.components",
    "Defect": "harness_lab.defects",
    "Harness": "harness_lab.harness",
    "HarnessConfig": "harness_lab.config",
    "Policy": "harness_lab.config",
    "RunBudget": "harness_lab.core",
    "RunCancellation": "harness_lab.core",
    "RunHandle": "harness_lab.harness",
    "RunLifecycle": "harness_lab.core",
    "RunRecord": "harness_lab.record",
    "UserCancelNotice": "harness_lab.config",
    "Violation": "harness_lab.invariants",
    "check": "harness_lab.invariants",
    "diff_logs": "harness_lab.logs.diff",
    "explain": "harness_lab.explanation",
    "read_log": "harness_lab.logs",
}

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
    "diff_logs",
    "explain",
    "read_log",
]


__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)


def _display_in_ipython() -> None:
    """Inside IPython (Jupyter), show records, results and sweeps as the report does."""
    import sys

    if "IPython" in sys.modules:
        from harness_lab.report.display import register_display

        register_display()


_display_in_ipython()
