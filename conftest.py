"""Rules of the whole test run: under CI (``CI`` set), a skipped test fails the run; and the
processes the tests start see the run's own terminal size.

``.ci/run`` installs everything the tests need (Chromium and its driver included); a test
that skips there would hide a missing install step, so CI treats it as a failure. This holds
with pytest-xdist's workers too: their reports reach this process's terminal reporter.
"""

from __future__ import annotations

import os

import pytest

TERMINAL_SIZE = ("COLUMNS", "LINES")
"""Variables GNU readline sets (to 80 and 24) in the process environment when pytest's
debugger support imports it; children would inherit them though the run never set them."""


def pytest_configure(config: pytest.Config) -> None:
    """Drop the terminal size readline put into the environment of the processes this one
    starts (xdist's workers, the commands the tests run), unless the run itself set it: a
    command's width is then the same in one process and under xdist."""
    for name in TERMINAL_SIZE:
        if name not in os.environ:
            os.unsetenv(name)


def _skipped(config: pytest.Config) -> list[pytest.TestReport]:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter is not None else []


def _reason(report: pytest.TestReport) -> str:
    """The reason a test gave for skipping."""
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Name the skipped tests that fail a CI run."""
    skipped = _skipped(config) if os.environ.get("CI") else []
    if skipped:
        terminalreporter.write_line(
            f"CI: {len(skipped)} test(s) skipped; under CI every test must run", red=True)
        for report in skipped:
            terminalreporter.write_line(f"  {report.nodeid}: {_reason(report)}", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI, a run that skipped a test exits 1."""
    if os.environ.get("CI") and _skipped(session.config) and exitstatus == 0:
        session.exitstatus = 1
