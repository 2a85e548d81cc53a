"""The line a field of a YAML document is written on, found in its composed node tree.

``yaml.compose`` keeps where each node starts. A field is named by its path from the root:
mapping keys, and sequence indices (an int, or a string of digits). Its line is its key's (a
sequence item's own), so a value written on the lines below its key is placed at the key.
Scenario files, adapter files, cassettes and sweep grids name their fields' lines this way.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

__all__ = ["Key", "YamlLines", "node_line"]

Key = str | int
"""One step of a field's path: a mapping key or a sequence index."""


def node_line(node: yaml.Node) -> int:
    """The (1-based) line ``node`` starts on."""
    return int(node.start_mark.line) + 1


class YamlLines:
    """The lines of the fields of one composed document (``root``; None for an empty one).

    Each mapping's keys are indexed once, when first asked: locating many fields costs time
    linear in their number, not in the document's size.
    """

    __slots__ = ("_keys", "root")

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root
        self._keys: dict[int, dict[str, tuple[yaml.Node, yaml.Node]]] = {}

    def node(self, path: Sequence[Key]) -> yaml.Node | None:
        """The value of the field at ``path``; None when the document has no such field."""
        found = self._along(path)
        if len(found) < len(path):
            return None
        return found[-1][1] if found else self.root

    def key_line(self, path: Sequence[Key]) -> int | None:
        """The line of the field at ``path``; None when the document has no such field."""
        found = self._along(path)
        if len(found) < len(path):
            return None
        return node_line(found[-1][0]) if found else self.line(())

    def line(self, path: Sequence[Key]) -> int | None:
        """The line of the deepest field found along ``path`` (the root's when none is; None
        for an empty document): the field itself, or the nearest line to where it is
        missing."""
        found = self._along(path)
        if found:
            return node_line(found[-1][0])
        return node_line(self.root) if self.root is not None else None

    def _along(self, path: Sequence[Key]) -> list[tuple[yaml.Node, yaml.Node]]:
        """(where it is written, its value) of each field found along ``path``, in order."""
        found: list[tuple[yaml.Node, yaml.Node]] = []
        node = self.root
        for key in path:
            step = self._child(node, key)
            if step is None:
                break
            found.append(step)
            node = step[1]
        return found

    def _child(self, node: yaml.Node | None, key: Key) -> tuple[yaml.Node, yaml.Node] | None:
        if isinstance(node, yaml.MappingNode):
            keys = self._keys.get(id(node))
            if keys is None:
                keys = self._keys[id(node)] = {}
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode):
                        keys.setdefault(k.value, (k, v))
            return keys.get(str(key))
        if isinstance(node, yaml.SequenceNode) and (isinstance(key, int) or key.isdigit()):
            index = int(key)
            if 0 <= index < len(node.value):
                return node.value[index], node.value[index]
        return None
