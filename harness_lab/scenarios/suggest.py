"""'Did you mean' hints: the keys a scenario accepts at a place, and the closest to a typo."""

from __future__ import annotations

import difflib
import enum
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["accepted_keys", "did_you_mean"]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the choice closest to ``word`` (difflib), else ``""``."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def accepted_keys(model: type[BaseModel], loc: Sequence[int | str]) -> set[str]:
    """The keys the mapping at ``loc`` (a pydantic error location) accepts.

    ``loc`` is followed through fields, list items and mapping values; a part that is a
    union member's tag (a fault ``kind``, ``list[RouteStepSpec]``) picks that member when it
    names one, and is skipped otherwise.
    """
    current: list[Any] = [model]
    for part in loc:
        members = [leaf for tp in current for leaf in _members(tp)]
        tagged = [tp for tp in members if _tag_of(tp) == part]
        if tagged:  # a union member's tag (``list[Variant]``, ``user_cancel``) picks it
            current = tagged
            continue
        current = [nxt for tp in members for nxt in _follow(tp, part)] or members
    return {key for tp in current for leaf in _members(tp) for key in _keys(leaf)}


def _members(tp: Any) -> list[Any]:
    """The alternatives of ``tp``: union members, with Annotated and Optional unwrapped."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _members(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(tp) for m in _members(arg)]
    return [tp]


def _fields_of(tp: Any) -> dict[str, Any] | None:
    """The fields of ``tp`` when it is a pydantic model class; None for any other type.

    Typed loosely on purpose: the compiled build type-checks without pydantic's types."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        model: Any = tp
        fields: dict[str, Any] = model.model_fields
        return fields
    return None


def _follow(tp: Any, part: int | str) -> list[Any]:
    """The types ``part`` leads to inside ``tp`` (a field, a list item, a mapping value)."""
    fields = _fields_of(tp)
    if fields is not None:
        if not isinstance(part, str):
            return []
        for name, info in fields.items():
            if part in (name, info.alias):
                return [info.annotation]
        return []
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (list, tuple, set, frozenset) and isinstance(part, int) and args:
        return [args[0]]
    if origin is dict and isinstance(part, str) and len(args) == 2:
        return [args[1]]
    return []


def _tag_of(tp: Any) -> str | None:
    """The ``kind`` literal of a discriminated union member, or the member's type name."""
    fields = _fields_of(tp)
    if fields is not None:
        kind = fields.get("kind")
        if kind is not None and typing.get_origin(kind.annotation) is typing.Literal:
            return str(typing.get_args(kind.annotation)[0])
        return tp.__name__
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return f"str-enum[{tp.__name__}]"
    origin = typing.get_origin(tp)
    if origin in (list, dict):
        names = [getattr(a, "__name__", None) for a in typing.get_args(tp)]
        if all(names):
            return f"{origin.__name__}[{','.join(str(n) for n in names)}]"
    return None


def _keys(tp: Any) -> list[str]:
    fields = _fields_of(tp)
    if fields is not None:
        return [info.alias or name for name, info in fields.items()]
    return []
