"""The pytest plugin's scenario items are kept in a run log, like ``harness-lab run``'s."""

from __future__ import annotations

import pytest

from harness_lab.logs import read_log
from tests.scenarios import good_and_wrong

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each test runs a pytest session in a fresh interpreter


def test_a_pytest_session_logs_every_scenario_item_and_names_the_log(
        pytester: pytest.Pytester) -> None:
    good_and_wrong(pytester.path / "scenarios")
    result = pytester.runpytest_subprocess("scenarios", "--scenario-log-dir", "kept")
    result.assert_outcomes(passed=1, failed=1)
    (path,) = pytester.path.joinpath("kept").glob("*_pytest_*.jsonl")
    result.stdout.fnmatch_lines([f"harness-lab run log: kept/{path.name}"])
    log = read_log(path)
    assert log.complete
    assert sorted((e.scenario, e.result.verdict) for e in log.entries) == [
        ("good", "ok"), ("wrong", "FAILED")]
    assert log.header["command"][0] == "pytest"
    assert log.header["command"][-3:] == ["scenarios", "--scenario-log-dir", "kept"]


def test_no_scenario_log_writes_none(pytester: pytest.Pytester) -> None:
    good_and_wrong(pytester.path / "scenarios")
    result = pytester.runpytest_subprocess("scenarios", "--scenario-log-dir", "kept",
                                           "--no-scenario-log")
    result.assert_outcomes(passed=1, failed=1)
    assert not pytester.path.joinpath("kept").exists()


def test_under_xdist_the_session_still_writes_one_log_of_every_item(
        pytester: pytest.Pytester) -> None:
    good_and_wrong(pytester.path / "scenarios")
    result = pytester.runpytest_subprocess("scenarios", "--scenario-log-dir", "kept", "-p",
                                           "no:cacheprovider", "-n", "2", "--dist", "load")
    result.assert_outcomes(passed=1, failed=1)
    (path,) = pytester.path.joinpath("kept").glob("*.jsonl")  # the workers' logs are gone
    result.stdout.fnmatch_lines([f"harness-lab run log: kept/{path.name}"])
    log = read_log(path)
    assert log.complete
    assert sorted((e.scenario, e.result.verdict) for e in log.entries) == [
        ("good", "ok"), ("wrong", "FAILED")]
    assert [e.seq for e in log.entries] == [0, 1]
    assert log.footer is not None and log.footer["verdicts"] == {"ok": 1, "FAILED": 1}
    assert log.header["command"][-9:] == ["scenarios", "--scenario-log-dir", "kept", "-p",
                                          "no:cacheprovider", "-n", "2", "--dist", "load"]


def test_under_xdist_the_runs_of_a_worker_that_crashed_are_in_the_sessions_log(
        pytester: pytest.Pytester) -> None:
    good_and_wrong(pytester.path / "scenarios")
    pytester.makepyfile(test_zcrash="import os\n\n\ndef test_crash():\n    os._exit(3)\n")
    result = pytester.runpytest_subprocess("scenarios", "test_zcrash.py", "--scenario-log-dir",
                                           "kept", "-p", "no:cacheprovider", "-n", "1")
    result.assert_outcomes(passed=1, failed=2)  # the crash is a failure of its own
    (path,) = pytester.path.joinpath("kept").glob("*.jsonl")  # the crashed worker's is gone
    result.stdout.fnmatch_lines([f"harness-lab run log: kept/{path.name}"])
    log = read_log(path)
    assert log.complete  # the session's log, with its footer
    assert sorted((e.scenario, e.result.verdict) for e in log.entries) == [
        ("good", "ok"), ("wrong", "FAILED")]
