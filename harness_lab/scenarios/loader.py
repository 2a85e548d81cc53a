"""Load scenario files: safe YAML, pydantic validation, line numbers, matrix expansion.

Every problem is reported as ``file:line: field.path: message``; one file's problems never
stop another file from loading.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness_lab.scenarios.spec import Expect, Scenario

__all__ = ["LoadedScenario", "Problem", "ScenarioError", "discover", "load_file", "load_text",
           "set_path"]


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    """A validated scenario and where it came from (for messages that name file and line)."""

    scenario: Scenario
    path: str
    fault_lines: tuple[int | None, ...] = ()

    def where(self, field: str, line: int | None) -> str:
        """``file:line: field`` for messages."""
        return f"{self.path}:{line}: {field}" if line is not None else f"{self.path}: {field}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem of one scenario file."""

    path: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.field or '<document>'}: {self.message}"


class ScenarioError(ValueError):
    """A scenario file is malformed; ``problems`` holds every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """The scenario files under ``paths`` (files as given, directories searched recursively)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml")))
        else:
            out.append(p)
    return out


def load_file(path: str | Path) -> list[LoadedScenario]:
    """The scenarios of one file (one per matrix variant); raise ScenarioError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError([Problem(str(p), None, "", f"cannot read file: {exc}")]) from exc
    return load_text(text, str(p))


def load_text(text: str, path: str = "<string>") -> list[LoadedScenario]:
    """The scenarios of one YAML document."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError([Problem(path, line, "", f"malformed YAML: {problem}")]) from exc
    if not isinstance(raw, dict):
        raise ScenarioError([Problem(path, 1, "", "a scenario file holds one mapping")])
    base = _validate(raw, node, path)
    variants = list(_expand(raw, base))
    out: list[LoadedScenario] = []
    problems: list[Problem] = []
    for name, data in variants:
        try:
            sc = _validate(data, node, path) if data is not raw else base
        except ScenarioError as exc:
            problems.extend(Problem(p.path, p.line, p.field, f"[{name}] {p.message}")
                            for p in exc.problems)
            continue
        problems.extend(_semantic(sc, node, path))
        lines = tuple(_locate(node, ("faults", i))[1] for i in range(len(sc.faults)))
        out.append(LoadedScenario(sc, path, lines))
    if problems:
        raise ScenarioError(problems)
    return out


def _validate(data: dict[str, Any], node: yaml.Node | None, path: str) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        problems: list[Problem] = []
        seen: set[tuple[str, str]] = set()
        errors = exc.errors()
        for err in errors:
            if _other_branch(err, errors, node):
                continue
            field, line = _locate(node, err["loc"])
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown key"
            elif err["type"] == "missing":
                field = ".".join(x for x in (field, str(err["loc"][-1])) if x)
                msg = "required field is missing"
            key = (field, msg)
            if key in seen:
                continue
            seen.add(key)
            problems.append(Problem(path, line, field, msg))
        raise ScenarioError(problems) from exc


_SHAPE_ERRORS = frozenset({"dict_type", "list_type", "model_type", "model_attributes_type",
                           "string_type", "bool_type", "int_type", "float_type"})


def _other_branch(err: Any, errors: Sequence[Any], node: yaml.Node | None) -> bool:
    """True for a union member's "not this shape" error when another member went deeper.

    A ``matrix`` written as a list fails the mapping member with "should be a valid
    dictionary"; the list member's errors say what is wrong, so only they are reported.
    """
    loc = err["loc"]
    if err["type"] not in _SHAPE_ERRORS or len(loc) < 2 or not isinstance(loc[-1], str):
        return False
    prefix = loc[:-1]
    if _locate(node, loc)[0] != _locate(node, prefix)[0]:
        return False  # the last part is a key of the document, not a union member
    n = len(prefix)
    return any(len(e["loc"]) > n + 1 and tuple(e["loc"][:n]) == tuple(prefix)
               and e["loc"][n] != loc[-1] for e in errors)


