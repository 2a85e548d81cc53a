"""Mutation testing of the lifecycle rules, judged by the scenario library; prints figures.

    python benchmarks/mutation.py                         # every rule module, all cores
    python benchmarks/mutation.py --changed-since main    # only lines changed since a commit
    python benchmarks/mutation.py --modules release/pipeline.py --sample 50 --seed 1

Each mutant is one change that cosmic-ray's operators make to a rule module (``core/``,
``release/``, ``tools/``, ``diagnosis/``, ``sse.py``, ``application/chat.py``,
``application/live.py``): a comparison, a number, a boolean, an operator, an exception. The
test is what a user runs: ``harness-lab run scenarios`` on the pure-Python core (its
expectations and every lifecycle invariant), in a copy of the package per worker, so the
workers never see each other's mutants. A mutant is *killed* when that run fails (or times
out, or cannot import), *survived* when the whole library still passes.

Mutants that are equivalent by construction are left out before anything runs, each with
its reason: a change inside a type annotation (the modules use postponed annotations, which
never run), a decorator's arguments (dataclass flags), a parameter's default value, the bare
``*`` of a signature, ``is`` against ``==`` (the state axes are enums, compared by identity
or equality alike), or code that only counts when a seeded defect is on (the other operands of
``... and Defect.X in config.defects``, and what such a condition guards: off in every
harness a user builds; the seeded defects are tested by ``benchmarks/defect_table.py``).

**Only the scenarios that reach the mutant.** Before judging, the library is run once under
coverage, each scenario file in a context of its own: a mutant is judged by the files that
execute a line of the statement it changes (a scenario that never executes it cannot behave
otherwise), by every file when that statement runs at import, and by none when no scenario
reaches it: it survives as *unreached* without running. ``--all-scenarios`` judges every
mutant by the whole library instead (the same outcomes, several times slower).

Results are kept in ``--results`` (JSON Lines, keyed by module text, operator and occurrence),
so a second run, or ``--changed-since``, runs only the mutants it has not judged yet.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import dataclasses
import fnmatch
import functools
import hashlib
import json
import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness_lab"
RULE_MODULES = ("core", "release", "tools", "diagnosis", "sse.py", "application/chat.py",
                "application/live.py")
"""The rule modules: where the lifecycle document's rules are decided."""

NOT_RULES = {
    "core/stepping.py": "simpy's own event loop, faster, as the compiled core drives it (the "
                        "pure core the library judges on uses simpy's): held equal to simpy "
                        "by tests/core/test_stepping.py",
    "core/clocked.py": "an environment on another clock (the live server's wall clock), "
                       "held equal to simpy's by tests/core/test_clocked.py",
}
"""Modules under the rule packages that decide no rule, with where they are tested instead."""

EQUIVALENT_OPERATORS = {
    "core/ReplaceComparisonOperator_Is_Eq": "is and == agree on enum members",
    "core/ReplaceComparisonOperator_Eq_Is": "is and == agree on enum members",
    "core/ReplaceComparisonOperator_IsNot_NotEq": "is not and != agree on enum members",
    "core/ReplaceComparisonOperator_NotEq_IsNot": "is not and != agree on enum members",
}
"""Operators whose mutants of these modules are equivalent, with the reason."""

DEFAULT_RESULTS = ROOT / ".mutation" / "results.jsonl"
DEFAULT_TEST_RESULTS = ROOT / ".mutation" / "results-tests.jsonl"
"""Where mutants judged by ``--tests`` are kept: a mutant's outcome depends on its judge."""
AT_IMPORT = "(import)"
"""The coverage context of what runs when the package is imported: every scenario's."""

Reach = dict[str, dict[int, frozenset[str]]]
"""For each rule module (relative to the package), the scenario files executing each line."""


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation: which module, which operator, which occurrence of it, where."""

    module: str  # relative to the package, e.g. "release/pipeline.py"
    operator: str
    occurrence: int
    line: int
    digest: str  # of the module's text: a result holds for that text only

    @property
    def key(self) -> str:
        """The mutant's identity across runs."""
        return f"{self.module}:{self.digest[:12]}:{self.operator}:{self.occurrence}"


