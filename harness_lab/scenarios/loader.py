"""Load scenario files: safe YAML, pydantic validation, line numbers, matrix expansion.

Every problem is reported as ``file:line: field.path: message``; one file's problems never
stop another file from loading.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness_lab.scenarios.checks import Add, Loc, check_document
from harness_lab.scenarios.limits import MAX_PROBLEMS, MAX_VARIANT_NODES, MAX_VARIANTS
from harness_lab.scenarios.safe_yaml import (
    DocumentError,
    DuplicateKeyError,
    Issue,
    LimitError,
    SourceError,
    UniqueKeyLoader,
    compose,
    read_source,
)
from harness_lab.scenarios.spec import Expect, Scenario, Variant
from harness_lab.scenarios.suggest import accepted_keys, did_you_mean
from harness_lab.yaml_lines import YamlLines

__all__ = ["DuplicateKeyError", "LoadedScenario", "PathError", "Problem", "ScenarioError",
           "UniqueKeyLoader", "error_message", "field_of", "load_file", "load_text",
           "reported_errors", "set_path"]


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    """A validated scenario and where it came from (for messages that name file and line)."""

    scenario: Scenario
    path: str
    fault_lines: tuple[int | None, ...] = ()
    key_lines: Mapping[str, int | None] = field(default_factory=dict)
    """The line of each top-level key of the file (a matrix value's line where it set one)."""

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


def load_file(path: str | Path) -> list[LoadedScenario]:
    """The scenarios of one file (one per matrix variant); raise ScenarioError.

    The file must be a regular UTF-8 file within the limits of
    :mod:`harness_lab.scenarios.limits`, not a ``.jsonl`` file (a run log); anything else
    is one problem naming the file.
    """
    p = Path(path)
    if p.is_dir():
        raise ScenarioError([Problem(str(p), None, "", _directory_problem(p))])
    if p.suffix == ".jsonl":  # what a newcomer holds after a run: its log
        raise ScenarioError([Problem(str(p), None, "", "a JSON Lines file (a run log?), not a "
                                     "scenario file: explain, diff, audit and report "
                                     "--compare read run logs")])
    try:
        text = read_source(p)
    except SourceError as exc:
        raise ScenarioError([Problem(str(p), exc.line, "", str(exc))]) from exc
    return load_text(text, str(p))


def _directory_problem(path: Path) -> str:
    try:
        os.listdir(path)
    except OSError as exc:
        return (f"cannot list this directory ({exc.strerror or exc}): the scenario files "
                f"inside it were not searched")
    return "a directory, not a scenario file; give its path to search the files inside it"


# -- YAML -----------------------------------------------------------------------------------------


def _parse(text: str, path: str) -> tuple[yaml.Node | None, Any, int]:
    """The document's node tree, its data and its number of values (aliases expanded)."""
    try:
        return compose(text)
    except LimitError as exc:
        raise ScenarioError([_from_issue(exc.issue, path)]) from exc
    except DocumentError as exc:
        issues = sorted(exc.issues, key=lambda i: i.line)
        raise ScenarioError(_capped([_from_issue(i, path) for i in issues])) from exc
    except yaml.YAMLError as exc:
        raise ScenarioError([_malformed(exc, text, path)]) from exc
    except RecursionError as exc:  # a limit should stop first; never a traceback regardless
        raise ScenarioError([Problem(path, None, "", "the document nests too deeply to be "
                                                     "read")]) from exc


def _from_issue(issue: Issue, path: str) -> Problem:
    return Problem(path, issue.line, issue.field, issue.message)


def _malformed(exc: yaml.YAMLError, text: str, path: str) -> Problem:
    if isinstance(exc, yaml.reader.ReaderError):
        problem = f"unacceptable character #x{exc.character:04x}: {exc.reason}"
        return Problem(path, text.count("\n", 0, exc.position) + 1, "",
                       f"malformed YAML: {problem}")
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    return Problem(path, line, "", f"malformed YAML: {problem}")


def _capped(problems: Sequence[Problem]) -> list[Problem]:
    """At most MAX_PROBLEMS problems, then one saying how many more there are."""
    unique = list(dict.fromkeys(problems))
    if len(unique) <= MAX_PROBLEMS:
        return unique
    last = unique[MAX_PROBLEMS - 1]
    more = Problem(last.path, None, "", f"... and {len(unique) - MAX_PROBLEMS + 1:,} more "
                                        f"problem(s) not listed")
    return [*unique[:MAX_PROBLEMS - 1], more]


# -- loading --------------------------------------------------------------------------------------


def load_text(text: str, path: str = "<string>") -> list[LoadedScenario]:
    """The scenarios of one YAML document; raise ScenarioError listing every problem."""
    node, raw, size = _parse(text, path)
    if not isinstance(raw, dict):
        raise ScenarioError([Problem(path, 1, "", "a scenario file holds one mapping")])
    where = _Locator(YamlLines(node), raw)
    try:
        base = _validate(raw, where, path)
    except ScenarioError as exc:  # the checks beyond the schema still say what they find
        raise ScenarioError(_capped(exc.problems + _semantic(raw, where, path))) from exc
    problems = _matrix_problems(base, where, path)
    too_many = _matrix_size_problem(base, size, where, path)
    if too_many is not None:
        raise ScenarioError(_capped([*problems, too_many]))
    variants, expansion = _variants(raw, base, where, path)
    problems += expansion
    out: list[LoadedScenario] = []
    for name, at in variants:
        try:
            sc = _validate(at.data, at, path) if at.data is not raw else base
        except ScenarioError as exc:
            problems += [Problem(p.path, p.line, p.field, f"[{name}] {p.message}")
                         for p in exc.problems]
            continue
        problems += _semantic(at.data, at, path)
        lines = tuple(at.locate(("faults", i))[1] for i in range(len(sc.faults)))
        keys = {str(k): at.locate((k,))[1] for k in at.data}
        out.append(LoadedScenario(sc, path, lines, keys))
    if problems:
        raise ScenarioError(_capped(problems))
    return out


@dataclass(frozen=True, slots=True)
class _Locator:
    """Field paths and lines of the data one validation saw.

    ``origins`` maps each path a matrix value was set at (split in parts) to the line of its
    matrix entry: an error at, under or above such a path is reported at that entry.
    """

    index: YamlLines
    data: Any
    origins: Mapping[tuple[str, ...], int | None] = field(default_factory=dict)

    def locate(self, loc: Loc) -> tuple[str, int | None]:
        """The field path (the parts of ``loc`` present in the data) and its line."""
        parts, _ = _data_path(self.data, loc)
        return ".".join(parts), self.line(parts)

    def line(self, parts: Sequence[str]) -> int | None:
        """The line of the matrix entry that set ``parts``, else of the document field."""
        for origin, line in sorted(self.origins.items(), key=lambda o: -len(o[0])):
            n = min(len(origin), len(parts))
            if tuple(parts[:n]) == origin[:n]:
                return line
        return self.index.line(parts)


def _data_path(data: Any, loc: Loc) -> tuple[list[str], Any]:
    """The parts of a pydantic ``loc`` that are keys or indices of ``data``, and the value
    they lead to.

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
    return parts, data


def _validate(data: dict[str, Any], where: _Locator, path: str) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        errors = reported_errors(exc, data)
        problems = [_problem(err, where, path, hint=i < MAX_PROBLEMS)
                    for i, err in enumerate(errors)]
        raise ScenarioError(_capped(problems)) from exc


def _problem(err: Any, where: _Locator, path: str, *, hint: bool) -> Problem:
    field, line = where.locate(err["loc"])
    return Problem(path, line, *error_message(err, field, hint=hint))


def field_of(err: Any, data: Any) -> str:
    """The dotted field of a pydantic error in scenario ``data`` (union member tags left
    out), as a file's problems name it."""
    return ".".join(_data_path(data, err["loc"])[0])


def error_message(err: Any, field: str, *, hint: bool = True) -> tuple[str, str]:
    """A pydantic error of a scenario as ``(field, message)``: an unknown key with the key
    most likely meant (``hint``), a missing field named, a misspelt union tag (a fault
    ``kind``) with the tags there are; ``field`` is where the error's mapping lies."""
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        key = err["loc"][-1]
        msg = "unknown key"
        if hint and isinstance(key, str):
            msg += did_you_mean(key, accepted_keys(Scenario, err["loc"][:-1]))
    elif err["type"] == "missing":
        field = ".".join(x for x in (field, str(err["loc"][-1])) if x)
        msg = "required field is missing"
    elif err["type"] == "union_tag_invalid":  # e.g. a misspelt fault kind
        ctx = err.get("ctx", {})
        key, tag = str(ctx.get("discriminator", "kind")).strip("'"), str(ctx.get("tag"))
        tags = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        field = ".".join(x for x in (field, key) if x)
        msg = f"unknown {key} {tag!r}{did_you_mean(tag, tags) if hint else ''}"
        if tags:
            msg += f" (one of: {', '.join(tags)})"
    return field, msg


# -- union members --------------------------------------------------------------------------------

_WANTS = {
    **dict.fromkeys(("dict_type", "model_type", "model_attributes_type", "dataclass_type"),
                    "mapping"),
    **dict.fromkeys(("list_type", "tuple_type", "set_type", "frozen_set_type"), "list"),
    **dict.fromkeys(("enum", "literal_error", "string_type", "int_type", "float_type",
                     "bool_type", "int_parsing", "float_parsing", "bool_parsing"), "scalar"),
}


def _wrong_shape(err: Any, data: Any) -> bool:
    """True for a union member's error saying the input is not of that member's shape."""
    loc = err["loc"]
    wanted = _WANTS.get(err["type"])
    if wanted is None or not loc or not isinstance(loc[-1], str):
        return False
    _, value = _data_path(data, loc[:-1])
    if isinstance(value, dict) and loc[-1] in value:
        return False  # the last part is a key of the document, not a union member
    return wanted != ("mapping" if isinstance(value, dict)
                      else "list" if isinstance(value, list) else "scalar")


def reported_errors(exc: ValidationError, data: Any) -> list[Any]:
    """The errors of ``exc`` (scenario ``data`` validated) worth reporting: a union member's
    "not this shape" error is dropped when a member of the input's shape failed at the same
    place.

    ``router: {intent: DIAGNOSIS, latency_s: -1}`` fails the intent member ("should be
    'SYSTEM_CHAT', ...") and the list member ("should be a valid list"); the mapping member's
    error (``router.latency_s``) is the one that says what is wrong, so only it is reported.
    Each location is indexed once, so this is linear in the number of errors.
    """
    errors = exc.errors(include_url=False, include_input=False)
    wrong = [_wrong_shape(e, data) for e in errors]
    branches: dict[tuple[Any, ...], set[Any]] = {}
    for err, shape_only in zip(errors, wrong, strict=True):
        if not shape_only:
            loc = tuple(err["loc"])
            for n in range(len(loc)):
                branches.setdefault(loc[:n], set()).add(loc[n])
    out = []
    for err, shape_only in zip(errors, wrong, strict=True):
        loc = tuple(err["loc"])
        if shape_only and branches.get(loc[:-1], set()) - {loc[-1]}:
            continue
        out.append(err)
    return out


# -- matrix ---------------------------------------------------------------------------------------


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
              ) -> tuple[list[tuple[str, _Locator]], list[Problem]]:
    """The variants of the file (the file itself without a matrix), each named with its data
    and where its matrix values came from, and the paths that failed."""
    if not raw.get("matrix"):
        return [(base.name, where)], []
    body = {k: v for k, v in raw.items() if k not in ("matrix", "expect_when")}
    variants: list[tuple[str, _Locator]] = []
    problems: list[Problem] = []
    for plan in _plans(raw, base):
        data = copy.deepcopy(body)
        origins: dict[tuple[str, ...], int | None] = {}  # each set path -> its matrix line
        failed: list[Problem] = []
        for dotted, value, loc in plan.settings:
            field, line = where.locate(loc)
            origins[tuple(dotted.split("."))] = line
            try:
                set_path(data, dotted, copy.deepcopy(value))
            except PathError as exc:
                failed.append(Problem(path, line, field, f"[{plan.name}] {exc}"))
        problems += failed
        if failed:
            continue
        data["name"] = plan.name
        for expect in plan.expects:
            current = data.get("expect")
            data["expect"] = {**(current if isinstance(current, dict) else {}),
                              **expect.model_dump(mode="json", exclude_unset=True)}
        variants.append((plan.name, _Locator(where.index, data, origins)))
    return variants, problems


