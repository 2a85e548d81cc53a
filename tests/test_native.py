"""The compiled and the pure-Python run core: which one serves, and that they agree."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.native import PURE_ENV, compiled_module_names, core_build, decide_build
from harness_lab.sweep.chunk import ChunkResult
from harness_lab.sweep.engine import Sweep
from harness_lab.sweep.sample import Outcome

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = ROOT / "benchmarks" / "canonical.yaml"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
compiled_only = pytest.mark.skipif(not core_build().compiled,
                                   reason=f"this install runs the pure core: {core_build()}")


def _package(tmp_path: Path, *, lock: dict[str, str] | None, built: tuple[str, ...]) -> Path:
    """A package ``pkg`` with modules ``a`` and ``b``, ``built`` of them with an extension."""
    package = tmp_path / "pkg"
    package.mkdir()
    for name in ("a", "b"):
        (package / f"{name}.py").write_text(f"X = {name!r}\n")
    for name in built:
        (package / f"{name}{SUFFIX}").write_bytes(b"")
    if lock is not None:
        (package / "_compiled.lock").write_text(json.dumps(lock))
    return package


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


NAMES = ("pkg.a", "pkg.b")
MATCHING = {"pkg.a": _digest("X = 'a'\n"), "pkg.b": _digest("X = 'b'\n")}


def test_a_complete_build_whose_sources_match_its_lock_is_compiled(tmp_path: Path) -> None:
    package = _package(tmp_path, lock=MATCHING, built=("a", "b"))
    assert decide_build(NAMES, package, {}).compiled is True


def test_the_pure_variable_turns_a_complete_build_pure(tmp_path: Path) -> None:
    package = _package(tmp_path, lock=MATCHING, built=("a", "b"))
    build = decide_build(NAMES, package, {PURE_ENV: "1"})
    assert (build.compiled, build.reason) == (False, f"{PURE_ENV} is set")


def test_a_pure_variable_of_zero_leaves_the_build_compiled(tmp_path: Path) -> None:
    package = _package(tmp_path, lock=MATCHING, built=("a", "b"))
    assert decide_build(NAMES, package, {PURE_ENV: "0"}).compiled is True


def test_a_source_edited_after_the_build_makes_every_module_pure(tmp_path: Path) -> None:
    package = _package(tmp_path, lock=MATCHING, built=("a", "b"))
    (package / "b.py").write_text("X = 'changed'\n")
    build = decide_build(NAMES, package, {})
    assert build.compiled is False
    assert build.reason.startswith("pkg/b.py changed since it was compiled")


def test_an_install_without_extensions_is_pure(tmp_path: Path) -> None:
    package = _package(tmp_path, lock=MATCHING, built=())
    assert decide_build(NAMES, package, {}).reason == "the install compiled nothing"


def test_a_partly_compiled_build_is_pure_and_names_the_missing_module(tmp_path: Path) -> None:
    build = decide_build(NAMES, _package(tmp_path, lock=MATCHING, built=("a",)), {})
    assert (build.compiled, build.reason) == (
        False, "the build is incomplete: pkg.b was not compiled")


def test_a_build_without_a_lock_is_trusted_as_compiled(tmp_path: Path) -> None:
    build = decide_build(NAMES, _package(tmp_path, lock=None, built=("a", "b")), {})
    assert build.compiled is True
    assert "no source hashes" in build.reason


def test_the_listing_names_importable_modules_of_the_run_core() -> None:
    names = compiled_module_names()
    assert "harness_lab.core.context" in names
    assert "harness_lab.native" not in names
    assert all((ROOT / Path(*n.split("."))).with_suffix(".py").exists() for n in names)


def test_the_pure_variable_makes_a_process_import_the_python_sources() -> None:
    code = ("import harness_lab.core.context as c, harness_lab.native as n; "
            "print(n.core_build().compiled, c.__file__.endswith('.py'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, PURE_ENV: "1"}, check=True).stdout.split()
    assert out == ["False", "True"]


def test_chunk_results_and_outcomes_survive_pickling() -> None:
    outcome = Outcome(0, 3, "DIAGNOSIS", "SUCCESS", "SUCCESS", None, "SUCCESS", 4.5, 5, 6,
                      900, ("no_record",), None)
    chunk = ChunkResult.of(0, 3, [outcome], kept=({"run_id": "r"},))
    again = pickle.loads(pickle.dumps(chunk))
    assert (again.grid, again.start, again.kept, again.outcomes) == (0, 3, ({"run_id": "r"},),
                                                                    (outcome,))
    assert pickle.loads(pickle.dumps(outcome)) == outcome


@compiled_only
def test_the_compiled_core_serves_the_run_modules_from_extensions() -> None:
    import harness_lab.core.context as context

    assert context.__file__ is not None and not context.__file__.endswith(".py")


@compiled_only
def test_every_compiled_module_and_its_classes_have_their_source_docstrings() -> None:
    # a fresh interpreter, so the order the modules load in is the package's own
    script = """