def rule_modules(names: Sequence[str] = RULE_MODULES) -> list[Path]:
    """The ``.py`` files under the named packages or modules of harness_lab."""
    files: list[Path] = []
    for name in names:
        path = PACKAGE / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [f for f in files if (f.name != "__init__.py" or f.stat().st_size > 200)
            and str(f.relative_to(PACKAGE)) not in NOT_RULES]


SEEDED = "seeded-defect code (off unless a seeded defect is on)"


def _seeded(node: ast.AST) -> bool:
    """``Defect.X in ....defects`` or the lifecycle's ``allow_override`` flag: a seeded-defect
    switch, false in every harness not seeded with that defect."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
        left = node.left
        return (isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name)
                and left.value.id == "Defect")
    return isinstance(node, ast.Attribute) and node.attr == "allow_override"


def _guarded(test: ast.AST) -> bool:
    """A condition that is false whenever seeded defects are off."""
    return _seeded(test) or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                             and any(_seeded(v) for v in test.values))


VALUE_CLASS = "the dataclass decorator of a value class with its own __init__"
PROTOCOL = "a Protocol's member, read by the type checker only"


def _names_dataclass(decorator: ast.expr) -> bool:
    """``@dataclass`` or ``@dataclass(...)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Name) and target.id == "dataclass"


def _own_init(node: ast.ClassDef) -> bool:
    """A ``@dataclass`` class that writes its own ``__init__``."""
    return (any(_names_dataclass(d) for d in node.decorator_list)
            and any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body))


def _spans(tree: ast.AST) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """Source spans whose mutants are equivalent by construction, with the reason."""
    spans = []

    def add(node: ast.AST | None, why: str) -> None:
        if node is not None and hasattr(node, "lineno"):
            spans.append(((node.lineno, node.col_offset),
                          (node.end_lineno or node.lineno, node.end_col_offset or 0), why))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.args.kwonlyargs and node.args.vararg is None:
                # the bare ``*`` before keyword-only parameters, which an operator mutates
                # as if it multiplied: every caller passes those parameters by keyword
                spans.append(((node.lineno, node.col_offset),
                              (node.args.kwonlyargs[0].lineno,
                               node.args.kwonlyargs[0].col_offset), "keyword-only marker"))
            add(node.returns, "annotation")
            for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg):
                if arg is not None:
                    add(arg.annotation, "annotation")
            for default in (*node.args.defaults, *node.args.kw_defaults):
                add(default, "parameter default")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for decorator in node.decorator_list:
                add(decorator, "decorator")
        if isinstance(node, ast.AnnAssign):
            add(node.annotation, "annotation")
        if isinstance(node, ast.ClassDef) and _own_init(node):
            # a value class that builds itself: without ``@dataclass`` it still builds, reads
            # and is passed around alike; what the decorator adds (equality, hashing, repr,
            # slots, frozenness) no rule uses. (Its field defaults are not left out: the
            # codec reads them, and a scenario can see that.)
            for decorator in node.decorator_list:
                if _names_dataclass(decorator):
                    spans.append(((decorator.lineno, 0), (decorator.lineno + 1, 0), VALUE_CLASS))
        if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases):
            # a Protocol's members describe a type to the checker; nothing runs them
            for member in node.body:
                if isinstance(member, ast.FunctionDef) and member.decorator_list:
                    first = member.decorator_list[0]
                    spans.append(((first.lineno, 0), (first.lineno + 1, 0), PROTOCOL))
        # what only counts when a seeded defect is on: the other operands of a conjunction
        # with its switch, and what such a condition guards
        if isinstance(node, ast.BoolOp) and _guarded(node):
            for value in node.values:
                if not _seeded(value):
                    add(value, SEEDED)
        if isinstance(node, ast.If) and _guarded(node.test):
            for statement in node.body:
                add(statement, SEEDED)
        if isinstance(node, ast.IfExp) and _guarded(node.test):
            add(node.body, SEEDED)
    return spans


