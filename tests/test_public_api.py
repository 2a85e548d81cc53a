"""The public names of the package are pinned."""

from __future__ import annotations

import harness_lab


def test_the_package_exports_exactly_its_public_api() -> None:
    assert harness_lab.__all__ == [
        "BudgetLimits", "ChatSseSession", "Components", "Defect", "Harness", "HarnessConfig",
        "Policy", "RunBudget", "RunCancellation", "RunHandle", "RunLifecycle", "RunRecord",
        "UserCancelNotice", "Violation", "check", "diff_logs", "explain", "read_log",
    ]


def test_every_public_name_has_a_docstring() -> None:
    missing = [n for n in harness_lab.__all__ if not getattr(harness_lab, n).__doc__]
    assert missing == []
