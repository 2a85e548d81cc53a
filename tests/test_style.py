"""The code base is ruff clean (the project's own configuration)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_tests_and_benchmarks_are_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is part of the test extra and must be installed")
    done = subprocess.run([ruff, "check", "harness_lab", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