def _collector(where: _Locator, path: str) -> tuple[list[Problem], Add]:
    """A list of problems and the function adding one at a validation location."""
    problems: list[Problem] = []

    def add(loc: Loc, message: str) -> None:
        field, line = where.locate(loc)
        problems.append(Problem(path, line, field, message))

    return problems, add


def _matrix_problems(sc: Scenario, where: _Locator, path: str) -> list[Problem]:
    """Variant names given twice, repeated axis values, and ``expect_when`` matching nothing."""
    problems, add = _collector(where, path)
    first: dict[str, int] = {}  # each variant of a matrix list has its own name
    for i, variant in enumerate(sc.matrix if isinstance(sc.matrix, list) else []):
        j = first.setdefault(variant.name, i)
        if j != i:
            add(("matrix", i, "name"), f"variant name {variant.name!r} is already used by "
                                       f"matrix.{j}")
    for key, values in (sc.matrix.items() if isinstance(sc.matrix, dict) else ()):
        seen: set[str] = set()  # a value given twice would name two variants alike
        for j, label in enumerate(str(v) for v in values):
            if label in seen:
                add(("matrix", key, j), f"value {label} appears twice in the axis")
            seen.add(label)
    for i, when in enumerate(sc.expect_when):
        for key, value in when.when.items():
            message = _when_problem(sc.matrix, key, value)
            if message is not None:
                add(("expect_when", i, "when", key), message)
    return problems


