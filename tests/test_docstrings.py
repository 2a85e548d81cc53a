"""Every module, public class, public function and public method has a docstring.

The source is read, not the imported objects: the compiled run core keeps no docstrings of
functions and methods, and the rule is about the code either way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness_lab

PACKAGE = Path(harness_lab.__file__).resolve().parent


def _public(node: ast.AST) -> bool:
    return (isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("_"))


def public_names_without_docstrings(package: Path = PACKAGE) -> list[str]:
    missing: list[str] = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        if module.endswith("__main__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not ast.get_docstring(tree):
            missing.append(module)
        for node in filter(_public, tree.body):
            if not ast.get_docstring(node):  # type: ignore[arg-type]
                missing.append(f"{module}.{node.name}")  # type: ignore[attr-defined]
            if isinstance(node, ast.ClassDef):
                missing += [f"{module}.{node.name}.{item.name}" for item in node.body
                            if _public(item) and not isinstance(item, ast.ClassDef)
                            and not ast.get_docstring(item)]  # type: ignore[arg-type]
    return missing


def test_every_public_name_of_the_package_has_a_docstring() -> None:
    assert public_names_without_docstrings() == []


def test_the_check_names_each_public_name_without_a_docstring(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text(
        '"""A module."""\n\n\nclass Shown:\n    """A class."""\n\n'
        '    def method(self):\n        return 1\n\n    def _hidden(self):\n        return 2\n'
        '\n\ndef helper():\n    return 3\n\n\ndef _private():\n    return 4\n')
    (package / "bare.py").write_text("X = 1\n")
    assert public_names_without_docstrings(package) == [
        "pkg.bare", "pkg.mod.Shown.method", "pkg.mod.helper"]
