"""Load scenario files: safe YAML, pydantic validation, line numbers, matrix expansion.

Every problem is reported as ``file:line: field.path: message``; one file's problems never
stop another file from loading.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness_lab.scenarios.spec import Expect, Scenario, Variant

__all__ = ["DuplicateKeyError", "LoadedScenario", "PathError", "Problem", "ScenarioError",
           "UniqueKeyLoader", "discover", "load_file", "load_text", "set_path"]

Loc = Sequence[int | str]
_Add = Callable[[Loc, str], None]


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


class PathError(ValueError):
    """A dotted path (``model.0.latency_s``) that does not lead into the scenario data."""


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
        data = p.read_bytes()
    except OSError as exc:
        raise ScenarioError([Problem(str(p), None, "", f"cannot read file: {exc}")]) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        message = (f"the file is not UTF-8: byte 0x{data[exc.start]:02x} at column {column} "
                   f"cannot be decoded; save the file as UTF-8")
        raise ScenarioError([Problem(str(p), line, "", message)]) from exc
    return load_text(text, str(p))


# -- YAML -----------------------------------------------------------------------------------------


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping gives the same key twice; ``pairs`` holds (first, repeated) key nodes."""

    def __init__(self, pairs: Sequence[tuple[yaml.Node, yaml.Node]]) -> None:
        first, again = pairs[0]
        super().__init__(None, None, f"duplicate key {again.value!r} (first given at line "
                                     f"{first.start_mark.line + 1})", again.start_mark)
        self.pairs = list(pairs)


class UniqueKeyLoader(yaml.SafeLoader):
    """The safe YAML loader, refusing a mapping that gives a key twice (instead of last wins).

    Every repeated key of the document is collected; :class:`DuplicateKeyError` is raised once
    the document is constructed.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[yaml.Node, yaml.Node]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of ``node``, recording each key it gives twice."""
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:
                continue  # an unhashable key: the base constructor refuses it
            if first is not key_node:
                self.duplicates.append((first, key_node))
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

    def construct_document(self, node: yaml.Node) -> Any:
        """The document's data; raise DuplicateKeyError when a key was given twice."""
        data = super().construct_document(node)
        if self.duplicates:
            raise DuplicateKeyError(self.duplicates)
        return data


def _parse(text: str, path: str) -> tuple[yaml.Node | None, Any]:
    """The document's node tree and data."""
    node: yaml.Node | None = None
    try:
        loader = UniqueKeyLoader(text)  # the reader refuses control characters here
        try:
            node = loader.get_single_node()
            return node, (loader.construct_document(node) if node is not None else None)
        finally:
            loader.dispose()
    except DuplicateKeyError as exc:
        raise ScenarioError([_duplicate(node, first, again, path)
                             for first, again in exc.pairs]) from exc
    except yaml.YAMLError as exc:
        raise ScenarioError([_malformed(exc, text, path)]) from exc


def _duplicate(root: yaml.Node | None, first: yaml.Node, again: yaml.Node,
               path: str) -> Problem:
    field = ".".join(_key_path(root, again) or [str(again.value)])
    return Problem(path, again.start_mark.line + 1, field,
                   f"duplicate key {again.value!r}: given at line {first.start_mark.line + 1} "
                   f"and again at line {again.start_mark.line + 1}")


