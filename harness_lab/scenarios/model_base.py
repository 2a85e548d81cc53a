"""The base of every scenario-file model: strict keys, finite numbers, any-case enum values.

- ``extra="forbid"``: a misspelt key is an error naming its field path and line;
- ``allow_inf_nan=False``: ``.inf`` and ``.nan`` are no latency, time or budget;
- each field's docstring is its description in ``harness-lab schema`` (for editors);
- an enum or literal value may be written in any case (``fallback_type: NONE`` and
  ``run_state: success`` are ``none`` and ``SUCCESS``): the value is matched to the one
  spelling the field accepts before validation, so every enum field is read the same way.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["SpecModel", "empty", "exactly_one"]


class SpecModel(BaseModel):
    """A strict, frozen model of scenario data (see the module)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False,
                              use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _spelling(cls, data: Any) -> Any:
        """``data`` with enum and literal values in the spelling their fields accept."""
        if not isinstance(data, dict):
            return data
        changed: dict[str, Any] | None = None
        model: Any = cls  # typed loosely: the compiled build type-checks without pydantic
        for key, words in _spelled_keys(model):
            if key not in data:
                continue
            value = data[key]
            fixed = _respell(value, words)
            if fixed is not value:
                changed = changed if changed is not None else dict(data)
                changed[key] = fixed
        return changed if changed is not None else data


def empty(kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """A field defaulting to a new empty ``list`` or ``dict``. Validation deep-copies a
    shared mutable default for every model that leaves the field out, which costs more than
    the factory; the schema still shows the default."""
    return Field(default_factory=kind, json_schema_extra={"default": kind()})


def exactly_one(model: Any, names: tuple[str, ...], message: str) -> Any:
    """``model`` when exactly one of its fields ``names`` is given (neither None nor False);
    else ValueError(``message``)."""
    if sum(getattr(model, n) is not None and getattr(model, n) is not False for n in names) != 1:
        raise ValueError(message)
    return model


@functools.cache
def _spelled_keys(model: Any) -> tuple[tuple[str, dict[str, str]], ...]:
    """Each key of ``model`` (a field's name, and its alias) whose field takes enum or
    literal values, with their spellings: the keys :meth:`SpecModel._spelling` looks at, of
    a few fields in most models and none in many."""
    keys = []
    for name, info in model.model_fields.items():
        words = _words(model, name)
        if words:
            keys += [(key, words) for key in dict.fromkeys((name, info.alias)) if key]
    return tuple(keys)


@functools.cache
def _words(model: Any, key: str) -> dict[str, str] | None:
    """The enum/literal spellings field ``key`` accepts, by their lower case (None if none or
    if two spellings differ only in case)."""
    info = next((f for name, f in model.model_fields.items() if key in (name, f.alias)), None)
    if info is None:
        return None
    spellings = set(_spellings(info.annotation))
    words = {s.lower(): s for s in spellings}
    return words if words and len(words) == len(spellings) else None


def _spellings(tp: Any) -> list[str]:
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [m.value for m in tp if isinstance(m.value, str)]
    if origin is typing.Literal:
        return [a for a in typing.get_args(tp) if isinstance(a, str)]
    if origin in (typing.Union, types.UnionType, list, typing.Annotated):
        args = typing.get_args(tp)
        return [s for a in (args[:1] if origin is typing.Annotated else args)
                for s in _spellings(a)]
    return []


def _respell(value: Any, words: dict[str, str]) -> Any:
    if isinstance(value, str):
        return words.get(value.lower(), value) if value not in words.values() else value
    if isinstance(value, list):
        fixed = [_respell(v, words) for v in value]
        return fixed if any(a is not b for a, b in zip(fixed, value, strict=True)) else value
    return value
