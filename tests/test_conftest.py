"""The rules of the whole test run (the root ``conftest.py``) hold in one process and across
pytest-xdist's workers: under CI a skipped test fails the run and is named. The layers of
``tests/conftest.py`` follow the fixtures a test uses, with the markers ``pyproject.toml``
registers."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
ROOT_CONFTEST = ROOT / "conftest.py"
TESTS_CONFTEST = ROOT / "tests" / "conftest.py"

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


@pytest.mark.slow  # a pytest session in a fresh interpreter
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


@pytest.mark.slow  # a pytest session in a fresh interpreter
@pytest.mark.parametrize("workers", WORKERS)
def test_outside_ci_a_skipped_test_passes_the_run_unnamed(
        suite: pytest.Pytester, workers: list[str]) -> None:
    result = suite.runpytest_subprocess(*workers)
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == 0
    assert "CI:" not in result.stdout.str()


LAYERED = """
import pytest


@pytest.fixture
def browser() -> None:
    pass


@pytest.fixture
def page(browser: None) -> None:
    pass


@pytest.fixture
def postgres_url() -> str:
    return "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def test_of_a_rule() -> None:
    pass


def test_of_a_page(page: None) -> None:
    pass


def test_on_postgresql(postgres_url: str) -> None:
    pass


@pytest.mark.notebook
def test_of_a_notebook() -> None:
    pass


@pytest.mark.live
def test_of_serve() -> None:
    pass
"""


@pytest.fixture
def layered(pytester: pytest.Pytester) -> pytest.Pytester:
    """A directory with the suite's conftest.py, the markers pyproject.toml registers and a
    test file whose tests use the browser (through another fixture) and PostgreSQL
    fixtures, or are marked notebook or live."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = options["tool"]["pytest"]["ini_options"]["markers"]
    pytester.makeini("[pytest]\nmarkers =\n" + "".join(f"    {m}\n" for m in markers))
    pytester.makeconftest(TESTS_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_layers=LAYERED)
    return pytester


LAYERS = {"browser", "postgres", "live", "notebook", "slow"}


def test_a_tests_fixtures_and_markers_put_it_in_its_layers(layered: pytest.Pytester) -> None:
    items, _ = layered.inline_genitems("--strict-markers")
    assert {item.name: {m.name for m in item.iter_markers()} & LAYERS for item in items} == {
        "test_of_a_rule": set(),
        "test_of_a_page": {"browser", "slow"},
        "test_on_postgresql": {"postgres", "slow"},
        "test_of_a_notebook": {"notebook", "slow"},
        "test_of_serve": {"live", "slow"},
    }


QUICK_FILE = """
def test_first() -> None:
    pass


def test_second() -> None:
    pass
"""

SLOW_FILE = """
import pytest


def test_quick_in_a_slow_file() -> None:
    pass


@pytest.mark.slow
def test_slow() -> None:
    pass
"""


def test_the_files_holding_a_slow_test_are_collected_first_each_in_its_own_order(
        pytester: pytest.Pytester) -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = options["tool"]["pytest"]["ini_options"]["markers"]
    pytester.makeini("[pytest]\nmarkers =\n" + "".join(f"    {m}\n" for m in markers))
    pytester.makeconftest(TESTS_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_a_quick=QUICK_FILE, test_b_slow=SLOW_FILE)
    result = pytester.runpytest("--strict-markers", "--collect-only", "-q")
    assert result.outlines[:4] == [
        "test_b_slow.py::test_quick_in_a_slow_file", "test_b_slow.py::test_slow",
        "test_a_quick.py::test_first", "test_a_quick.py::test_second"]


def test_auto_starts_two_workers_more_than_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    from types import SimpleNamespace

    from tests.conftest import pytest_xdist_auto_num_workers

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    config: Any = SimpleNamespace(option=SimpleNamespace(numprocesses="auto"))
    assert pytest_xdist_auto_num_workers(config) == len(os.sched_getaffinity(0)) + 2
    config.option.numprocesses = "logical"
    assert pytest_xdist_auto_num_workers(config) is None
