"""The rules of the whole test run (the root ``conftest.py``) hold in one process and across
pytest-xdist's workers: under CI a skipped test fails the run and is named."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each test runs a pytest session in a fresh interpreter

ROOT_CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"

SUITE = """
import os

import pytest


def test_that_runs() -> None:
    pass


def test_that_skips() -> None:
    pytest.skip("needs a program this machine lacks")


def test_the_terminal_size_is_the_runs_own() -> None:
    assert os.environ.get("COLUMNS") is None
"""

WORKERS = [pytest.param([], id="one process"),
           pytest.param(["-p", "xdist", "-n", "2"], id="two xdist workers")]


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A directory with the project's root conftest.py and a test file of three tests, one
    of which skips; the run's environment sets neither CI nor a terminal size, and loads
    no plugin it is not asked for (a faster start)."""
    for name in ("CI", "COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(ROOT_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_suite=SUITE)
    return pytester


@pytest.mark.parametrize("workers", WORKERS)
def test_under_ci_a_skipped_test_fails_the_run_and_is_named(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]) -> None:
    monkeypatch.setenv("CI", "1")
    result = suite.runpytest_subprocess(*workers)
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*CI: 1 test(s) skipped; under CI every test must run",
        "*test_suite.py::test_that_skips: needs a program this machine lacks"])


@pytest.mark.parametrize("workers", WORKERS)
def test_outside_ci_a_skipped_test_passes_the_run_unnamed(
        suite: pytest.Pytester, workers: list[str]) -> None:
    result = suite.runpytest_subprocess(*workers)
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == 0
    assert "CI:" not in result.stdout.str()