import ast, importlib, pathlib, sys
import harness_lab
from harness_lab.native import compiled_module_names
for name in compiled_module_names():
    module = importlib.import_module(name)
    path = pathlib.Path(harness_lab.__file__).parent.parent / (name.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text())
    if module.__doc__ != ast.get_docstring(tree):
        print(name)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and ast.get_docstring(node):
            if getattr(module, node.name).__doc__ != ast.get_docstring(node):
                print(name, node.name)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def _outcomes_in(env: dict[str, str], *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "harness_lab.cli", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT).stdout


@compiled_only
@pytest.mark.slow  # the whole library, or a sweep, in two processes
def test_the_compiled_and_the_pure_core_give_the_same_scenario_table() -> None:
    args = ("run", "scenarios", "--format", "csv")
    compiled = _outcomes_in(dict(os.environ), *args)
    pure = _outcomes_in({**os.environ, PURE_ENV: "1"}, *args)
    assert compiled.count("\n") > 100
    assert compiled == pure


@compiled_only
@pytest.mark.slow  # the whole library, or a sweep, in two processes
def test_the_compiled_and_the_pure_core_give_the_same_stochastic_samples(tmp_path: Path) -> None:
    rows = []
    for name, env in (("compiled", dict(os.environ)), ("pure", {**os.environ, PURE_ENV: "1"})):
        out = tmp_path / f"{name}.csv"
        _outcomes_in(env, "sweep", "scenarios/sweeps/deadline-sweep.yaml", "--samples", "150",
                     "--seed", "7", "--workers", "1", "--out", str(out))
        rows.append(out.read_text())
    assert rows[0].count("\n") == 4 * 150 + 1
    assert rows[0] == rows[1]


@compiled_only
@pytest.mark.slow  # the whole library, or a sweep, in two processes
def test_the_compiled_and_the_pure_core_give_the_same_load_curves() -> None:
    args = ("sweep", "scenarios/sweeps/deadline-sweep.yaml", "--samples", "50", "--seed", "7",
            "--load", "--format", "csv")
    compiled = _outcomes_in(dict(os.environ), *args)
    assert compiled.count("\n") == 4 * 2 + 1
    assert compiled == _outcomes_in({**os.environ, PURE_ENV: "1"}, *args)


def test_the_canonical_sweep_runs_in_the_core_this_process_has() -> None:
    result = Sweep.from_file(CANONICAL, samples=20, seed=1, workers=1).run()
    assert result.frame["run_state"].astype(str).tolist() == ["SUCCESS"] * 20


def test_the_pure_core_warning_names_the_package_and_fits_80_columns() -> None:
    import warnings

    from harness_lab.native import _warn_pure

    reason = ("harness_lab/application/components.py changed since it was compiled; "
              "reinstall to compile it again")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warn_pure(reason)
    [warning] = caught
    shown = warnings.formatwarning(warning.message, warning.category, warning.filename,
                                   warning.lineno, warning.line).rstrip("\n").splitlines()
    assert shown[0] == "harness_lab:0: RuntimeWarning: harness_lab runs its pure-Python core:"
    assert " ".join(line.strip() for line in shown[1:]) == reason
    assert max(map(len, shown)) <= 80
