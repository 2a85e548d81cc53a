"""Which build of the run core serves this process: compiled by mypyc, or pure Python.

The modules listed in ``_compiled.txt`` (everything a simulated run executes) are compiled to
C extension modules from the same source when the package is built (``setup.py``), and
the build records the hash of each source it compiled in ``_compiled.lock``. The package
imports this module first; it decides once per process:

- ``HARNESS_LAB_PURE=1`` in the environment: the pure-Python modules, for cProfile, a
  debugger, monkeypatching or the full docstrings of functions and methods;
- a compiled module whose source changed since it was built (an editable install edited
  afterwards): the pure-Python modules for all of them, with a warning to rebuild, since
  compiled modules call each other directly and cannot be mixed with changed source;
- otherwise the compiled modules when they were built, else the pure-Python ones.

Both builds run the same code: the test suite compares their outcomes scenario by scenario.
mypyc keeps no docstrings; the compiled modules get their module and class docstrings back
from the source as they are imported.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["PURE_ENV", "CoreBuild", "compiled_module_names", "core_build", "decide_build",
           "source_hashes"]

PURE_ENV = "HARNESS_LAB_PURE"
"""The environment variable that makes a process (or a build) use the pure-Python core."""

_PACKAGE = Path(__file__).resolve().parent
_LISTING = _PACKAGE / "_compiled.txt"
_LOCK_NAME = "_compiled.lock"


@dataclass(frozen=True)
class CoreBuild:
    """The run core's build in this process, and why."""

    compiled: bool
    reason: str

    def __str__(self) -> str:
        return f"{'compiled' if self.compiled else 'pure Python'} ({self.reason})"


@functools.cache
def compiled_module_names() -> tuple[str, ...]:
    """The dotted names of the modules the build compiles, from ``_compiled.txt``."""
    lines = (line.split("#", 1)[0].strip() for line in _LISTING.read_text().splitlines())
    return tuple("harness_lab." + line.removesuffix(".py").replace("/", ".")
                 for line in lines if line)


def _source_of(name: str, package: Path = _PACKAGE) -> Path:
    return package.joinpath(*name.split(".")[1:]).with_suffix(".py")


def source_hashes(names: Sequence[str] | None = None, package: Path = _PACKAGE
                  ) -> dict[str, str]:
    """The SHA-256 of each compiled module's source, as the build records them."""
    return {name: hashlib.sha256(_source_of(name, package).read_bytes()).hexdigest()
            for name in (compiled_module_names() if names is None else names)}


def _extension_of(name: str, package: Path = _PACKAGE) -> Path | None:
    base = _source_of(name, package).with_suffix("")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = base.with_name(base.name + suffix)
        if candidate.exists():
            return candidate
    return None


def decide_build(names: Sequence[str], package: Path = _PACKAGE,
                 environ: Mapping[str, str] = os.environ) -> CoreBuild:
    """Which build of the modules ``names`` of ``package`` should serve, and why."""
    if environ.get(PURE_ENV, "") not in ("", "0"):
        return CoreBuild(False, f"{PURE_ENV} is set")
    built = [n for n in names if _extension_of(n, package) is not None]
    if not built:
        return CoreBuild(False, "the install compiled nothing")
    if len(built) < len(names):
        missing = sorted(set(names) - set(built))
        return CoreBuild(False, f"the build is incomplete: {missing[0]} was not compiled")
    try:
        recorded = json.loads((package / _LOCK_NAME).read_text())
    except (OSError, ValueError):
        return CoreBuild(True, "mypyc; the build recorded no source hashes")
    changed = sorted(n for n, digest in source_hashes(names, package).items()
                     if recorded.get(n) != digest)
    if changed:
        source = _source_of(changed[0], package).relative_to(package.parent)
        return CoreBuild(False, f"{source} changed since it was compiled; reinstall to "
                                "compile it again")
    return CoreBuild(True, "mypyc")


