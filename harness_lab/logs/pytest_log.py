"""The run log of a pytest session's scenario items (the pytest plugin calls these hooks).

Each scenario item's result is appended as it is judged; the footer is written when the
session ends and the log's path is shown in the terminal summary. The directory is decided
at the first result: ``--scenario-log-dir``, else ``$HARNESS_LAB_LOG_DIR``, else
``./harness_logs``; ``--no-scenario-log`` writes none.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from harness_lab.logs.options import DEFAULT_LOG_DIR, LOG_DIR_ENV, RunLog

if TYPE_CHECKING:
    from pathlib import Path

    from harness_lab.runner.run import ScenarioResult

__all__ = ["add_options", "close", "log_result", "open_log", "written"]

_LOG = pytest.StashKey[RunLog]()
_CLOCK = pytest.StashKey["_Clock"]()
_PATH = pytest.StashKey["Path | None"]()


class _Clock:
    """Notes when each test's call starts, so a scenario item's wall time is its own."""

    started: float | None = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        """Note the start of the call."""
        self.started = time.perf_counter()
        yield


def add_options(group: Any) -> None:
    """``--scenario-log-dir DIR`` and ``--no-scenario-log``."""
    group.addoption("--scenario-log-dir", metavar="DIR", default=None,
                    help=f"write the run log of the scenario items into DIR (default: "
                         f"${LOG_DIR_ENV}, else ./{DEFAULT_LOG_DIR})")
    group.addoption("--no-scenario-log", action="store_true",
                    help="write no run log of the scenario items")


def open_log(config: pytest.Config) -> None:
    """Prepare the session's log (opened at its first result)."""
    if config.getoption("--no-scenario-log", False):
        return
    given = config.getoption("--scenario-log-dir", None)
    from pathlib import Path

    words = ["pytest", *config.invocation_params.args]
    config.stash[_LOG] = RunLog(None if given is None else Path(given), "pytest",
                                [str(w) for w in words])
    clock = _Clock()
    config.pluginmanager.register(clock, "harness_lab_run_log_clock")
    config.stash[_CLOCK] = clock


def log_result(config: pytest.Config, result: ScenarioResult) -> None:
    """Append one scenario item's result to the session's log."""
    log = config.stash.get(_LOG, None)
    if log is not None:
        clock = config.stash.get(_CLOCK, None)
        started = None if clock is None else clock.started
        log.add(result, None if started is None else time.perf_counter() - started)


def close(config: pytest.Config) -> Path | None:
    """Write the footer; the log's path (None when no scenario item ran)."""
    log = config.stash.get(_LOG, None)
    if log is None:
        return None
    path = log.close()
    del config.stash[_LOG]
    config.stash[_PATH] = path
    return path


def written(config: pytest.Config) -> Path | None:
    """The path of the log :func:`close` wrote, if any."""
    return config.stash.get(_PATH, None)