def _key_path(node: yaml.Node | None, key: yaml.Node) -> list[str] | None:
    """The field path of the mapping key ``key`` inside ``node``."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k is key:
                return [str(k.value)]
            below = _key_path(v, key)
            if below is not None:
                return [str(k.value), *below]
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            below = _key_path(item, key)
            if below is not None:
                return [str(i), *below]
    return None


def _malformed(exc: yaml.YAMLError, text: str, path: str) -> Problem:
    if isinstance(exc, yaml.reader.ReaderError):
        problem = f"unacceptable character #x{exc.character:04x}: {exc.reason}"
        return Problem(path, text.count("\n", 0, exc.position) + 1, "",
                       f"malformed YAML: {problem}")
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    return Problem(path, line, "", f"malformed YAML: {problem}")


# -- loading --------------------------------------------------------------------------------------


def load_text(text: str, path: str = "<string>") -> list[LoadedScenario]:
    """The scenarios of one YAML document."""
    node, raw = _parse(text, path)
    if not isinstance(raw, dict):
        raise ScenarioError([Problem(path, 1, "", "a scenario file holds one mapping")])
    where = _Locator(node, raw)
    base = _validate(raw, where, path)
    problems = _matrix_problems(base, where, path)
    variants, expansion = _variants(raw, base, where, path)
    problems += expansion
    out: list[LoadedScenario] = []
    for variant in variants:
        try:
            sc = _validate(variant.data, variant.where, path) if variant.data is not raw else base
        except ScenarioError as exc:
            problems += [Problem(p.path, p.line, p.field, f"[{variant.name}] {p.message}")
                         for p in exc.problems]
            continue
        problems += _semantic(sc, variant.where, path)
        lines = tuple(variant.where.locate(("faults", i))[1] for i in range(len(sc.faults)))
        out.append(LoadedScenario(sc, path, lines))
    if problems:
        raise ScenarioError(list(dict.fromkeys(problems)))
    return out


@dataclass(frozen=True, slots=True)
class _Locator:
    """Field paths and lines of the data one validation saw.

    ``origins`` maps each path a matrix value was set at (split in parts) to the line of its
    matrix entry: an error at, under or above such a path is reported at that entry.
    """

    node: yaml.Node | None
    data: Any
    origins: Mapping[tuple[str, ...], int | None] = field(default_factory=dict)

    def locate(self, loc: Loc) -> tuple[str, int | None]:
        """The field path (the parts of ``loc`` present in the data) and its line."""
        parts = _data_path(self.data, loc)
        return ".".join(parts), self.line(parts)

    def line(self, parts: Sequence[str]) -> int | None:
        """The line of the matrix entry that set ``parts``, else of the document field."""
        for origin, line in sorted(self.origins.items(), key=lambda o: -len(o[0])):
            n = min(len(origin), len(parts))
            if tuple(parts[:n]) == origin[:n]:
                return line
        return _node_line(self.node, parts)


def _data_path(data: Any, loc: Loc) -> list[str]:
    """The parts of a pydantic ``loc`` that are keys or indices of ``data``.

    The others are union member tags (``str-enum[IntentType]``, a fault ``kind``).
    """
    parts: list[str] = []
    for item in loc:
        if isinstance(data, dict):
            if item not in data:
                continue
            data = data[item]
        elif isinstance(data, list):
            if not isinstance(item, int):
                continue
            if not 0 <= item < len(data):
                break
            data = data[item]
        else:
            break
        parts.append(str(item))
    return parts


def _node_line(node: yaml.Node | None, parts: Sequence[str]) -> int | None:
    """The line of the deepest node of the document along ``parts``."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in parts:
        if isinstance(node, yaml.MappingNode):
            child = next(((k, v) for k, v in node.value
                          if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if child is None:
                break
            line = child[0].start_mark.line + 1
            node = child[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() \
                and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _validate(data: dict[str, Any], where: _Locator, path: str) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        problems = [_problem(err, where, path) for err in errors
                    if not _other_branch(err, errors, data)]
        raise ScenarioError(list(dict.fromkeys(problems))) from exc


def _problem(err: Any, where: _Locator, path: str) -> Problem:
    field, line = where.locate(err["loc"])
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "missing":
        field = ".".join(x for x in (field, str(err["loc"][-1])) if x)
        msg = "required field is missing"
    return Problem(path, line, field, msg)


# -- union members --------------------------------------------------------------------------------

_WANTS = {
    **dict.fromkeys(("dict_type", "model_type", "model_attributes_type", "dataclass_type"),
                    "mapping"),
    **dict.fromkeys(("list_type", "tuple_type", "set_type", "frozen_set_type"), "list"),
    **dict.fromkeys(("enum", "literal_error", "string_type", "int_type", "float_type",
                     "bool_type", "int_parsing", "float_parsing", "bool_parsing"), "scalar"),
}


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    return "list" if isinstance(value, list) else "scalar"


def _value_at(data: Any, loc: Loc) -> Any:
    """The value of ``data`` along the keys and indices of ``loc`` (member tags skipped)."""
    for item in loc:
        if isinstance(data, dict) and item in data:
            data = data[item]
        elif isinstance(data, list) and isinstance(item, int) and 0 <= item < len(data):
            data = data[item]
    return data


def _wrong_shape(err: Any, data: Any) -> bool:
    """True for a union member's error saying the input is not of that member's shape."""
    loc = err["loc"]
    wanted = _WANTS.get(err["type"])
    if wanted is None or not loc or not isinstance(loc[-1], str):
        return False
    value = _value_at(data, loc[:-1])
    if isinstance(value, dict) and loc[-1] in value:
        return False  # the last part is a key of the document, not a union member
    return wanted != _shape(value)


def _other_branch(err: Any, errors: Sequence[Any], data: Any) -> bool:
    """True for a union member's "not this shape" error when a member of the input's shape failed.

    ``router: {intent: DIAGNOSIS, latency_s: -1}`` fails the intent member ("should be
    'SYSTEM_CHAT', ...") and the list member ("should be a valid list"); the mapping member's
    error (``router.latency_s``) is the one that says what is wrong, so only it is reported.
    """
    if not _wrong_shape(err, data):
        return False
    loc = err["loc"]
    n = len(loc) - 1
    return any(len(e["loc"]) > n and tuple(e["loc"][:n]) == tuple(loc[:n])
               and e["loc"][n] != loc[n] and not _wrong_shape(e, data) for e in errors)


# -- matrix ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Variant:
    """One expanded variant: its name, its data and where its matrix values came from."""

    name: str
    data: dict[str, Any]
    where: _Locator


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to build one variant: the values to set (with their matrix loc) and expectations."""

    name: str
    settings: tuple[tuple[str, Any, tuple[int | str, ...]], ...]
    expects: tuple[Expect, ...]


def _plans(raw: dict[str, Any], base: Scenario) -> list[_Plan]:
    matrix = raw["matrix"]
    if isinstance(matrix, list):
        return [_Plan(f"{base.name}[{v.name}]",
                      tuple((k, val, ("matrix", i, "set", k)) for k, val in v.set.items()),
                      (v.expect,) if v.expect is not None else ())
                for i, v in enumerate(base.matrix or []) if isinstance(v, Variant)]
    keys = list(matrix)
    plans: list[_Plan] = []
    for picks in itertools.product(*(list(enumerate(matrix[k])) for k in keys)):
        chosen = {k: value for k, (_, value) in zip(keys, picks, strict=True)}
        label = ",".join(f"{k}={v}" for k, v in chosen.items())
        settings = tuple((k, value, ("matrix", k, j))
                         for k, (j, value) in zip(keys, picks, strict=True))
        expects = tuple(w.expect for w in base.expect_when
                        if all(k in chosen and chosen[k] == v for k, v in w.when.items()))
        plans.append(_Plan(f"{base.name}[{label}]", settings, expects))
    return plans


def _variants(raw: dict[str, Any], base: Scenario, where: _Locator, path: str
              ) -> tuple[list[_Variant], list[Problem]]:
    """The variants of the file (the file itself without a matrix) and the paths that failed."""
    if not raw.get("matrix"):
        return [_Variant(base.name, raw, where)], []
    body = {k: v for k, v in raw.items() if k not in ("matrix", "expect_when")}
    variants: list[_Variant] = []
    problems: list[Problem] = []
    for plan in _plans(raw, base):
        data = copy.deepcopy(body)
        origins: dict[tuple[str, ...], int | None] = {}
        failed = [_set(data, dotted, value, where.locate(loc), origins, path, plan.name)
                  for dotted, value, loc in plan.settings]
        problems += [p for p in failed if p is not None]
        if any(failed):
            continue
        data["name"] = plan.name
        for expect in plan.expects:
            data["expect"] = _merge_expect(data.get("expect"), expect)
        variants.append(_Variant(plan.name, data, _Locator(where.node, data, origins)))
    return variants, problems


def _set(data: dict[str, Any], dotted: str, value: Any, where: tuple[str, int | None],
         origins: dict[tuple[str, ...], int | None], path: str, name: str) -> Problem | None:
    """Set one matrix value, noting the line it came from; the problem when the path fails."""
    field, line = where
    origins[tuple(dotted.split("."))] = line
    try:
        set_path(data, dotted, copy.deepcopy(value))
    except PathError as exc:
        return Problem(path, line, field, f"[{name}] {exc}")
    return None


def _merge_expect(current: Any, override: Expect) -> dict[str, Any]:
    merged = dict(current) if isinstance(current, dict) else {}
    merged.update(override.model_dump(mode="json", exclude_unset=True))
    return merged


def _collector(where: _Locator, path: str) -> tuple[list[Problem], _Add]:
    """A list of problems and the function adding one at a validation location."""
    problems: list[Problem] = []

    def add(loc: Loc, message: str) -> None:
        field, line = where.locate(loc)
        problems.append(Problem(path, line, field, message))

    return problems, add


def _matrix_problems(sc: Scenario, where: _Locator, path: str) -> list[Problem]:
    """Variant names given twice, repeated axis values, and ``expect_when`` matching nothing."""
    problems, add = _collector(where, path)
    _check_variant_names(sc, add)
    _check_axes(sc, add)
    for i, when in enumerate(sc.expect_when):
        for key, value in when.when.items():
            message = _when_problem(sc.matrix, key, value)
            if message is not None:
                add(("expect_when", i, "when", key), message)
    return problems


def _check_variant_names(sc: Scenario, add: _Add) -> None:
    """Each variant of a matrix list has its own name."""
    first: dict[str, int] = {}
    for i, variant in enumerate(sc.matrix if isinstance(sc.matrix, list) else []):
        j = first.setdefault(variant.name, i)
        if j != i:
            add(("matrix", i, "name"), f"variant name {variant.name!r} is already used by "
                                       f"matrix.{j}")


def _check_axes(sc: Scenario, add: _Add) -> None:
    """No axis of a product matrix gives a value twice (the variants would share a name)."""
    for key, values in (sc.matrix.items() if isinstance(sc.matrix, dict) else ()):
        labels = [str(v) for v in values]
        for j, label in enumerate(labels):
            if label in labels[:j]:
                add(("matrix", key, j), f"value {label} appears twice in the axis")


def _when_problem(matrix: Any, key: str, value: Any) -> str | None:
    """Why ``when: {key: value}`` matches no variant of the product ``matrix``, if it does not."""
    if not isinstance(matrix, dict):
        return ("expect_when applies to the variants of a product matrix (a mapping of axes); "
                "this file has none")
    if key not in matrix:
        return f"{key!r} is not a matrix axis; the axes are {list(matrix)}"
    if value not in matrix[key]:
        return f"{value!r} is not a value of the axis {key} {matrix[key]}: it matches no variant"
    return None


def set_path(data: Any, dotted: str, value: Any) -> None:
    """Set ``value`` at the dotted path of scenario data (``config.deadline_s``, ``faults.0.at_s``).

    Integer parts index existing list items, missing mappings are created; a path that cannot
    be followed raises :class:`PathError` saying where it stops.
    """
    parts = dotted.split(".")
    if "" in parts:
        raise PathError(f"{dotted!r} has an empty part; write parts separated by single dots")
    target = data
    for depth, part in enumerate(parts[:-1]):
        target = _step(target, part, parts[:depth])
        if isinstance(target, dict | list):
            continue
        raise PathError(f"{'.'.join(parts[:depth + 1])!r} holds {_kind(target)}, not a "
                        f"mapping or a list: nothing can be set inside it")
    if isinstance(target, list):
        target[_index(target, parts[-1], parts[:-1])] = value
    else:
        target[parts[-1]] = value


def _step(target: dict[str, Any] | list[Any], part: str, before: Sequence[str]) -> Any:
    if isinstance(target, list):
        return target[_index(target, part, before)]
    return target.setdefault(part, {})


def _index(items: list[Any], part: str, before: Sequence[str]) -> int:
    name = ".".join(before)
    if not part.isdigit():
        raise PathError(f"{part!r} is not an index: {name!r} is a list, so the part after it "
                        f"is a number from 0")
    if int(part) >= len(items):
        raise PathError(f"{name!r} has {len(items)} item(s), so index {part} is past its end "
                        f"(indices start at 0)")
    return int(part)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else f"a {type(value).__name__}"


# -- checks pydantic cannot make alone ------------------------------------------------------------


def _semantic(sc: Scenario, where: _Locator, path: str) -> list[Problem]:
    problems, add = _collector(where, path)
    _check_tools(sc, add)
    _check_recorded(sc, add)
    _check_names(sc, add)
    return problems


def _check_tools(sc: Scenario, add: _Add) -> None:
    """Every tool a model step or a fault names is a tool of the scenario."""
    tools = set(sc.tools)
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


def _check_recorded(sc: Scenario, add: _Add) -> None:
    """``recorded`` and ``cassette`` go together: a replay never touches the network."""
    if sc.recorded is not None and sc.cassette is None:
        add(("recorded",), "recorded components need a `cassette:` to replay from; without "
                           "one the run would call the network (record it with "
                           "`harness-lab record`)")
    if sc.cassette is not None and sc.recorded is None:
        add(("cassette",), "a cassette is replayed for `recorded:` components, and this "
                           "scenario has no `recorded:` block")


def _check_names(sc: Scenario, add: _Add) -> None:
    """Invariant names and the outcome-table case exist."""
    from harness_lab.invariants import invariant_names

    known = set(invariant_names())
    for name in sc.expect.violations:
        if name not in known:
            add(("expect", "violations"), f"unknown invariant {name!r}; known: {sorted(known)}")
    if sc.case is not None:
        from harness_lab.scenarios.cases import CASES

        if sc.case not in CASES:
            add(("case",), f"unknown case {sc.case!r}; known: {sorted(CASES)}")
