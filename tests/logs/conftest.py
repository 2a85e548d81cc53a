"""The scenario library run once per test session, and a log written from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.logs.writer import LogWriter
from harness_lab.scenarios.results import ResultSet
from harness_lab.scenarios.runner import run_paths

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="session")
def library() -> ResultSet:
    """Every scenario of the library, run live."""
    return run_paths([LIBRARY])


@pytest.fixture(scope="session")
def library_log(library: ResultSet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of the whole library, written by LogWriter."""
    with LogWriter.open(tmp_path_factory.mktemp("logs"), "run") as writer:
        for result in library:
            writer.add(result)
    return writer.path
