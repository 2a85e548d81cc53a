"""The package's imports point down its layers, and no group of modules imports itself around.

Every import counts, at the top of a module or inside a function (a lazy import hides a cycle
from Python, not from the design); imports under ``if TYPE_CHECKING:`` never run and do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "harness_lab"

LAYERS: tuple[tuple[str, ...], ...] = (
    # the vocabulary: states, values, messages, the clock's and the terminal's devices
    ("version", "codec", "bounded_json", "atomic", "redact", "pool", "states", "errors",
     "frozen", "bounds", "lazy", "native", "json_text", "speedups", "parent_watch",
     "background_http", "messages", "ports", "trace", "sse", "outcome_table", "defects",
     "yaml_lines", "pytest_session", "terminal.console", "terminal.progress"),
    ("core", "config"),
    ("columns",),
    ("tools", "diagnosis", "release", "store", "fakes"),
    ("application", "record", "harness", "invariant_rules", "invariants"),
    # the lab: what runs, records and replays the harness
    ("scenarios", "scripted", "runner", "recorded", "sweep", "explore", "live", "logs", "audit",
     "otel"),
    # presentation: it reads the lab's values, never the reverse
    ("explanation", "report", "terminal"),
    # what people call: the command line, the pytest plugin, the public package
    ("cli", "pytest_plugin", "scaffold", "__main__", ""),
)
"""Each layer may import its own and lower layers only (a module belongs to the layer that
names its longest dotted prefix below ``harness_lab``)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(source: str, name: str, modules: set[str], *, is_package: bool = False
             ) -> set[str]:
    """The package's modules that module ``name`` (its ``source``) imports anywhere, blocks
    under ``if TYPE_CHECKING:`` aside."""
    package = name if is_package else name.rpartition(".")[0]

    def known(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(m for a in node.names if (m := known(a.name)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                m = known(full) if full in modules else known(base)
                if m:
                    found.add(m)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    return {m: imported(p.read_text(encoding="utf-8"), m, set(files),
                        is_package=p.name == "__init__.py") for m, p in files.items()}


def layer_of(module: str) -> int:
    rest = module.partition(".")[2]
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for prefix in names:
            if rest == prefix or rest.startswith(prefix + ".") or (prefix == "" and rest == ""):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")
    return best[1]


def groups(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_every_module_of_the_package_belongs_to_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if layer_of(b) > layer_of(a))
    assert upward == []


def test_no_import_cycle_is_longer_than_two_modules() -> None:
    cycles = [g for g in groups(import_graph()) if len(g) > 2]
    assert cycles == []


def test_an_import_inside_a_function_counts_and_one_for_type_checking_does_not() -> None:
    modules = set(import_graph())
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from harness_lab.explanation import explain\n"
              "def f():\n    from harness_lab.report.frames import runs_frame\n")
    assert imported(source, "harness_lab.record", modules) == {"harness_lab.report.frames"}


def test_a_presentation_import_from_a_value_class_would_be_upward() -> None:
    assert layer_of("harness_lab.report.frames") > layer_of("harness_lab.record")
    assert layer_of("harness_lab.terminal.tables") > layer_of("harness_lab.runner.run")
    assert layer_of("harness_lab.terminal.progress") < layer_of("harness_lab.runner.run")


def test_a_cycle_of_three_modules_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [g for g in groups(graph) if len(g) > 2] == [["a", "b", "c"]]
