"""The command line sits on top of the package and its arrows point down: no library module
imports ``harness_lab.cli``, a command imports only ``harness_lab.cli.common`` of the command
line, and ``common`` imports no other part of it.

The source is read, so an import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness_lab

PACKAGE = Path(harness_lab.__file__).resolve().parent
CLI = PACKAGE / "cli"
COMMON = "harness_lab.cli.common"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of the module at ``path`` inside ``package``."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in it; ``from X import
    Y`` counts as X and as X.Y, since Y may be a module."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[:len(module.split(".")) - node.level]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def cli_imports(path: Path, package: Path = PACKAGE) -> set[str]:
    """The modules of the command line the module at ``path`` imports."""
    found = imported(path.read_text(encoding="utf-8"), module_name(path, package))
    return {name for name in found
            if name == f"{package.name}.cli" or name.startswith(f"{package.name}.cli.")}


def test_no_module_outside_the_command_line_imports_it() -> None:
    upward = {module_name(path): sorted(found) for path in sorted(PACKAGE.rglob("*.py"))
              if CLI not in path.parents and path != PACKAGE / "__main__.py"
              and (found := cli_imports(path))}
    assert upward == {}


def _beside_common(names: set[str]) -> list[str]:
    """``names`` but ``common`` and the names imported from it."""
    return sorted(n for n in names if n != COMMON and not n.startswith(f"{COMMON}."))


def test_a_command_imports_nothing_of_the_command_line_but_common() -> None:
    sideways = {module_name(path): beside for path in sorted(CLI.glob("*.py"))
                if path.stem not in ("__init__", "__main__", "dispatch", "common")
                and (beside := _beside_common(cli_imports(path)))}
    assert sideways == {}


def test_common_imports_no_other_module_of_the_command_line() -> None:
    assert cli_imports(CLI / "common.py") == set()


def test_the_check_finds_imports_in_functions_and_relative_ones(tmp_path: Path) -> None:
    package = tmp_path / "harness_lab"
    (package / "report").mkdir(parents=True)
    (package / "report" / "mod.py").write_text(
        "import json\n\n\ndef late():\n    from harness_lab.cli import common\n"
        "    from ..cli.run import register\n    import harness_lab.cli.dispatch\n")
    assert cli_imports(package / "report" / "mod.py", package) == {
        "harness_lab.cli", "harness_lab.cli.common", "harness_lab.cli.run",
        "harness_lab.cli.run.register", "harness_lab.cli.dispatch"}
