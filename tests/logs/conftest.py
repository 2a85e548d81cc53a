"""A log written from the scenario library (run once per session: ``library``, in
tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.logs.writer import LogWriter
from harness_lab.runner.results import ResultSet


@pytest.fixture(scope="session")
def library_log(library: ResultSet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of the whole library, written by LogWriter."""
    with LogWriter.open(tmp_path_factory.mktemp("logs"), "run") as writer:
        for result in library:
            writer.add(result)
    return writer.path
