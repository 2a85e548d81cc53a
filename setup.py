"""Build of harness_lab: the pure-Python package, with its run core compiled by mypyc.

The modules a simulated run executes (listed in ``harness_lab/_compiled.txt``) are compiled
to C extension modules by mypyc from the same, type-checked source, when a C compiler is
there. The compiled core is optional: without a compiler, or with ``HARNESS_LAB_PURE=1`` in
the environment at install time, the package installs as pure Python and behaves the same.

A build reuses the extension modules of an earlier build in the same tree (an editable
install builds them in place) when every compiled source is unchanged since then, as
``_compiled.lock`` records: installing again, for instance with the test extra after the first
install, then takes seconds instead of a minute of compiling.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import shutil
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "harness_lab"
# the commands that build modules; metadata steps (egg_info, dist_info) skip the compiler
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _compiled_modules() -> list[str]:
    """The source files of the run core, one path per line of ``_compiled.txt``.

    ``harness_lab.native`` reads the same listing at run time; the build cannot import the
    package (its dependencies are not in the build environment), so it reads it here too.
    """
    listing = PACKAGE / "_compiled.txt"
    lines = (line.split("#", 1)[0].strip() for line in listing.read_text().splitlines())
    return [f"harness_lab/{line}" for line in lines if line]


def _digests(paths: list[str]) -> dict[str, str]:
    """The SHA-256 of each source, keyed by its module's dotted name."""
    return {path.removesuffix(".py").replace("/", "."):
            hashlib.sha256((HERE / path).read_bytes()).hexdigest() for path in paths}


def _record_sources(paths: list[str]) -> None:
    """Write the hash of every compiled source to ``_compiled.lock``.

    At import, ``harness_lab.native`` compares them with the sources beside the compiled
    modules and runs the pure-Python core when one changed since this build.
    """
    text = json.dumps(_digests(paths), indent=1, sort_keys=True) + "\n"
    (PACKAGE / "_compiled.lock").write_text(text)


def _built_in_place(paths: list[str]) -> dict[str, Path] | None:
    """The extension file of each module of an earlier in-place build of these very sources.

    None unless every source hashes as ``_compiled.lock`` recorded and every extension
    (the module shims and mypyc's shared library) exists for this Python.
    """
    try:
        recorded = json.loads((PACKAGE / "_compiled.lock").read_text())
    except (OSError, ValueError):
        return None
    if recorded != _digests(paths):
        return None
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    files = {name: HERE.joinpath(*name.split(".")).with_suffix(suffix) for name in recorded}
    files["harness_lab__mypyc"] = HERE / f"harness_lab__mypyc{suffix}"
    return files if all(f.is_file() for f in files.values()) else None


class _ParallelBuildExt(build_ext):
    """Compiles the C files of one extension on every core (mypyc writes one per module)."""

    def build_extension(self, ext: Extension) -> None:
        """Build ``ext``, its sources compiled in parallel."""
        compile_one = self.compiler.compile

        def compile_all(sources: list[str], *args: object, **kwargs: object) -> list[str]:
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                parts = list(pool.map(lambda s: compile_one([s], *args, **kwargs), sources))
            return [obj for part in parts for obj in part]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = compile_one


class _ReusingBuildExt(build_ext):
    """Copies the extensions of an earlier in-place build instead of compiling them."""

    reused: dict[str, Path] = {}

    def build_extension(self, ext: Extension) -> None:
        """Copy the earlier build's file of ``ext`` into the build directory."""
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.reused[ext.name], target)

    def copy_extensions_to_source(self) -> None:
        """Leave in place the files that are already there (loaded by running processes)."""
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            inplace, regular = self._get_inplace_equivalent(build_py, ext)
            if not (os.path.exists(inplace) and filecmp.cmp(inplace, regular, shallow=False)):
                self.copy_file(regular, inplace, level=self.verbose)


def _extensions() -> list[object]:
    """mypyc's extension modules for the run core, or none when the build stays pure."""
    if os.environ.get("HARNESS_LAB_PURE", "") not in ("", "0") or not BUILDS & set(sys.argv):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without the mypy build requirement: pure Python
        return []
    # the build environment holds mypy alone: the project's mypy settings name a pydantic
    # plugin, so the compiler gets its own options: third-party types are Any, whatever
    # happens to be installed, so every build compiles the same code
    options = ["--config-file=", "--no-site-packages", "--ignore-missing-imports",
               "--python-version=3.11"]
    paths = _compiled_modules()
    reused = _built_in_place(paths)
    if reused is not None:
        print("harness_lab: the run core is unchanged since it was compiled; reusing it",
              file=sys.stderr)
        _ReusingBuildExt.reused = reused
        CMDCLASS["build_ext"] = _ReusingBuildExt
        return [Extension(name, sources=[]) for name in reused]
    try:
        extensions = mypycify([*options, *paths], opt_level="3", debug_level="0",
                              group_name="harness_lab", multi_file=True)
    except (Exception, SystemExit) as exc:  # a mypy release that cannot compile this source
        print(f"harness_lab: the run core stays pure Python: mypyc failed: {exc}",
              file=sys.stderr)
        return []
    _record_sources(paths)
    CMDCLASS["build_ext"] = _ParallelBuildExt
    for extension in extensions:
        extension.optional = True  # no C compiler: a warning, and the pure modules serve
    return extensions


CMDCLASS: dict[str, type] = {}
setup(ext_modules=_extensions(), cmdclass=CMDCLASS)
