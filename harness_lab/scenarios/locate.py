"""Where in its file a scenario's expectation is written: ``file:line`` for people and rows.

A failed expectation is located at the line that states it: the variant's own ``expect``
entry in a ``matrix`` list, else the file's ``expect`` (a turn's ``turns[i].expect``), else
its ``case:``; a scenario without such a line at its ``matrix`` entry or its ``name``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from harness_lab.scenarios.safe_yaml import SourceError, UniqueKeyLoader, read_source

__all__ = ["expectation_line"]


@functools.lru_cache(maxsize=256)
def _root(path: str, mtime: float) -> yaml.Node | None:
    try:  # read within the loader's limits: the file may be the hostile one an ERROR row names
        return yaml.compose(read_source(Path(path)), Loader=UniqueKeyLoader)
    except (SourceError, yaml.YAMLError):
        return None


def _get(node: yaml.Node | None, key: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key]
    return None


def _key_line(node: yaml.Node | None, key: str) -> int | None:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k.start_mark.line + 1
    return None


def _variant(root: yaml.Node | None, name: str) -> yaml.Node | None:
    """The ``matrix`` list entry of the variant ``base[label]``, if the matrix is a list."""
    if not name.endswith("]") or "[" not in name:
        return None
    label = name[name.index("[") + 1:-1]
    matrix = _get(root, "matrix")
    if isinstance(matrix, yaml.SequenceNode):
        for item in matrix.value:
            entry = _get(item, "name")
            if isinstance(entry, yaml.ScalarNode) and entry.value == label:
                return item
    return None


def expectation_line(path: str | None, scenario: str, field: str | None = None) -> int | None:
    """The line of ``path`` stating the expectation ``field`` of ``scenario`` (a mismatch's
    field such as ``release_outcome`` or ``turns.0.run_state``), or the scenario's own line
    when ``field`` is None or states nowhere; None when the file cannot be read as YAML."""
    if path is None or not Path(path).is_file():
        return None
    root = _root(path, Path(path).stat().st_mtime)
    if not isinstance(root, yaml.MappingNode):
        return None
    variant = _variant(root, scenario)
    if field is not None:
        parts = re.split(r"[.\[]", field)
        if parts[0] == "turns" and len(parts) >= 3 and parts[1].isdigit():
            turn = _get(_get(root, "turns"), int(parts[1]))
            line = _key_line(_get(turn, "expect"), parts[2])
            if line is not None:
                return line
        if parts[0] == "snapshot":
            line = _key_line(variant, "set") if variant is not None else None
            line = line or _key_line(root, "snapshot")
            if line is not None:
                return line
        for holder in (variant, root):
            line = _key_line(_get(holder, "expect"), parts[0])
            if line is not None:
                return line
        line = _key_line(root, "case")
        if line is not None:
            return line
    if variant is not None:
        return variant.start_mark.line + 1
    if scenario.endswith("]"):
        line = _key_line(root, "matrix")
        if line is not None:
            return line
    return _key_line(root, "name") or 1
