"""Read scenario YAML within bounds: the safe loader, refusing what no scenario needs.

:class:`UniqueKeyLoader` is PyYAML's safe loader, plus:

- a mapping giving a key twice, or an integer outside the store's signed 64-bit range, is
  collected (with its field path and line) and raised once the document is built, as
  :class:`DocumentError`;
- nesting deeper than :data:`~harness_lab.scenarios.limits.MAX_DEPTH`, a document of more
  than :data:`~harness_lab.scenarios.limits.MAX_NODES` values once every alias and merge is
  expanded, or an alias inside the node it names, stops composing at once with
  :class:`LimitError`, before anything has been expanded.

Node sizes are counted as nodes finish (each node once, an alias by the size of what it names),
so the checks cost time linear in the text, whatever the aliases would expand to.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness_lab.bounded_json import InputError
from harness_lab.scenarios.limits import INT_MAX, INT_MIN, MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES
from harness_lab.yaml_lines import node_line

__all__ = ["DocumentError", "DuplicateKeyError", "Issue", "LimitError", "SourceError",
           "UniqueKeyLoader", "YamlInputError", "compose", "load_yaml", "read_source"]

try:  # libyaml parses the same events as PyYAML's parser, four times faster
    from yaml.cyaml import CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _Base: type = yaml.SafeLoader
else:
    class _CSafeLoader(yaml.composer.Composer, CParser,  # type: ignore[misc]
                       yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """The safe loader on libyaml's parser, composing nodes in Python (so the composing
        below can bound them)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    _Base = _CSafeLoader

_INT_TAG = "tag:yaml.org,2002:int"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_SHOWN_PARTS = 6  # a field path deeper than this is shortened with "…" in messages


