"""The run log of a pytest session's scenario items (the pytest plugin calls these hooks).

Each scenario item's result is appended as it is judged; the footer is written when the
session ends and the log's path is shown in the terminal summary. The directory is decided
at the first result: ``--scenario-log-dir``, else ``$HARNESS_LAB_LOG_DIR``, else
``./harness_logs``; ``--no-scenario-log`` writes none.

Under pytest-xdist the session still writes one log: each worker logs its own items into a
part named with a token the controller gave it; when the session ends the controller copies
the runs of every part it finds, a crashed worker's too, into the session's log and removes
the parts (kept, and named, when the copy cannot be written).
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness_lab.logs.options import DEFAULT_LOG_DIR, LOG_DIR_ENV, RunLog, log_directory
from harness_lab.pytest_session import distributing

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["add_options", "close", "log_result", "open_log", "written"]

_LOG = pytest.StashKey[RunLog]()
_CLOCK = pytest.StashKey["_Clock"]()
_PATH = pytest.StashKey["Path | None"]()
_TOKEN = "harness_lab_run_log_token"
"""The key of the session's token in what a pytest-xdist controller gives each worker; the
workers' parts of the log are named with it."""


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
    """Prepare the session's log (opened at its first result); a pytest-xdist worker's is
    its part of the controller's."""
    if config.getoption("--no-scenario-log", False):
        return
    given = config.getoption("--scenario-log-dir", None)
    words = ["pytest", *config.invocation_params.args]
    worker: dict[str, Any] = getattr(config, "workerinput", {})
    token = worker.get(_TOKEN)
    config.stash[_LOG] = RunLog(None if given is None else Path(given), "pytest",
                                [str(w) for w in words],
                                part=None if token is None else f"{token}-{worker['workerid']}")
    clock = _Clock()
    config.pluginmanager.register(clock, "harness_lab_run_log_clock")
    config.stash[_CLOCK] = clock
    if distributing(config):
        config.pluginmanager.register(_Parts(secrets.token_hex(4)), _PARTS)


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
    named = config.pluginmanager.get_plugin(_PARTS)
    parts = [] if named is None else sorted(
        log_directory(log.directory).glob(f"*_pytest_{named.token}-*.jsonl"))
    copied = [part for part in parts if _copy_runs(part, log)]
    path = log.close()
    del config.stash[_LOG]
    config.stash[_PATH] = path
    kept = parts if path is None else [part for part in parts if part not in copied]
    for part in parts:
        if part not in kept:
            part.unlink(missing_ok=True)
    if kept:
        print("harness-lab pytest: the workers' run logs are kept: "
              + ", ".join(map(str, kept)), file=sys.stderr)
    return path


def written(config: pytest.Config) -> Path | None:
    """The path of the log :func:`close` wrote, if any."""
    return config.stash.get(_PATH, None)


_PARTS = "harness_lab_run_log_parts"


class _Parts:
    """The controller's plugin that gives each pytest-xdist worker the token its part of the
    session's log is named with."""

    def __init__(self, token: str) -> None:
        self.token = token

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Hand the worker ``node`` the token."""
        node.workerinput[_TOKEN] = self.token


def _copy_runs(part: Path, log: RunLog) -> bool:
    """Copy the run entries of a worker's log into ``log``; False when it could not be read
    whole. A line its worker left cut short (killed midway) is passed over, as the log reader
    passes it over."""
    try:
        with open(part, encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("kind") == "run":
                    log.add_entry(entry)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"harness-lab pytest: cannot read the run log of a worker, {part}: "
              f"{getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return False
    return True