ORDERED = "an ordering of enum members that picks out the same members"
_ORDERING = re.compile(r"core/ReplaceComparisonOperator_(Is|IsNot|Eq|NotEq)_(Lt|LtE|Gt|GtE)")
_OPS = {"Is": operator.eq, "Eq": operator.eq, "IsNot": operator.ne, "NotEq": operator.ne,
        "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge}


def _member(node: ast.AST, module: str) -> Enum | None:
    """The enum member ``node`` names (``RunState.RUNNING``), from harness_lab.states or the
    module itself; None for anything else."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    import importlib

    own = "harness_lab." + module.removesuffix(".py").replace("/", ".")
    for name in ("harness_lab.states", own):
        owner = getattr(importlib.import_module(name), node.value.id, None)
        if isinstance(owner, type) and issubclass(owner, Enum):
            found = getattr(owner, node.attr, None)
            return found if isinstance(found, Enum) else None
    return None


def ordering_equivalent(tree: ast.AST, module: str, operator_name: str,
                        pos: tuple[int, int]) -> bool:
    """``x is M`` turned into ``x < M`` (and the like) where ``M`` is an enum member: the
    string-valued members compare as their values, and when the new comparison is true for
    exactly the members the old one was, no run can tell them apart (``x`` being a member
    of that enum, as the type checker holds it)."""
    found = _ORDERING.fullmatch(operator_name)
    if found is None:
        return False
    before, after = _OPS[found.group(1)], _OPS[found.group(2)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                and (node.lineno, node.col_offset) <= pos
                < (node.end_lineno or node.lineno, node.end_col_offset or 0)):
            continue
        left, right = node.left, node.comparators[0]
        member, on_right = _member(right, module), True
        if member is None:
            member, on_right = _member(left, module), False
        if member is None:
            return False
        try:
            return all(
                (before(x, member) == after(x, member)) if on_right
                else (before(member, x) == after(member, x)) for x in type(member))
        except TypeError:  # members that do not order: the mutant raises, it is not this
            return False
    return False


def _inside(pos: tuple[int, int], span: tuple[tuple[int, int], tuple[int, int], str]) -> bool:
    start, end, _ = span
    return start <= pos < end


EQUIVALENTS = Path(__file__).with_name("equivalent_mutants.yaml")
"""Mutants shown equivalent one by one, each with its reason (a list of ``module``, ``code``:
the line as written, ``operators``: shell patterns of operator names, ``reason``)."""


def listed_equivalents(path: Path = EQUIVALENTS) -> list[dict[str, Any]]:
    """The entries of :data:`EQUIVALENTS`."""
    import yaml

    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    for entry in entries:
        missing = {"module", "code", "operators", "reason"} - set(entry)
        if missing:
            sys.exit(f"mutation: {path}: an entry lacks {sorted(missing)}: {entry}")
    return entries


def _listed(module: str, code: str, operator: str, entries: Sequence[dict[str, Any]],
            mutated: Callable[[], str]) -> str | None:
    """The reason ``entries`` give for this mutant, if they list it. An entry with
    ``mutated`` (the line as the mutant makes it, stripped) lists only that mutant of the
    line; ``mutated()`` gives it, computed only when an entry asks."""
    name = operator.split("/")[-1]
    for entry in entries:
        if (entry["module"] == module and entry["code"] == code
                and any(fnmatch.fnmatchcase(name, pattern) for pattern in entry["operators"])
                and ("mutated" not in entry or entry["mutated"] == mutated())):
            return "listed: " + str(entry["reason"]).split(":")[0]
    return None


def mutated_text(text: str, operator: str, occurrence: int) -> str | None:
    """``text`` with the ``occurrence``-th change of ``operator`` made (None: it makes none)."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    mutated: str | None = mutate_code(text, get_operator(operator)(), occurrence)
    return mutated


def _mutated_line(text: str, operator: str, occurrence: int, line: int) -> str:
    """Line ``line`` of ``text`` as the mutant makes it, stripped ("" when it makes none)."""
    mutated = mutated_text(text, operator, occurrence)
    return mutated.splitlines()[line - 1].strip() if mutated is not None else ""


def enumerate_mutants(files: Iterable[Path]) -> tuple[list[Mutant], Counter[str]]:
    """Every mutant of ``files``, and how many were left out as equivalent, by reason."""
    from cosmic_ray.commands.init import _all_work_items

    mutants: list[Mutant] = []
    left_out: Counter[str] = Counter()
    entries = listed_equivalents()
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        digest = hashlib.sha256(text.encode()).hexdigest()
        tree = ast.parse(text)
        spans = _spans(tree)
        module = str(path.relative_to(PACKAGE))
        for item in _all_work_items([path], {}):
            spec = item.mutations[0]
            if spec.operator_name in EQUIVALENT_OPERATORS:
                left_out[EQUIVALENT_OPERATORS[spec.operator_name]] += 1
                continue
            listed = _listed(module, lines[spec.start_pos[0] - 1].strip(), spec.operator_name,
                             entries, functools.partial(_mutated_line, text, spec.operator_name,
                                                        spec.occurrence, spec.start_pos[0]))
            if listed is not None:
                left_out[listed] += 1
                continue
            # cosmic-ray's positions are parso's: 1-based lines, 0-based columns, as ast's
            if ordering_equivalent(tree, module, spec.operator_name, tuple(spec.start_pos)):
                left_out[ORDERED] += 1
                continue
            why = next((s[2] for s in spans if _inside(tuple(spec.start_pos), s)
                        and (s[2] != "keyword-only marker"
                             or spec.operator_name.startswith("core/ReplaceBinaryOperator_Mul_"))),
                       None)
            if why is not None:
                left_out[why] += 1
                continue
            mutants.append(Mutant(module, spec.operator_name,
                                  spec.occurrence, spec.start_pos[0], digest))
    return mutants, left_out


def changed_lines(since: str, module: str) -> set[int]:
    """Lines of ``module`` (relative to the package) added or changed since commit ``since``."""
    out = subprocess.run(["git", "diff", "-U0", since, "--", f"harness_lab/{module}"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines: set[int] = set()
    for m in re.finditer(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", out, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        lines.update(range(start, start + count))
    return lines


class Worker:
    """A private copy of the package in which one mutant at a time is applied and judged."""

    def __init__(self, scenarios: Sequence[str], timeout_s: float,
                 tests: Sequence[str] = ()) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="harness-lab-mutant-"))
        skip = shutil.ignore_patterns("*.so", "__pycache__", "*.pyc", "harness_logs")
        shutil.copytree(PACKAGE, self.home / "harness_lab", ignore=skip)
        if tests:  # the tests judge in the copy, beside the package they import
            for name in ("tests", "scenarios"):
                shutil.copytree(ROOT / name, self.home / name, ignore=skip)
            for name in ("conftest.py", "pyproject.toml"):
                shutil.copy(ROOT / name, self.home / name)
        self.scenarios = [str(Path(s).resolve()) for s in scenarios]
        self.tests = list(tests)
        self.timeout_s = timeout_s

    def judge(self, mutant: Mutant, scenarios: Sequence[str] | None = None) -> tuple[str, str]:
        """``(outcome, diff line)``: killed, survived, timeout or incompetent; judged by
        ``scenarios`` (files of the library) when given, else by the whole library."""
        target = self.home / "harness_lab" / mutant.module
        original = (PACKAGE / mutant.module).read_text(encoding="utf-8")
        mutated = mutated_text(original, mutant.operator, mutant.occurrence)
        if mutated is None:
            return "incompetent", ""
        changed = _first_change(original, mutated)
        target.write_text(mutated, encoding="utf-8")
        try:
            return self._run(self.scenarios if scenarios is None else scenarios), changed
        finally:
            target.write_text(original, encoding="utf-8")

    def describe(self, mutant: Mutant) -> tuple[str, str]:
        """``("unreached", diff line)`` for a mutant no scenario reaches (or incompetent)."""
        original = (PACKAGE / mutant.module).read_text(encoding="utf-8")
        mutated = mutated_text(original, mutant.operator, mutant.occurrence)
        if mutated is None:
            return "incompetent", ""
        return "unreached", _first_change(original, mutated)

    def _run(self, scenarios: Sequence[str]) -> str:
        env = {**os.environ, "HARNESS_LAB_PURE": "1", "PYTHONPATH": str(self.home),
               "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", "COLUMNS": "200"}
        command = judge_command(scenarios, self.tests)
        try:
            done = subprocess.run(command, cwd=self.home, env=env,
                                  capture_output=True, timeout=self.timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return "timeout"
        return "survived" if done.returncode == 0 else "killed"

    def close(self) -> None:
        """Delete the copy."""
        shutil.rmtree(self.home, ignore_errors=True)


def map_reach(scenarios: Sequence[str]) -> Reach:
    """Run the library once under coverage (pure core, one context per scenario file); which
    files execute each line of each module of the package."""
    with tempfile.TemporaryDirectory(prefix="harness-lab-reach-") as tmp:
        out = Path(tmp) / "reach.json"
        env = {**os.environ, "HARNESS_LAB_PURE": "1", "NO_COLOR": "1"}
        done = subprocess.run([sys.executable, __file__, "--map-reach", str(out), "--scenarios",
                               *scenarios], cwd=ROOT, env=env, capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            sys.exit(f"mutation: mapping what each scenario reaches failed\n{done.stderr[-2000:]}")
        raw = json.loads(out.read_text(encoding="utf-8"))
    return {module: {int(line): frozenset(files) for line, files in lines.items()}
            for module, lines in raw.items()}


def _write_reach(out: Path, scenarios: Sequence[str]) -> None:
    """In a process of its own: what :func:`map_reach` returns, written to ``out`` as JSON."""
    import importlib

    import coverage

    cov = coverage.Coverage(data_file=None, include=[f"{PACKAGE}/*"])
    cov.start()
    cov.switch_context(AT_IMPORT)
    for path in rule_modules():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        importlib.import_module(module.removesuffix(".__init__"))
    from harness_lab.runner.run import plan_paths

    for entry in plan_paths(scenarios):
        if entry.loaded is not None:
            cov.switch_context(str(Path(entry.loaded.path).resolve()))
        entry.run()
    cov.stop()
    data = cov.get_data()
    reach: dict[str, dict[int, list[str]]] = {}
    for name in data.measured_files():
        by_line = data.contexts_by_lineno(name)
        reach[str(Path(name).relative_to(PACKAGE))] = {
            line: sorted(c for c in contexts if c) for line, contexts in by_line.items()}
    out.write_text(json.dumps(reach), encoding="utf-8")


def judges(mutant: Mutant, reach: Reach, statements: dict[str, list[tuple[int, int]]]
           ) -> list[str] | None:
    """The scenario files that reach ``mutant``'s statement (sorted), ``[]`` when none does,
    None when it runs at import (every file judges it)."""
    lines = reach.get(mutant.module, {})
    first, last = min(((a, b) for a, b in statements[mutant.module] if a <= mutant.line <= b),
                      key=lambda span: span[1] - span[0], default=(mutant.line, mutant.line))
    files: set[str] = set()
    for line in range(first, last + 1):
        files |= lines.get(line, frozenset())
    if AT_IMPORT in files:
        return None
    return sorted(files)


def statement_spans(module: str) -> list[tuple[int, int]]:
    """The first and last line of every statement of ``module`` (relative to the package)."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    return [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.stmt)]


def _first_change(before: str, after: str) -> str:
    for n, (a, b) in enumerate(zip(before.splitlines(), after.splitlines(), strict=False), 1):
        if a != b:
            return f"{n}: {a.strip()}  ->  {b.strip()}"
    return ""


def _load(results: Path) -> dict[str, dict[str, str]]:
    if not results.exists():
        return {}
    out = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["key"]] = row
    return out


def judge_command(scenarios: Sequence[str], tests: Sequence[str] = ()) -> list[str]:
    """What judges a mutant: ``harness-lab run`` over ``scenarios``, or pytest over
    ``tests`` (in one process, stopping at the first failure) when any are given."""
    if tests:
        return [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
                *tests]
    return [sys.executable, "-m", "harness_lab", "run", *scenarios, "--no-log"]


def baseline_seconds(scenarios: Sequence[str], tests: Sequence[str] = ()) -> float:
    """How long the unmutated judge takes (it must pass)."""
    env = {**os.environ, "HARNESS_LAB_PURE": "1", "NO_COLOR": "1"}
    started = time.perf_counter()
    done = subprocess.run(judge_command(scenarios, tests), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        judge = "tests" if tests else "scenario library"
        sys.exit(f"mutation: the unmutated {judge} does not pass; fix that first\n"
                 + done.stdout[-2000:])
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mutants and print the figures; exit 1 below ``--fail-under``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modules", nargs="+", default=list(RULE_MODULES),
                   help="packages or modules under harness_lab/ to mutate (the rule modules)")
    p.add_argument("--scenarios", nargs="+", default=[str(ROOT / "scenarios")],
                   help="what judges a mutant (default: the scenario library)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--changed-since", metavar="REV",
                   help="only mutants on lines changed since this commit")
    p.add_argument("--sample", type=int, help="a seeded random sample of this many mutants")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                   help="JSON Lines of judged mutants, reused when the module is unchanged")
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument("--fail-under", type=float, default=0.0,
                   help="exit 1 when the killed share (percent) is below this")
    p.add_argument("--survivors", action="store_true",
                   help="judge again the mutants that survived (after scenarios were added)")
    p.add_argument("--all-scenarios", action="store_true",
                   help="judge every mutant by the whole library, not by the scenarios that "
                        "reach it")
    p.add_argument("--tests", nargs="+", default=[], metavar="PATH",
                   help="judge each mutant by these pytest files instead of the library "
                        "(for a module whose judge is its own tests, such as "
                        "invariant_rules.py, which judges the library); results go to "
                        f"{DEFAULT_TEST_RESULTS.relative_to(ROOT)} unless --results says")
    p.add_argument("--map-reach", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tests and args.results == DEFAULT_RESULTS:
        args.results = DEFAULT_TEST_RESULTS
    if args.map_reach is not None:  # the child process of map_reach
        _write_reach(args.map_reach, args.scenarios)
        return 0

    mutants, left_out = enumerate_mutants(rule_modules(args.modules))
    if args.changed_since:
        changed = {m: changed_lines(args.changed_since, m) for m in {x.module for x in mutants}}
        mutants = [m for m in mutants if m.line in changed[m.module]]
    if args.sample is not None and args.sample < len(mutants):
        mutants = sorted(random.Random(args.seed).sample(mutants, args.sample),
                         key=lambda m: (m.module, m.line, m.operator, m.occurrence))
    if args.list:
        for m in mutants:
            print(f"{m.module}:{m.line} {m.operator} #{m.occurrence}")
        print(f"{len(mutants)} mutants; left out as equivalent: {dict(left_out)}")
        return 0
    known = _load(args.results)
    if args.survivors:
        known = {k: row for k, row in known.items()
                 if row["outcome"] not in ("survived", "unreached")}
    todo = [m for m in mutants if m.key not in known]
    print(f"{len(mutants)} mutants ({len(mutants) - len(todo)} judged before), "
          f"{sum(left_out.values())} left out as equivalent: {dict(left_out)}", flush=True)
    if todo:
        seconds = baseline_seconds(args.scenarios, args.tests)
        judge = "the tests pass" if args.tests else "the library passes"
        print(f"{judge} unmutated in {seconds:.1f} s; {args.workers} worker(s)", flush=True)
        _judge_all(todo, args, timeout_s=max(10.0, 4 * seconds), known=known)
    return _report(mutants, known, args.fail_under)


def _judge_all(todo: Sequence[Mutant], args: argparse.Namespace, *, timeout_s: float,
               known: dict[str, dict[str, str]]) -> None:
    args.results.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    reach: Reach | None = None
    if not args.all_scenarios and not args.tests:
        started = time.perf_counter()
        reach = map_reach(args.scenarios)
        print(f"what each scenario file reaches, mapped in {time.perf_counter() - started:.1f} s",
              flush=True)
    spans = {module: statement_spans(module) for module in {m.module for m in todo}}
    pool = [Worker(args.scenarios, timeout_s, args.tests) for _ in range(max(1, args.workers))]
    free = list(pool)
    started = time.perf_counter()
    done = 0

    def one(m: Mutant) -> None:
        nonlocal done
        selected = judges(m, reach, spans) if reach is not None else None
        with lock:
            worker = free.pop()
        try:
            if selected == []:  # no scenario executes the statement: nothing can fail
                outcome, change = worker.describe(m)
            else:
                outcome, change = worker.judge(m, selected)
        finally:
            with lock:
                free.append(worker)
        row = {"key": m.key, "module": m.module, "line": m.line, "operator": m.operator,
               "occurrence": m.occurrence, "outcome": outcome, "change": change}
        with lock:
            known[m.key] = row
            with args.results.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            done += 1
            if done % 25 == 0 or done == len(todo):
                rate = done / (time.perf_counter() - started)
                print(f"  {done}/{len(todo)} judged, {rate:.2f} mutants/s", flush=True)

    try:
        with concurrent.futures.ThreadPoolExecutor(len(pool)) as executor:
            list(executor.map(one, todo))
    finally:
        for worker in pool:
            worker.close()


def _report(mutants: Sequence[Mutant], known: dict[str, dict[str, str]],
            fail_under: float) -> int:
    by_module: dict[str, Counter[str]] = {}
    survivors = []
    for m in mutants:
        outcome = known[m.key]["outcome"]
        by_module.setdefault(m.module, Counter())[outcome] += 1
        if outcome in ("survived", "unreached"):
            survivors.append(known[m.key])
    print(f"\n{'module':34} {'mutants':>7} {'killed':>7} {'survived':>8} {'unreached':>9} "
          f"{'killed %':>8}")
    total: Counter[str] = Counter()
    for module in sorted(by_module):
        c = by_module[module]
        total.update(c)
        n = sum(c.values()) - c["incompetent"]
        killed = c["killed"] + c["timeout"]
        print(f"{module:34} {n:7} {killed:7} {c['survived'] + c['unreached']:8} "
              f"{c['unreached']:9} {100 * killed / n if n else 100:7.1f}%")
    n = sum(total.values()) - total["incompetent"]
    killed = total["killed"] + total["timeout"]
    share = 100 * killed / n if n else 100.0
    print(f"{'all':34} {n:7} {killed:7} {total['survived'] + total['unreached']:8} "
          f"{total['unreached']:9} {share:7.1f}%")
    if survivors:
        print("\nsurvivors:")
        for row in survivors:
            unreached = ", unreached" if row["outcome"] == "unreached" else ""
            print(f"  {row['module']}:{row['change']}  [{row['operator'].split('/')[-1]}"
                  f"{unreached}]")
    return 1 if share < fail_under else 0


if __name__ == "__main__":
    sys.exit(main())
