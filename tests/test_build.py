"""The run core type-checks as the build's mypyc checks it, so an install compiles it.

mypyc type-checks every module the compiled ones import (the whole package, in practice)
with its own options; one type error anywhere makes the build fall back to the pure core.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.native import compiled_module_names

ROOT = Path(__file__).resolve().parent.parent


def _build_options() -> list[str]:
    """The mypy options ``setup.py`` gives mypyc (its ``options = [...]`` list)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "options"):
            return [ast.literal_eval(element) for element in node.value.elts]  # type: ignore[attr-defined]
    raise AssertionError("setup.py gives mypyc no options list")


def test_the_build_options_keep_third_party_types_out_of_the_check() -> None:
    assert "--no-site-packages" in _build_options()


@pytest.mark.slow
def test_the_compiled_modules_type_check_with_the_builds_options() -> None:
    pytest.importorskip("mypy")
    paths = [name.replace(".", "/") + ".py" for name in compiled_module_names()]
    done = subprocess.run([sys.executable, "-m", "mypy", *_build_options(), *paths],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_the_whole_package_type_checks_with_the_projects_own_settings() -> None:
    # pyproject.toml's [tool.mypy]: the pydantic plugin and the installed packages' own types;
    # checked afresh and no cache written (mypy's --cache-dir=/dev/null), which saves seconds
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", os.devnull,
                           "harness_lab"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
