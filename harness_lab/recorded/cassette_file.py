"""Cassette files on disk: read and checked strictly, written atomically.

:func:`read_cassette` loads a vcrpy YAML cassette and refuses anything that is not one with a
:class:`CassetteError` naming the file, the line and, inside ``interactions``, the
interaction's index and field (the refusals: ``docs/recording.md``). A file that does not
exist is not an error here: vcrpy treats it as an empty cassette (``CassetteNotFoundError``).

A process parses each cassette once: the checked interactions are cached by the file's path
and the digest of its bytes (an edited file is read again), and every call gets fresh request
objects and copies of the responses and metadata, since vcrpy changes loaded requests in
place. The file's bytes are still read on every call.

:class:`CassettePersister` plugs these reads into vcrpy and writes a cassette whole or not
at all (:func:`harness_lab.atomic.write_atomically`), so a reader (or a crash) never sees half
a cassette.
"""

from __future__ import annotations

import copy
import hashlib
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]
from vcr.persisters.filesystem import CassetteNotFoundError  # type: ignore[import-untyped]
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]
from vcr.serialize import serialize  # type: ignore[import-untyped]
from vcr.serializers import compat, yamlserializer  # type: ignore[import-untyped]

from harness_lab.atomic import write_atomically
from harness_lab.errors import HarnessError
from harness_lab.yaml_lines import YamlLines

__all__ = ["CACHED_CASSETTES", "CACHED_CASSETTE_BYTES", "MAX_CASSETTE_BYTES", "MAX_NESTING",
           "CassetteError", "CassettePersister", "check_cassette", "duplicate_key",
           "nesting_problem", "read_cassette"]

MAX_CASSETTE_BYTES = 64 * 1024 * 1024
"""The largest cassette file read (64 MiB): far above any recorded conversation."""

MAX_NESTING = 32
"""The deepest YAML nesting accepted; a vcrpy cassette needs five levels."""

CACHED_CASSETTES = 32
"""How many parsed cassettes a process keeps (the least recently read goes first)."""