def _locate(node: yaml.Node | None, loc: Sequence[int | str]) -> tuple[str, int | None]:
    """The field path (only the parts that exist in the document) and its line."""
    parts: list[str] = []
    line = node.start_mark.line + 1 if node is not None else None
    for item in loc:
        if isinstance(node, yaml.MappingNode):
            child = next(((k, v) for k, v in node.value
                          if isinstance(k, yaml.ScalarNode) and k.value == str(item)), None)
            if child is None:
                continue  # a union member or discriminator tag, not a document key
            parts.append(str(item))
            key_node, node = child
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(item, int):
            if item >= len(node.value):
                break
            parts.append(str(item))
            node = node.value[item]
            line = node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            continue  # a union member's tag in front of the list's items
        else:
            break
    return ".".join(parts), line


# -- matrix ---------------------------------------------------------------------------------------


def _expand(raw: dict[str, Any], base: Scenario) -> Iterator[tuple[str, dict[str, Any]]]:
    matrix = raw.get("matrix")
    if not matrix:
        yield base.name, raw
        return
    body = {k: v for k, v in raw.items() if k not in ("matrix", "expect_when")}
    if isinstance(matrix, list):
        for variant in base.matrix or []:
            assert not isinstance(variant, str)
            data = copy.deepcopy(body)
            for dotted, value in variant.set.items():  # type: ignore[union-attr]
                set_path(data, dotted, value)
            data["name"] = f"{base.name}[{variant.name}]"  # type: ignore[union-attr]
            if variant.expect is not None:  # type: ignore[union-attr]
                data["expect"] = _merge_expect(data.get("expect"), variant.expect)  # type: ignore
            yield data["name"], data
        return
    keys = list(matrix)
    for values in itertools.product(*(matrix[k] for k in keys)):
        data = copy.deepcopy(body)
        chosen = dict(zip(keys, values, strict=True))
        for dotted, value in chosen.items():
            set_path(data, dotted, value)
        label = ",".join(f"{k}={v}" for k, v in chosen.items())
        data["name"] = f"{base.name}[{label}]"
        for when in base.expect_when:
            if all(chosen.get(k) == v for k, v in when.when.items()):
                data["expect"] = _merge_expect(data.get("expect"), when.expect)
        yield data["name"], data


def _merge_expect(current: Any, override: Expect) -> dict[str, Any]:
    merged = dict(current or {})
    merged.update(override.model_dump(mode="json", exclude_unset=True))
    return merged


def set_path(data: Any, dotted: str, value: Any) -> None:
    """Set ``value`` at the dotted path of scenario data (``config.deadline_s``, ``faults.0.at_s``);
    integer parts index lists, missing mappings are created."""
    parts = dotted.split(".")
    target = data
    for part in parts[:-1]:
        if isinstance(target, list):
            target = target[int(part)]
        else:
            target = target.setdefault(part, {})
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value


# -- checks pydantic cannot make alone ------------------------------------------------------------


def _semantic(sc: Scenario, node: yaml.Node | None, path: str) -> list[Problem]:
    from harness_lab.invariants import invariant_names

    problems: list[Problem] = []
    tools = set(sc.tools)

    def add(loc: Sequence[int | str], message: str) -> None:
        field, line = _locate(node, loc)
        problems.append(Problem(path, line, field, message))

    for i, step in enumerate(sc.model):
        if step.tool is not None and step.tool not in tools:
            add(("model", i, "tool"), f"unknown tool {step.tool!r}; the scenario's tools are "
                                      f"{sorted(tools) or 'none'}")
    for t, turn in enumerate(sc.turns):
        for i, step in enumerate(turn.model):
            if step.tool is not None and step.tool not in tools:
                add(("turns", t, "model", i, "tool"), f"unknown tool {step.tool!r}")
    for i, fault in enumerate(sc.faults):
        tool = getattr(fault, "tool", None)
        at = getattr(fault, "at", None)
        for name, loc in ((tool, ("faults", i, "tool")),
                          (at.tool if at is not None else None, ("faults", i, "at", "tool"))):
            if name is not None and name not in tools:
                add(loc, f"unknown tool {name!r}; the scenario's tools are {sorted(tools)}")
    known = set(invariant_names())
    for name in sc.expect.violations:
        if name not in known:
            add(("expect", "violations"), f"unknown invariant {name!r}; known: {sorted(known)}")
    if sc.case is not None:
        from harness_lab.scenarios.cases import CASES

        if sc.case not in CASES:
            add(("case",), f"unknown case {sc.case!r}; known: {sorted(CASES)}")
    return problems