def _matrix_size_problem(sc: Scenario, size: int, where: _Locator, path: str
                         ) -> Problem | None:
    """Why the matrix is too large to expand (see :mod:`~harness_lab.scenarios.limits`)."""
    matrix = sc.matrix
    if not matrix:
        return None
    count = len(matrix) if isinstance(matrix, list) else math.prod(map(len, matrix.values()))
    field, line = where.locate(("matrix",))
    if count > MAX_VARIANTS:
        return Problem(path, line, field, f"the matrix expands to {count:,} variants; a "
                                          f"scenario file has at most {MAX_VARIANTS:,} (see "
                                          f"Limits in docs/scenarios.md)")
    if count * size > MAX_VARIANT_NODES:
        return Problem(path, line, field, f"the matrix's {count:,} variants of this "
                                          f"{size:,}-value document make {count * size:,} "
                                          f"values to validate; at most "
                                          f"{MAX_VARIANT_NODES:,} (see Limits in "
                                          f"docs/scenarios.md)")
    return None


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
        target = (target[_index(target, part, parts[:depth])] if isinstance(target, list)
                  else target.setdefault(part, {}))
        if not isinstance(target, dict | list):
            raise PathError(f"{'.'.join(parts[:depth + 1])!r} holds {_kind(target)}, not a "
                            f"mapping or a list: nothing can be set inside it")
    if isinstance(target, list):
        target[_index(target, parts[-1], parts[:-1])] = value
    else:
        target[parts[-1]] = value


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


def _semantic(data: dict[str, Any], where: _Locator, path: str) -> list[Problem]:
    problems, add = _collector(where, path)
    check_document(data, add)
    return problems
