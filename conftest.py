"""Rules of the whole test run: under CI (``CI`` set), a skipped test fails the run.

``.ci/run`` installs everything the tests need (Chromium and its driver included); a test
that skips there would hide a missing install step, so CI treats it as a failure.
"""

from __future__ import annotations

import os

import pytest


def _skipped(config: pytest.Config) -> list[pytest.TestReport]:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter is not None else []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Name the skipped tests that fail a CI run."""
    if os.environ.get("CI") and _skipped(config):
        terminalreporter.write_line(
            f"CI: {len(_skipped(config))} test(s) skipped; under CI every test must run",
            red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI, a run that skipped a test exits 1."""
    if os.environ.get("CI") and _skipped(session.config) and exitstatus == 0:
        session.exitstatus = 1