class _DocumentingLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a compiled module, then gives compiled modules their source docstrings.

    Compiled modules import each other inside the compiled group, past the import system,
    so after each load every compiled module now loaded is documented (once).
    """

    def exec_module(self, module: ModuleType) -> None:
        """Execute the extension module, then restore the docstrings mypyc dropped."""
        super().exec_module(module)
        _document_loaded()


class _CoreFinder(importlib.abc.MetaPathFinder):
    """Finds the run core's modules in the build this process runs.

    Compiled: the extension, through :class:`_DocumentingLoader`. Pure: the ``.py`` source,
    shadowing any extension beside it.
    """

    def __init__(self, names: Sequence[str], compiled: bool) -> None:
        self.names = frozenset(names)
        self.compiled = compiled

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The spec of a run core module in this process's build; None for any other."""
        if fullname not in self.names:
            return None
        if not self.compiled:
            return importlib.util.spec_from_file_location(fullname, _source_of(fullname))
        extension = _extension_of(fullname)
        if extension is None:
            return None
        loader = _DocumentingLoader(fullname, str(extension))
        return importlib.util.spec_from_file_location(fullname, extension, loader=loader)


_documented: set[str] = set()


def _document_loaded() -> None:
    for name in compiled_module_names():
        module = sys.modules.get(name)
        if (module is not None and name not in _documented
                and _restore_from_source(module, _source_of(name))):
            _documented.add(name)


def _restore_from_source(module: ModuleType, source: Path) -> bool:
    """Give ``module`` and its classes their source docstrings, and its classes their source
    annotations (mypyc erases them to runtime classes, which :mod:`harness_lab.codec` cannot
    read); False if the module is still loading.

    A compiled module imported by another is in ``sys.modules`` while its body runs; a class
    its body has not defined yet is missing, and the module is documented on a later call.
    """
    facts = _source_facts(source)
    if facts is None:
        return True
    module_doc, classes = facts
    module.__doc__ = module_doc
    complete = True
    for name, doc, hints in classes:
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            complete = False
            continue
        try:
            if doc:
                cls.__doc__ = doc
            if hints:
                cls.__annotations__ = dict(hints)
        except (AttributeError, TypeError):  # an immutable type keeps its own
            pass
    return complete


ClassFacts = tuple[str, str | None, tuple[tuple[str, str], ...]]


@functools.cache
def _source_facts(source: Path) -> tuple[str | None, tuple[ClassFacts, ...]] | None:
    """The module docstring and, for each top-level class of ``source``, its docstring and
    annotations (as source text), parsed once however often a half-loaded module is visited;
    None when it cannot be read."""
    try:
        tree = ast.parse(source.read_bytes())
    except (OSError, SyntaxError):
        return None
    return ast.get_docstring(tree), tuple(
        (node.name, ast.get_docstring(node), tuple(
            (item.target.id, ast.unparse(item.annotation)) for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)))
        for node in tree.body if isinstance(node, ast.ClassDef))


def _install() -> CoreBuild:
    names = compiled_module_names()
    build = decide_build(names)
    sys.meta_path.insert(0, _CoreFinder(names, build.compiled))
    if (not build.compiled and not build.reason.startswith(PURE_ENV)
            and any(_extension_of(n) is not None for n in names)):
        _warn_pure(build.reason)
    return build


def _warn_pure(reason: str) -> None:
    """Warn that the pure-Python core runs, and why, in lines of 80 columns at the most: the
    warning is the package's, not a line's, so it names the package rather than the
    importing file (whose path alone may take half a terminal)."""
    text = "harness_lab runs its pure-Python core:\n" + textwrap.fill(
        reason, 78, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)
    warnings.warn_explicit(text, RuntimeWarning, "harness_lab", 0, module="harness_lab")


_BUILD = _install()


def core_build() -> CoreBuild:
    """The run core's build serving this process (decided when the package was imported)."""
    return _BUILD