class SourceError(ValueError):
    """A scenario file that cannot be read as text: not a regular file, too large, unreadable
    or not UTF-8. ``line`` is the line of an undecodable byte, when that is the reason."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def read_source(path: Path, what: str = "a scenario file") -> str:
    """The text of ``what``, the file ``path``; raise :class:`SourceError`.

    The file is opened without blocking and checked before a byte is read: a FIFO, a device
    (``/dev/zero``), a socket or a directory is refused, and so is a file larger than
    :data:`~harness_lab.scenarios.limits.MAX_FILE_BYTES` (a file growing while it is read is
    cut off at that size and refused too).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # checked before the descriptor becomes a file object,
        os.close(fd)                    # which a directory's cannot
        raise SourceError(f"not a regular file ({_file_kind(info.st_mode)}); {what} "
                          f"is a YAML file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_FILE_BYTES:
            raise SourceError(_too_large(info.st_size, what))
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise SourceError(f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(_too_large(None, what))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceError(f"the file is not UTF-8: byte 0x{data[exc.start]:02x} at column "
                          f"{column} cannot be decoded; save the file as UTF-8", line) from exc


def _too_large(size: int | None, what: str) -> str:
    given = f"{size:,} bytes" if size is not None else "more than that"
    return (f"the file holds {given}; {what} holds at most {MAX_FILE_BYTES:,} bytes "
            f"(see Limits in docs/scenarios.md)")


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a special file")


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found while reading the document: field path, 1-based line, message."""

    field: str
    line: int
    message: str


class LimitError(yaml.YAMLError):
    """The document goes past a limit (or holds a recursive alias); composing stopped there."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(f"line {issue.line}: {issue.field}: {issue.message}")
        self.issue = issue


class DocumentError(yaml.constructor.ConstructorError):
    """The document was read, and ``issues`` lists what it gives that no scenario may."""

    def __init__(self, issues: Sequence[Issue]) -> None:
        first = issues[0]
        super().__init__(None, None, f"line {first.line}: {first.field}: {first.message}")
        self.issues = list(issues)


class DuplicateKeyError(DocumentError):
    """A mapping gives the same key twice (``pairs``: first and repeated key nodes)."""

    def __init__(self, issues: Sequence[Issue],
                 pairs: Sequence[tuple[yaml.Node, yaml.Node]]) -> None:
        super().__init__(issues)
        self.pairs = list(pairs)


def _field(path: Sequence[str]) -> str:
    return ".".join([*path[:_SHOWN_PARTS], "…"] if len(path) > _SHOWN_PARTS else path)


class UniqueKeyLoader(_Base):  # type: ignore[valid-type,misc]
    """The safe YAML loader with unique keys, 64-bit integers and bounded size (see module)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[yaml.Node, yaml.Node]] = []
        self.issues: list[Issue] = []
        self.nodes = 0  # values of the document, aliases expanded (known once composed)
        self._measures: dict[int, tuple[int, int]] = {}  # id(node) -> (size, depth)
        self._paths: dict[int, tuple[str, ...]] = {}  # id(mapping node) -> its field path
        self._path: list[str] = []
        self._open = 0  # nodes being composed, the root included (a key adds no path part)

    # -- composing: limits and field paths ----------------------------------------------------

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        """The next node, refusing recursion, depth and size past the limits."""
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None and id(target) not in self._measures:
                self._stop(event.start_mark, f"the alias *{event.anchor} names a node that "
                                             f"contains it: the value would be infinite")
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        part = (str(index.value) if isinstance(index, yaml.Node)
                else str(index) if index is not None else None)
        if part is not None:
            self._path.append(part)
        self._open += 1
        if len(self._path) > MAX_DEPTH or self._open > MAX_DEPTH + 1:
            self._stop(self.peek_event().start_mark,
                       f"nested more than {MAX_DEPTH} levels deep (see Limits in "
                       f"docs/scenarios.md)")
        node: yaml.Node = super().compose_node(parent, index)
        self._measure(node)
        self._open -= 1
        if part is not None:
            self._path.pop()
        return node

    def compose_document(self) -> yaml.Node | None:
        """The document's root node; ``nodes`` holds its expanded size."""
        node: yaml.Node | None = super().compose_document()
        if node is not None:
            self.nodes = self._measures[id(node)][0]
        return node

    def _measure(self, node: yaml.Node) -> None:
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG:
                self._check_int(node)
            self._measures[id(node)] = (1, 0)
            return
        if isinstance(node, yaml.MappingNode):
            self._paths[id(node)] = tuple(self._path)
            children = [n for pair in node.value for n in pair]
        else:
            children = list(node.value)
        measures = [self._measures[id(c)] for c in children]
        size = 1 + sum(m[0] for m in measures)
        depth = 1 + max((m[1] for m in measures), default=0)
        if size > MAX_NODES:
            self._stop(node.start_mark, f"this value holds more than {MAX_NODES:,} values once "
                                        f"its aliases and merges are expanded (see Limits in "
                                        f"docs/scenarios.md)")
        if depth + len(self._path) > MAX_DEPTH:
            self._stop(node.start_mark, f"nested more than {MAX_DEPTH} levels deep once its "
                                        f"aliases are expanded (see Limits in docs/scenarios.md)")
        self._measures[id(node)] = (size, depth)

    def _check_int(self, node: yaml.ScalarNode) -> None:
        digits = node.value.replace("_", "").lstrip("+-")
        if len(digits) <= 18 and digits.isdigit():
            return  # below 10**18, decimal or octal: within range without converting
        value = (yaml.constructor.SafeConstructor.construct_yaml_int(self, node)
                 if len(digits) <= 64 else None)
        if value is not None and INT_MIN <= value <= INT_MAX:
            return
        shown = (node.value if len(node.value) <= 24
                 else f"{node.value[:20]}… ({len(digits)} digits)")
        self.issues.append(Issue(_field(self._path), node_line(node),
                                 f"the integer {shown} is outside the signed 64-bit range the "
                                 f"store keeps ({INT_MIN} to {INT_MAX})"))
        node.value = "0"  # the document is refused; construction must not convert it

    def _stop(self, mark: yaml.Mark, message: str) -> None:
        raise LimitError(Issue(_field(self._path), mark.line + 1, message))

    # -- constructing: duplicate keys -----------------------------------------------------------

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of ``node``, recording each key it gives twice."""
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:
                continue  # an unhashable key: the base constructor refuses it
            if first is not key_node:
                self.duplicates.append((first, key_node))
                where = [*self._paths.get(id(node), ()), str(key_node.value)]
                self.issues.append(Issue(
                    _field(where), node_line(key_node),
                    f"duplicate key {key_node.value!r}: given at line {node_line(first)} and "
                    f"again at line {node_line(key_node)}"))
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

    def construct_document(self, node: yaml.Node) -> Any:
        """The document's data; raise DocumentError for what the document may not give."""
        data = super().construct_document(node)
        if self.duplicates:
            raise DuplicateKeyError(self.issues, self.duplicates)
        if self.issues:
            raise DocumentError(self.issues)
        return data


def compose(text: str) -> tuple[yaml.Node | None, Any, int]:
    """The node tree of the YAML ``text``, its data and its number of values (aliases
    expanded), read by :class:`UniqueKeyLoader`, which raises what it refuses."""
    loader = UniqueKeyLoader(text)  # the reader refuses control characters here
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        return node, data, loader.nodes
    finally:
        loader.dispose()


class YamlInputError(InputError):
    """A YAML file from a user that this toolkit refuses: ``source``, ``line`` and why."""


def load_yaml(path: Path, what: str = "a YAML file") -> tuple[yaml.Node | None, Any]:
    """The node tree and data of the YAML file ``path``, read within the scenario files'
    limits (a regular file of at most 1 MiB, UTF-8, nesting, size once aliases expand, unique
    keys, 64-bit integers, the safe tags only); raise :class:`YamlInputError` naming the file
    and line of anything else. Snapshots and adapter files are read through it."""
    source = str(path)
    try:
        text = read_source(path, what)
    except SourceError as exc:
        raise YamlInputError(source, exc.line, str(exc)) from None
    try:
        node, data, _ = compose(text)
        return node, data
    except LimitError as exc:
        raise YamlInputError(source, exc.issue.line, exc.issue.message) from None
    except DocumentError as exc:
        first = min(exc.issues, key=lambda i: i.line)
        raise YamlInputError(source, first.line, f"{first.field}: {first.message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlInputError(source, mark.line + 1 if mark is not None else None,
                             f"malformed YAML: {problem}") from None
    except RecursionError:  # the depth limit stops first; never a traceback regardless
        raise YamlInputError(source, None, "the document nests too deeply to be read") from None
