"""The pytest plugin's scenario items are kept in a run log, like ``harness-lab run``'s."""

from __future__ import annotations

import pytest

from harness_lab.logs import read_log

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each test runs a pytest session in a fresh interpreter

GOOD = """\
name: good
description: a missing-context fallback
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
expect: {release_outcome: FALLBACK}
"""
BAD = GOOD.replace("name: good", "name: bad").replace("FALLBACK}", "SUCCESS}")


def _scenarios(pytester: pytest.Pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "good.yaml").write_text(GOOD, encoding="utf-8")
    pytester.path.joinpath("scenarios", "bad.yaml").write_text(BAD, encoding="utf-8")


def test_a_pytest_session_logs_every_scenario_item_and_names_the_log(
        pytester: pytest.Pytester) -> None:
    _scenarios(pytester)
    result = pytester.runpytest_subprocess("scenarios", "--scenario-log-dir", "kept")
    result.assert_outcomes(passed=1, failed=1)
    (path,) = pytester.path.joinpath("kept").glob("*_pytest_*.jsonl")
    result.stdout.fnmatch_lines([f"harness-lab run log: kept/{path.name}"])
    log = read_log(path)
    assert log.complete
    assert sorted((e.scenario, e.result.verdict) for e in log.entries) == [
        ("bad", "FAILED"), ("good", "ok")]
    assert log.header["command"][0] == "pytest"
    assert log.header["command"][-3:] == ["scenarios", "--scenario-log-dir", "kept"]


def test_no_scenario_log_writes_none(pytester: pytest.Pytester) -> None:
    _scenarios(pytester)
    result = pytester.runpytest_subprocess("scenarios", "--scenario-log-dir", "kept",
                                           "--no-scenario-log")
    result.assert_outcomes(passed=1, failed=1)
    assert not pytester.path.joinpath("kept").exists()
