"""Build of harness_lab: the pure-Python package, with its run core compiled by mypyc.

The modules a simulated run executes (listed in ``harness_lab/_compiled.txt``) are compiled
to C extension modules by mypyc from the same, type-checked source, when a C compiler is
there. The compiled core is optional: without a compiler, or with ``HARNESS_LAB_PURE=1`` in
the environment at install time, the package installs as pure Python and behaves the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import setup

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


def _record_sources(paths: list[str]) -> None:
    """Write the hash of every compiled source to ``_compiled.lock``.

    At import, ``harness_lab.native`` compares them with the sources beside the compiled
    modules and runs the pure-Python core when one changed since this build.
    """
    digests = {path.removesuffix(".py").replace("/", "."):
               hashlib.sha256((HERE / path).read_bytes()).hexdigest() for path in paths}
    (PACKAGE / "_compiled.lock").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


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
    try:
        extensions = mypycify([*options, *paths], opt_level="3", debug_level="0",
                              group_name="harness_lab")
    except (Exception, SystemExit) as exc:  # a mypy release that cannot compile this source
        print(f"harness_lab: the run core stays pure Python: mypyc failed: {exc}",
              file=sys.stderr)
        return []
    _record_sources(paths)
    for extension in extensions:
        extension.optional = True  # no C compiler: a warning, and the pure modules serve
    return extensions


setup(ext_modules=_extensions())
