"""One codec for the frozen value classes: JSON data, JSON Schema and back, from their fields.

The run record's tree (:class:`~harness_lab.record.RunRecord`, its usage, SSE and trace events,
tool invocations and rejections) is declared once, as annotated dataclasses; every encoding of
it is derived here from those annotations, so a new field is one edit and its tests:

- :func:`to_data`: JSON-ready data (enum members as their values, tuples as lists, nested
  value classes as objects; what a field leaves open, ``Any``, is written as JSON data, any
  other object as its ``str``);
- :func:`from_data`: the value back, every field checked against its annotation, a missing
  field taking its default; a bad value raises :class:`DecodeError` naming its path
  (``trace[3].type``);
- :func:`json_schema`: the JSON Schema of the encoded data, one ``$defs`` entry per class.

A compiled class keeps no annotations of its own (mypyc erases them): :mod:`harness_lab.native`
gives them back from the source, so both builds encode alike. Converters are built once per
class and cached.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

__all__ = ["DecodeError", "data", "from_data", "json_schema", "to_data"]

T = TypeVar("T")
Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]


class DecodeError(ValueError):
    """Data that does not decode to its declared type; ``path`` names where (``trace[3].t``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or 'value'}: {message}")
        self.path = path
        self.message = message


def data(value: Any) -> Any:
    """``value`` as JSON data: enum members as values, tuples as lists, mappings as objects
    with string keys, value classes by their fields, any other object as its ``str``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [data(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_data(value)
    return str(value)


def to_data(value: Any) -> dict[str, Any]:
    """The value class instance ``value`` as JSON-ready data, field by field."""
    kind: Any = type(value)
    return _encoder(kind)(value)  # type: ignore[no-any-return]


def from_data(cls: type[T], value: Any, path: str = "") -> T:
    """The ``cls`` instance that :func:`to_data` wrote as ``value``; raise
    :class:`DecodeError` naming the path of the first value that does not fit (below
    ``path``, the name of ``value`` itself, if given)."""
    try:
        kind: Any = cls
        return _decoder(kind)(value)  # type: ignore[no-any-return]
    except _Bad as bad:
        raise DecodeError(_path(bad.keys, path), bad.message) from None


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``cls`` as :func:`to_data` writes it: a ``$ref``
    to ``cls`` and a ``$defs`` entry for it and every value class and enum it holds."""
    defs: dict[str, Any] = {}
    root = _schema(cls, defs)
    return {**root, "$defs": dict(sorted(defs.items()))}


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


def _optional(tp: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None``; ``(False, tp)`` otherwise."""
    args = typing.get_args(tp)
    if _is_union(tp) and type(None) in args:
        rest = tuple(a for a in args if a is not type(None))
        return True, rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007
    return False, tp


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _is_value_class(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


# -- encoding -------------------------------------------------------------------------------

def _identity(value: Any) -> Any:
    return value


@functools.cache
def _encoder(tp: Any) -> Encoder:
    nullable, inner = _optional(tp)
    if nullable:
        encode = _encoder(inner)
        if encode is _identity:
            return _identity
        return lambda v: None if v is None else encode(v)
    if tp in (str, int, float, bool, type(None)):
        return _identity
    if tp is Any:
        return data
    if isinstance(tp, type) and issubclass(tp, Enum):
        return lambda v: v.value
    if _is_value_class(tp):
        return _class_encoder(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (tuple, list, Sequence):
        if origin is tuple and args and args[-1] is not Ellipsis:
            parts = tuple(_encoder(a) for a in args)
            return lambda v: [enc(x) for enc, x in zip(parts, v, strict=True)]
        item = _encoder(args[0]) if args else data
        if item is _identity:
            return list
        return lambda v: [item(x) for x in v]
    if origin in (dict, Mapping):
        item = _encoder(args[1]) if args else data
        return lambda v: {str(k): item(x) for k, x in v.items()}
    return data


def _class_encoder(cls: type) -> Encoder:
    hints = _hints(cls)
    plan = tuple((f.name, _encoder(hints[f.name])) for f in _fields(cls))

    def encode(value: Any) -> dict[str, Any]:
        return {name: enc(getattr(value, name)) for name, enc in plan}

    return encode


# -- decoding -------------------------------------------------------------------------------

class _Bad(Exception):
    """A value that does not fit, with the keys from it up to the value being decoded."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.keys: list[str | int] = [] if key is None else [key]


def _path(keys: Sequence[str | int], start: str) -> str:
    path = start
    for key in reversed(keys):
        path = f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)
    return path


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


