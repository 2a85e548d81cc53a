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
from harness_lab.yaml_lines import Key, YamlLines

__all__ = ["expectation_line"]


@functools.lru_cache(maxsize=256)
def _root(path: str, mtime: float) -> yaml.Node | None:
    try:  # read within the loader's limits: the file may be the hostile one an ERROR row names
        return yaml.compose(read_source(Path(path)), Loader=UniqueKeyLoader)
    except (SourceError, yaml.YAMLError):
        return None


def _variant(lines: YamlLines, name: str) -> tuple[Key, ...] | None:
    """The path of the ``matrix`` list entry of the variant ``base[label]``, if the matrix is
    a list."""
    if not name.endswith("]") or "[" not in name:
        return None
    label = name[name.index("[") + 1:-1]
    matrix = lines.node(("matrix",))
    if isinstance(matrix, yaml.SequenceNode):
        for i in range(len(matrix.value)):
            entry = lines.node(("matrix", i, "name"))
            if isinstance(entry, yaml.ScalarNode) and entry.value == label:
                return ("matrix", i)
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
    lines = YamlLines(root)
    variant = _variant(lines, scenario)
    found: list[int | None] = []
    if field is not None:
        parts = re.split(r"[.\[]", field)
        if parts[0] == "turns" and len(parts) >= 3 and parts[1].isdigit():
            found.append(lines.key_line(("turns", parts[1], "expect", parts[2])))
        if parts[0] == "snapshot":
            found += [lines.key_line((*variant, "set")) if variant is not None else None,
                      lines.key_line(("snapshot",))]
        found += [lines.key_line((*holder, "expect", parts[0]))
                  for holder in (variant, ()) if holder is not None]
        found.append(lines.key_line(("case",)))
    found.append(lines.key_line(variant) if variant is not None else None)
    if scenario.endswith("]"):
        found.append(lines.key_line(("matrix",)))
    return next((line for line in found if line is not None), None) or (
        lines.key_line(("name",)) or 1)
