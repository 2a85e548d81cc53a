"""Checks a sweep makes before any sample runs: every override and every grid value.

A grid value or an override that the scenario does not accept would otherwise fail inside the
first chunk of its grid point, after other points had already run; here each one is tried
alone (and every grid point whole) and reported as ``file:line: field: message``, with the
scenario loader's :class:`~harness_lab.scenarios.ScenarioError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness_lab.scenarios.loader import (
    Problem,
    ScenarioError,
    error_message,
    field_of,
    reported_errors,
)
from harness_lab.store.errors import storable_int
from harness_lab.sweep.sample import GridPoint, apply_overrides
from harness_lab.yaml_lines import YamlLines, node_line

__all__ = ["MAX_VALUE_DEPTH", "MAX_VALUE_ITEMS", "check_sweep", "point_problems",
           "value_problem"]

MAX_VALUE_ITEMS = 10_000
"""The most numbers, strings, keys and items one grid value or override may hold."""

MAX_VALUE_DEPTH = 32
"""The deepest a grid value or override may nest lists and mappings."""


def value_problem(value: Any) -> str | None:
    """Why a grid value or override cannot be fed to a run, or None.

    A sweep feeds it to every sample of its grid points: an integer must fit the 64-bit
    column a store holds it in, a float must be finite, and the value must stay small
    (:data:`MAX_VALUE_ITEMS` parts, :data:`MAX_VALUE_DEPTH` levels). Walked without
    recursion, so a value of any depth is refused rather than crashing the check.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUE_ITEMS:
            return f"holds more than {MAX_VALUE_ITEMS:,} items; a sweep value is a setting"
        if depth > MAX_VALUE_DEPTH:
            return f"nests deeper than {MAX_VALUE_DEPTH} levels; a sweep value is a setting"
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, int):
            if storable_int(item) is None:
                return (f"an integer of {len(str(abs(item)))} digits is beyond the 64-bit "
                        "range a run's values are stored in")
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{item} is not a finite number"
        elif isinstance(item, Mapping):
            stack.extend((part, depth + 1) for part in (*item.keys(), *item.values()))
        elif isinstance(item, (list, tuple)):
            stack.extend((part, depth + 1) for part in item)
    return None


def point_problems(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> list[str]:
    """What is wrong with scenario ``data`` under ``overrides`` (empty: a valid grid point)."""
    point: dict[str, Any] = dict(data)
    try:
        point = apply_overrides(point, overrides)
        GridPoint(point, 0, 0)
    except ValidationError as exc:  # worded as a scenario file's problems are
        return [": ".join(error_message(err, field_of(err, point) or "<document>"))
                for err in reported_errors(exc, point)]
    except Exception as exc:  # a path that cannot be set, a value the harness cannot build
        return [f"{type(exc).__name__}: {exc}"]
    return []


def check_sweep(data: Mapping[str, Any], *, grid: Mapping[str, Sequence[Any]],
                axes: Sequence[str], overrides: Mapping[str, Any],
                points: Sequence[Mapping[str, Any]], path: str) -> None:
    """Raise ScenarioError naming every override and grid value the scenario rejects.

    ``path`` is the scenario file (its grid's lines are looked up for the messages); the
    overrides are named as such, having no line. Nothing runs when any problem is found.
    """
    problems = [Problem(path, None, "", m) for m in point_problems(data, {})]
    if problems:
        raise ScenarioError(problems)
    for key, value in overrides.items():
        bad = value_problem(value)
        if bad is not None:
            problems.append(Problem(path, None, f"override {key}", bad))
            continue
        problems.extend(Problem(path, None, f"override {key}", f"{_short(value)}: {m}")
                        for m in point_problems(data, {key: value}))
    if problems:  # the grid's values are tried with the overrides: name only the overrides
        raise ScenarioError(problems)
    lines = grid_lines(path)
    for key in axes:
        problems.extend(_axis_problems(data, key, list(grid[key]), overrides, path,
                                       lines.get(key, [])))
    if not problems:
        for g, point in enumerate(points):
            problems.extend(Problem(path, None, "sweep.grid", f"grid point {g} {dict(point)}: "
                                    f"{m}") for m in point_problems(data, point))
    if problems:
        raise ScenarioError(problems)


def _axis_problems(data: Mapping[str, Any], key: str, values: list[Any],
                   overrides: Mapping[str, Any], path: str, lines: list[int | None]
                   ) -> list[Problem]:
    """The problems of each value of grid key ``key`` (each tried alone, with the overrides)."""
    out: list[Problem] = []
    for j, value in enumerate(values):
        line = lines[j] if j < len(lines) else (lines[0] if lines else None)
        bad = value_problem(value)
        if bad is not None:
            out.append(Problem(path, line, f"sweep.grid.{key}", f"value {j}: {bad}"))
            continue
        if value in values[:j]:
            out.append(Problem(path, line, f"sweep.grid.{key}",
                               f"value {j} ({_short(value)}) repeats value "
                               f"{values.index(value)}"))
        out.extend(Problem(path, line, f"sweep.grid.{key}", f"value {j} ({_short(value)}): {m}")
                   for m in point_problems(data, {**overrides, key: value}))
    return out


def _short(value: Any) -> str:
    """``repr(value)``, cut to a line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def grid_lines(path: str) -> dict[str, list[int | None]]:
    """Per grid key of the file at ``path``: the key's line, then each of its values' lines."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return {}
    grid = YamlLines(node).node(("sweep", "grid"))
    if not isinstance(grid, yaml.MappingNode):
        return {}
    out: dict[str, list[int | None]] = {}
    for key, value in grid.value:
        items = value.value if isinstance(value, yaml.SequenceNode) else []
        out[str(key.value)] = [node_line(i) for i in items] or [node_line(key)]
    return out