@functools.cache
def _decoder(tp: Any) -> Decoder:
    nullable, inner = _optional(tp)
    if nullable:
        decode = _decoder(inner)
        return lambda v: None if v is None else decode(v)
    if tp is Any:
        return _identity
    if tp in _SCALARS:
        return _SCALARS[tp]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _enum_decoder(tp)
    if _is_value_class(tp):
        return _class_decoder(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (tuple, list, Sequence):
        return _sequence_decoder(origin, args)
    if origin in (dict, Mapping):
        return _mapping_decoder(_decoder(args[1]) if args else _identity)
    raise TypeError(f"the codec cannot decode {tp!r}")


def _string(v: Any) -> str:
    if type(v) is not str:
        raise _Bad(f"expected a string, got {_kind(v)}")
    return v


def _boolean(v: Any) -> bool:
    if type(v) is not bool:
        raise _Bad(f"expected true or false, got {_kind(v)}")
    return v


def _integer(v: Any) -> int:
    if type(v) is not int:
        raise _Bad(f"expected an integer, got {_kind(v)}")
    return v


def _number(v: Any) -> float:
    if type(v) is float:
        return v
    if type(v) is int:
        return float(v)
    raise _Bad(f"expected a number, got {_kind(v)}")


_SCALARS: dict[Any, Decoder] = {str: _string, bool: _boolean, int: _integer, float: _number}


def _enum_decoder(kind: type[Enum]) -> Decoder:
    members = {m.value: m for m in kind}

    def decode(v: Any) -> Any:
        try:
            return members[v]
        except (KeyError, TypeError):
            known = ", ".join(str(m) for m in members)
            raise _Bad(f"{v!r} is not a {kind.__name__} (one of {known})") from None

    return decode


def _keyed(decode: Decoder, v: Any, key: str | int) -> Any:
    try:
        return decode(v)
    except _Bad as bad:
        bad.keys.append(key)
        raise


def _mapping_decoder(item: Decoder) -> Decoder:
    def decode(v: Any) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise _Bad(f"expected an object, got {_kind(v)}")
        if item is _identity:
            return {str(k): x for k, x in v.items()}
        return {str(k): _keyed(item, x, str(k)) for k, x in v.items()}

    return decode


def _sequence_decoder(origin: Any, args: tuple[Any, ...]) -> Decoder:
    fixed = origin is tuple and bool(args) and args[-1] is not Ellipsis
    parts = tuple(_decoder(a) for a in args) if fixed else ()
    item = _decoder(args[0]) if args and not fixed else _identity
    make: Callable[[Any], Any] = list if origin is list else tuple

    def decode(v: Any) -> Any:
        if not isinstance(v, list | tuple):
            raise _Bad(f"expected an array, got {_kind(v)}")
        if fixed:
            if len(v) != len(parts):
                raise _Bad(f"expected {len(parts)} items, got {len(v)}")
            return tuple(_keyed(dec, x, i) for i, (dec, x) in enumerate(zip(parts, v,
                                                                             strict=True)))
        if item is _identity:
            return make(v)
        return make(_keyed(item, x, i) for i, x in enumerate(v))

    return decode


def _class_decoder(cls: type) -> Decoder:
    """Decode an object to ``cls``, passing the fields positionally in declaration order
    (every value class's constructor takes them so; keywords cost a compiled class more)."""
    hints = _hints(cls)
    plan = tuple((f.name, _decoder(hints[f.name]), _default_of(f)) for f in _fields(cls))
    known = frozenset(name for name, _, _ in plan)

    def decode(v: Any) -> Any:
        if not isinstance(v, dict):
            raise _Bad(f"expected an object ({cls.__name__}), got {_kind(v)}")
        if len(v) > len(known) or not known.issuperset(v):
            first = sorted(str(k) for k in v if k not in known)[0]
            raise _Bad(f"unknown field of {cls.__name__}", first)
        args = []
        for name, dec, default in plan:
            if name in v:
                try:
                    args.append(dec(v[name]))
                except _Bad as bad:
                    bad.keys.append(name)
                    raise
            elif default is _REQUIRED:
                raise _Bad("required field is missing", name)
            else:
                args.append(default())
        return cls(*args)

    return decode


_REQUIRED: Callable[[], Any] = object  # a sentinel: no default


def _default_of(f: dataclasses.Field[Any]) -> Callable[[], Any]:
    if f.default is not dataclasses.MISSING:
        value = f.default
        return lambda: value
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory
    return _REQUIRED


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return (f.default is not dataclasses.MISSING
            or f.default_factory is not dataclasses.MISSING)


# -- schema ---------------------------------------------------------------------------------

_NUMBER = {"type": "number"}


def _schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    nullable, inner = _optional(tp)
    if nullable:
        return {"anyOf": [_schema(inner, defs), {"type": "null"}]}
    if tp is Any:
        return {}
    simple = {str: {"type": "string"}, bool: {"type": "boolean"},
              int: {"type": "integer"}, float: _NUMBER}
    if tp in simple:
        return dict(simple[tp])
    if isinstance(tp, type) and issubclass(tp, Enum):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {"title": tp.__name__, "enum": [m.value for m in tp],
                                 **_described(tp)}
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if _is_value_class(tp):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # a placeholder against recursion
            defs[tp.__name__] = _class_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (tuple, list, Sequence):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {"type": "array", "prefixItems": [_schema(a, defs) for a in args],
                    "minItems": len(args), "maxItems": len(args)}
        return {"type": "array", "items": _schema(args[0], defs) if args else {}}
    if origin in (dict, Mapping):
        return {"type": "object",
                "additionalProperties": _schema(args[1], defs) if args else {}}
    raise TypeError(f"the codec has no schema for {tp!r}")


def _described(cls: type) -> dict[str, str]:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return {"description": " ".join(doc.split())} if doc else {}


def _class_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    properties = {}
    for f in _fields(cls):
        prop = _schema(hints[f.name], defs)
        note = f.metadata.get("doc") if f.metadata else None
        properties[f.name] = {**prop, "description": note} if note else prop
    required = [f.name for f in _fields(cls) if not _has_default(f)]
    return {"title": cls.__name__, "type": "object", **_described(cls),
            "properties": properties, "required": required, "additionalProperties": False}