CACHED_CASSETTE_BYTES = 4 * 1024 * 1024
"""Cassette files larger than this (4 MiB) are parsed on every read, never kept."""

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CassetteError(HarnessError, ValueError):
    """A cassette file that cannot be replayed, with where the problem is.

    ``path`` is the file, ``line`` the 1-based line (or None), ``interaction`` the 0-based
    index within ``interactions`` (or None), ``field`` the key path inside that interaction
    (or None) and ``reason`` what is wrong.
    """

    def __init__(self, path: str | Path, reason: str, *, line: int | None = None,
                 interaction: int | None = None, field: str | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        self.line = line
        self.interaction = interaction
        self.field = field
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        what = "".join(f"{w}: " for w in (
            f"interaction {interaction}" if interaction is not None else None, field) if w)
        super().__init__(f"cassette {where}: {what}{reason}")


# -- reading --------------------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CassetteNotFoundError() from None
    except OSError as exc:
        raise CassetteError(path, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise CassetteError(path, "is a directory, not a cassette file")
    if not stat.S_ISREG(info.st_mode):
        raise CassetteError(path, "is not a regular file (a cassette is a YAML file)")
    if info.st_size > MAX_CASSETTE_BYTES:
        raise CassetteError(path, f"is {info.st_size:,} bytes; cassettes are limited to "
                                  f"{MAX_CASSETTE_BYTES:,} bytes")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CASSETTE_BYTES + 1)
    except OSError as exc:
        raise CassetteError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CASSETTE_BYTES:
        raise CassetteError(path, f"is over {MAX_CASSETTE_BYTES:,} bytes, the cassette limit")
    return raw


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CassetteError(path, f"byte 0x{raw[exc.start]:02x} at column {column} is not "
                                  "UTF-8 (a cassette is UTF-8 YAML)", line=line) from None


def _yaml_error(path: Path, exc: yaml.YAMLError) -> CassetteError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    parts = (getattr(exc, "context", None), getattr(exc, "problem", None))
    text = " ".join(str(p) for p in parts if p) or str(exc).splitlines()[0]
    return CassetteError(path, f"is not valid YAML: {text}",
                         line=None if mark is None else int(mark.line) + 1)


def nesting_problem(text: str, *, aliases: bool = True) -> tuple[int, str] | None:
    """The 1-based line and reason of the first collection of YAML ``text`` nested deeper
    than :data:`MAX_NESTING` or, unless ``aliases``, of its first alias; None when there is
    neither. Found from the parser's events, before anything recursive reads the text; raise
    ``yaml.YAMLError`` for text that is not YAML."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        line = int(event.start_mark.line) + 1
        if not aliases and isinstance(event, yaml.AliasEvent):
            return line, "YAML aliases are not accepted"
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                return line, f"nests deeper than {MAX_NESTING} levels"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def duplicate_key(root: yaml.Node | None) -> tuple[int, str] | None:
    """The 1-based line and reason of the first key of a composed YAML document given twice
    in one mapping (YAML loaders keep the last silently), or None."""
    seen: set[int] = set()
    stack = [] if root is None else [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: its node is checked once
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    earlier = first.setdefault((key.tag, key.value), key)
                    if earlier is not key:
                        line = int(key.start_mark.line) + 1
                        return line, (f"duplicate key {key.value!r}: given at line "
                                      f"{int(earlier.start_mark.line) + 1} and again at line "
                                      f"{line}")
                stack += (value, key)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return None


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class _Checker:
    """Checks the constructed data of one cassette; ``fail`` names the line of a key path."""

    def __init__(self, path: Path, root: Any) -> None:
        self.path = path
        self.lines = YamlLines(root)

    def fail(self, keys: Sequence[str | int], reason: str) -> CassetteError:
        interaction = keys[1] if len(keys) > 1 and isinstance(keys[1], int) else None
        field = ".".join(str(k) for k in (keys if interaction is None else keys[2:])) or None
        return CassetteError(self.path, reason, line=self.lines.line(keys),
                             interaction=interaction, field=field)

    def mapping(self, value: Any, keys: Sequence[str | int]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(keys, f"must be a mapping, not {_type_name(value)}")
        return value

    def key(self, value: Mapping[str, Any], key: str, keys: Sequence[str | int]) -> Any:
        if key not in value:
            raise self.fail(keys, f"`{key}` is missing")
        return value[key]

    def text(self, value: Any, keys: Sequence[str | int], *, optional: bool = False) -> None:
        if isinstance(value, str | bytes) or (optional and value is None):
            return
        raise self.fail(keys, f"must be a string, not {_type_name(value)}")

    def headers(self, value: Any, keys: Sequence[str | int], *, request: bool = False) -> None:
        """Header values: each a string or a list of strings (for a request, not an empty
        one: a request header sent has a value, and vcrpy reads the first)."""
        for name, values in self.mapping(value, keys).items():
            where = [*keys, str(name)]
            if isinstance(values, str | bytes):
                continue
            if not isinstance(values, list):
                raise self.fail(where, "must be a string or a list of strings, not "
                                       f"{_type_name(values)}")
            if request and not values:
                raise self.fail(where, "must hold at least one string (a request header "
                                       "sent has a value)")
            for i, item in enumerate(values):
                self.text(item, [*where, i])

    def interaction(self, item: Any, i: int) -> None:
        at: list[str | int] = ["interactions", i]
        entry = self.mapping(item, at)
        req: list[str | int] = [*at, "request"]
        request = self.mapping(self.key(entry, "request", at), req)
        for name in ("method", "uri"):
            self.text(self.key(request, name, req), [*req, name])
        self.text(self.key(request, "body", req), [*req, "body"], optional=True)
        self.headers(self.key(request, "headers", req), [*req, "headers"], request=True)
        unknown = sorted(set(request) - {"method", "uri", "body", "headers"})
        if unknown:
            raise self.fail([*req, unknown[0]], f"unknown request key `{unknown[0]}`")
        res: list[str | int] = [*at, "response"]
        response = self.mapping(self.key(entry, "response", at), res)
        status = self.mapping(self.key(response, "status", res), [*res, "status"])
        code = self.key(status, "code", [*res, "status"])
        if isinstance(code, bool) or not isinstance(code, int) or not 100 <= code <= 599:
            raise self.fail([*res, "status", "code"],
                            f"must be an HTTP status from 100 to 599, not {code!r}")
        self.text(status.get("message"), [*res, "status", "message"], optional=True)
        self.headers(self.key(response, "headers", res), [*res, "headers"])
        body = self.mapping(self.key(response, "body", res), [*res, "body"])
        self.text(self.key(body, "string", [*res, "body"]), [*res, "body", "string"],
                  optional=True)


def _replayable(response: Mapping[str, Any]) -> dict[str, Any]:
    """A checked response in the exact shape vcrpy's httpx stub replays: a status message
    (None when absent), header values as lists, a body string (empty when null)."""
    headers = {name: [values] if isinstance(values, str | bytes) else list(values)
               for name, values in response["headers"].items()}
    body = response["body"]["string"]
    return {**response, "status": {"message": None, **response["status"]},
            "headers": headers, "body": {**response["body"], "string": b"" if body is None
                                         else body}}


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The checked interactions of one cassette file, never handed out themselves."""

    requests: tuple[dict[str, Any], ...]
    responses: tuple[dict[str, Any], ...]
    metadata: Any

    def fresh(self) -> tuple[Any, ...]:
        """New request objects and deep copies of the responses and metadata."""
        requests = [VcrRequest._from_dict(dict(r)) for r in self.requests]
        responses = copy.deepcopy(list(self.responses))
        if self.metadata:
            return requests, responses, copy.deepcopy(self.metadata)
        return requests, responses


_cache_lock = threading.Lock()
_cache: OrderedDict[str, tuple[bytes, _Parsed]] = OrderedDict()
"""Absolute path -> (digest of the bytes, parsed cassette), least recently read first."""


def _cached_parse(file: Path, raw: bytes, serializer: Any) -> _Parsed:
    """``_parse`` once per path and content: the cached result when the bytes are the same."""
    key, digest = os.path.abspath(file), hashlib.blake2b(raw, digest_size=20).digest()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == digest:
            _cache.move_to_end(key)
            return hit[1]
    parsed = _parse(file, raw, serializer)
    with _cache_lock:
        _cache[key] = (digest, parsed)
        _cache.move_to_end(key)
        while len(_cache) > CACHED_CASSETTES:
            _cache.popitem(last=False)
    return parsed


def _parse(file: Path, raw: bytes, serializer: Any) -> _Parsed:
    """Decode, parse and check the bytes of a cassette file."""
    text = _decode(file, raw)
    if not text.strip():
        raise CassetteError(file, "is empty: it holds no `interactions` (delete it or record "
                                  "it again with record mode `all`)", line=1)
    try:
        problem = nesting_problem(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(file, exc) from None
    if problem is not None:
        raise CassetteError(file, problem[1], line=problem[0])
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = serializer.deserialize(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(file, exc) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise CassetteError(file, f"cannot be read: {exc}") from None
    twice = duplicate_key(root)
    if twice is not None:
        raise CassetteError(file, twice[1], line=twice[0])
    checker = _Checker(file, root)
    if not isinstance(data, Mapping):
        raise CassetteError(file, "must be a mapping with an `interactions` list, not "
                                  f"{_type_name(data)}", line=checker.lines.line(()))
    if "interactions" not in data:
        raise CassetteError(file, "has no `interactions` list (is it a vcrpy cassette?)",
                            line=checker.lines.line(()))
    interactions = data["interactions"]
    if not isinstance(interactions, list):
        raise checker.fail(["interactions"], f"must be a list, not {_type_name(interactions)}")
    for i, item in enumerate(interactions):
        checker.interaction(item, i)
    requests, responses = [], []
    for i, item in enumerate(interactions):
        try:
            request = dict(item["request"])
            VcrRequest._from_dict(dict(request))  # refused here, not on a later cached read
            requests.append(request)
            responses.append(compat.convert_to_bytes(_replayable(item["response"])))
        except Exception as exc:  # noqa: BLE001 - anything vcrpy refuses names its interaction
            raise checker.fail(["interactions", i], f"cannot be read: {exc}") from None
    return _Parsed(tuple(requests), tuple(responses), data.get("metadata"))


def read_cassette(path: str | Path, serializer: Any = None) -> tuple[Any, ...]:
    """``(requests, responses)`` (and ``metadata`` when present) of the cassette at ``path``,
    parsed by ``serializer`` (vcrpy's YAML serializer by default).

    Raise ``CassetteNotFoundError`` (vcrpy's) when the file does not exist and
    :class:`CassetteError` for anything that is not a readable cassette. With the YAML
    serializer, bytes already parsed in this process are not parsed again; every call gets
    objects of its own (see the module's documentation).
    """
    file = Path(path)
    serializer = serializer if serializer is not None else yamlserializer
    raw = _read_bytes(file)
    if serializer is not yamlserializer or len(raw) > CACHED_CASSETTE_BYTES:
        return _parse(file, raw, serializer).fresh()
    return _cached_parse(file, raw, serializer).fresh()


def check_cassette(path: str | Path) -> int:
    """The number of interactions of the cassette at ``path``; CassetteError if unreadable.

    A missing file is a CassetteError here too: it cannot be replayed.
    """
    try:
        requests, *_ = read_cassette(path)
    except CassetteNotFoundError:
        raise CassetteError(path, "does not exist (record it with `harness-lab record`)") from None
    return len(requests)


class CassettePersister:
    """vcrpy persister: strict reads (:func:`read_cassette`), atomic writes.

    With ``read_existing=False`` an existing file is not read at all (record mode ``all``
    starts from nothing; the file is replaced only when the recording is saved).
    """

    def __init__(self, *, read_existing: bool = True) -> None:
        self.read_existing = read_existing

    def load_cassette(self, cassette_path: str | Path, serializer: Any) -> tuple[Any, ...]:
        """The cassette's interactions (vcrpy's persister protocol)."""
        if not self.read_existing:
            raise CassetteNotFoundError()
        return read_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: str | Path, cassette_dict: dict[str, Any],
                      serializer: Any) -> None:
        """Serialize and write atomically, making a missing directory (vcrpy's persister
        protocol)."""
        Path(cassette_path).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(cassette_path, serialize(cassette_dict, serializer).encode("utf-8"))
