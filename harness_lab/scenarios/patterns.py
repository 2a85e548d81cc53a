"""Pattern fields of ``expect``: the matching language as pydantic types, with their schema.

A pattern is free-form YAML data (see :mod:`harness_lab.scenarios.match`); these types check
its operators when the file loads and, for the lists whose items have a key field (SSE
kinds, trace types, rejection reasons, information gains), respell and check the key values
against the enum, as every enum field of the file is: ``trace: [run_started]`` is
``[RUN_STARTED]``, and ``[RUN_STARTD]`` is an error with a "did you mean".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from harness_lab.scenarios.match import LIST_OPERATORS, check_pattern
from harness_lab.scenarios.suggest import did_you_mean
from harness_lab.states import (
    ChatApplicationStatus,
    InformationGain,
    PreflightReason,
    SseEventKind,
    TraceEventType,
)

__all__ = ["ENUM_PLACEHOLDER", "GainsPattern", "MappingPattern", "Pattern", "RecordsPattern",
           "RejectionsPattern", "SsePattern", "StatusesPattern", "TracePattern",
           "with_pattern_definitions"]

_DOC = ("A pattern (docs/scenarios.md, Matching): a scalar is compared exactly, a list item "
        "by item, a mapping by the keys it names; `$equals`, `$in_order`, `$adjacent` and "
        "`$absent` are the operators.")


def _operators(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"$equals": {"description": "Exactly this value."},
                           "$in_order": {"type": "array", "items": item,
                                         "description": "These items occur in this order."},
                           "$adjacent": {"type": "array", "items": item,
                                         "description": "These items occur one right "
                                                        "after another."},
                           "$absent": {"type": "array", "items": item,
                                       "description": "No item matches any of these."}},
            "additionalProperties": False}


def _list_schema(item: dict[str, Any], what: str) -> dict[str, Any]:
    return {"description": f"{what} {_DOC}",
            "anyOf": [{"type": "array", "items": item}, _operators(item), {"type": "null"}]}


_ENUMS: tuple[type[enum.Enum], ...] = (ChatApplicationStatus, InformationGain, PreflightReason,
                                        SseEventKind, TraceEventType)


ENUM_PLACEHOLDER = "x-harness-lab-enum"
"""Stands for a ``$ref`` to an enum's definition in the pattern schemas: pydantic resolves
every ``$ref`` it generates, so :func:`with_pattern_definitions` writes them afterwards."""


def with_pattern_definitions(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (pydantic's) with each enum a list pattern's items name defined once in
    ``$defs`` and referred to wherever the pattern schemas name it."""
    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            if ENUM_PLACEHOLDER in node:
                return {"$ref": f"#/$defs/{node[ENUM_PLACEHOLDER]}"}
            return {k: fix(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    out = fix(schema)
    defs = {**out.get("$defs", {}),
            **{kind.__name__: {"enum": [str(m.value) for m in kind], "title": kind.__name__,
                               "type": "string"} for kind in _ENUMS}}
    out["$defs"] = dict(sorted(defs.items()))
    return out


def _respell(kind: type[enum.Enum], key: str | None) -> Callable[[Any], Any]:
    """A validator respelling the key values of a list pattern's items as ``kind``'s."""
    words = {str(m.value).lower(): str(m.value) for m in kind}

    def one(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        found = words.get(value.lower())
        if found is None:
            known = sorted(words.values())
            raise ValueError(f"unknown {kind.__name__} {value!r}"
                             f"{did_you_mean(value, known)}")
        return found

    def item(value: Any) -> Any:
        if isinstance(value, str):
            return one(value)
        if key is not None and isinstance(value, dict) and isinstance(value.get(key), str):
            return {**value, key: one(value[key])}
        return value

    def fix(pattern: Any) -> Any:
        if isinstance(pattern, list):
            return [item(v) for v in pattern]
        if isinstance(pattern, dict):
            return {k: [item(v) for v in p] if k in LIST_OPERATORS and isinstance(p, list)
                    else p for k, p in pattern.items()}
        return pattern

    return fix


def _schema_of_items(kind: type[enum.Enum], key: str | None, what: str) -> WithJsonSchema:
    """The schema of a list pattern whose items are ``kind`` values or mappings (naming one
    as their ``key``, when given)."""
    named = {ENUM_PLACEHOLDER: kind.__name__}
    mapping = {"type": "object"} if key is None else {"type": "object", "properties": {key: named}}
    return WithJsonSchema(_list_schema({"anyOf": [named, mapping]}, what))


_CHECK = AfterValidator(check_pattern)

Pattern = Annotated[Any, _CHECK, WithJsonSchema({"description": _DOC})]
"""Any pattern."""

StatusesPattern = Annotated[
    Any, _CHECK, AfterValidator(_respell(ChatApplicationStatus, None)),
    _schema_of_items(ChatApplicationStatus, None,
                     "The ChatApplicationStatus values of the `status` events, in order.")]
"""A pattern over the status values of a run's ``status`` events."""

SsePattern = Annotated[
    Any, _CHECK, AfterValidator(_respell(SseEventKind, "kind")),
    _schema_of_items(SseEventKind, "kind",
                     "The SSE events sent, each {kind, t, data}; a string item is a kind.")]
"""A pattern over a run's SSE events."""

TracePattern = Annotated[
    Any, _CHECK, AfterValidator(_respell(TraceEventType, "type")),
    _schema_of_items(TraceEventType, "type",
                     "The trace events, each {type, t, phase, status, detail}; a string "
                     "item is a type.")]
"""A pattern over a run's trace."""

RejectionsPattern = Annotated[
    Any, _CHECK, AfterValidator(_respell(PreflightReason, "reason")),
    _schema_of_items(PreflightReason, "reason",
                     "The preflight rejections, each {tool, scope, reason, message, t, "
                     "call_id}; a string item is a reason.")]
"""A pattern over a run's preflight rejections."""

GainsPattern = Annotated[
    Any, _CHECK, AfterValidator(_respell(InformationGain, None)),
    _schema_of_items(InformationGain, None, "Every InformationGain decided, in order.")]
"""A pattern over the InformationGain of each tool result."""

RecordsPattern = Annotated[Any, _CHECK, WithJsonSchema(_list_schema({}, "Records, in order."))]
"""A pattern over a list of records (invocations, router and model requests...)."""

MappingPattern = Annotated[Any, _CHECK, WithJsonSchema({"description": _DOC,
                                                         "type": ["object", "null"]})]
"""A pattern over one record (the stored row, the ProgressSnapshot, the usage)."""
