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

from harness_lab.scenarios.match import ANY, LIST_OPERATORS, check_pattern
from harness_lab.scenarios.relations import parse_relation
from harness_lab.scenarios.suggest import did_you_mean
from harness_lab.states import (
    CancellationReason,
    ChatApplicationStatus,
    InformationGain,
    PreflightReason,
    RunState,
    SseEventKind,
    SseState,
    TraceEventType,
)

__all__ = ["ENUM_PLACEHOLDER", "GainsPattern", "MappingPattern", "Pattern", "RecordsPattern",
           "RejectionsPattern", "RelationText", "SsePattern", "SseStatesPattern",
           "StatusesPattern", "TerminationsPattern", "TimelinePattern", "TraceItemsPattern",
           "TracePattern", "with_pattern_definitions"]

_DOC = ("A pattern (docs/scenarios.md, Matching): a scalar is compared exactly (`$any`: any "
        "value), a list item by item, a mapping by the keys it names; `$equals`, "
        "`$in_order`, `$adjacent`, `$any_order`, `$contains`, `$count`, `$absent` and "
        "`$where` are the operators.")

_COUNT = {"description": "How many items: a number, a mapping of item to number, or a list "
                         "of {of: PATTERN, n: NUMBER}; a number may be a comparison ('>= 2')."}
_WHERE = {"description": "Relations between values under the matched one, e.g. "
                         "'detail.lost_to_at < detail.at' (one text or a list)."}


def _operators(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"$equals": {"description": "Exactly this value."},
                           "$in_order": {"type": "array", "items": item,
                                         "description": "These items occur in this order."},
                           "$adjacent": {"type": "array", "items": item,
                                         "description": "These items occur one right "
                                                        "after another."},
                           "$any_order": {"type": "array", "items": item,
                                          "description": "Exactly these items, in any "
                                                         "order."},
                           "$contains": {"type": "array", "items": item,
                                         "description": "Each of these matches an item of "
                                                        "its own, in any order."},
                           "$count": _COUNT,
                           "$absent": {"type": "array", "items": item,
                                       "description": "No item matches any of these."},
                           "$where": _WHERE},
            "additionalProperties": False}


def _list_schema(item: dict[str, Any], what: str) -> dict[str, Any]:
    return {"description": f"{what} {_DOC}",
            "anyOf": [{"type": "array", "items": item}, _operators(item), {"type": "null"}]}


_ENUMS: tuple[type[enum.Enum], ...] = (CancellationReason, ChatApplicationStatus,
                                        InformationGain, PreflightReason, RunState,
                                        SseEventKind, SseState, TraceEventType)


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


_Words = tuple[tuple[type[enum.Enum], ...], tuple[str, ...]]  # enums, and words beside them


def _respell(kinds: tuple[type[enum.Enum], ...], key: str | None,
             fields: dict[str, _Words] | None = None,
             words: tuple[str, ...] = ()) -> Callable[[Any], Any]:
    """A validator respelling the key values of a list pattern's items as ``kinds``' values
    (and ``words``), and each of ``fields`` of its mapping items as that field's enums'."""
    known = _spellings(kinds, words)
    name = " or ".join(k.__name__ for k in kinds)
    others = {f: (_spellings(k, w), " or ".join([*(e.__name__ for e in k), *w]))
              for f, (k, w) in (fields or {}).items()}

    def one(value: Any, spellings: dict[str, str] = known, what: str = name) -> Any:
        if not isinstance(value, str) or value.startswith("$"):
            return value
        found = spellings.get(value.lower())
        if found is None:
            choices = sorted(spellings.values())
            raise ValueError(f"unknown {what} {value!r}{did_you_mean(value, choices)}")
        return found

    def item(value: Any) -> Any:
        if isinstance(value, str):
            return one(value)
        if isinstance(value, dict):
            out = dict(value)
            if key is not None and isinstance(out.get(key), str):
                out[key] = one(out[key])
            for f, (spellings, what) in others.items():
                if isinstance(out.get(f), str):
                    out[f] = one(out[f], spellings, what)
            return out
        return value

    def count(value: Any) -> Any:
        if isinstance(value, dict):
            return {item(k): v for k, v in value.items()}
        if isinstance(value, list):
            return [{**r, "of": item(r["of"])} if isinstance(r, dict) and "of" in r else r
                    for r in value]
        return value

    def fix(pattern: Any) -> Any:
        if isinstance(pattern, list):
            return [item(v) for v in pattern]
        if isinstance(pattern, dict):
            return {k: [item(v) for v in p] if k in LIST_OPERATORS and isinstance(p, list)
                    else count(p) if k == "$count" else p for k, p in pattern.items()}
        return pattern

    return fix


def _spellings(kinds: tuple[type[enum.Enum], ...], words: tuple[str, ...]) -> dict[str, str]:
    """Each value of ``kinds`` and each of ``words``, by its lower case."""
    values = [str(m.value) for kind in kinds for m in kind] + list(words)
    return {v.lower(): v for v in values}


def _item_schema(kinds: tuple[type[enum.Enum], ...], key: str | None) -> dict[str, Any]:
    """The schema of an item of a list pattern: a ``kinds`` value (or ``$any``) or a mapping
    (naming one as its ``key``, when given)."""
    named: dict[str, Any] = {"anyOf": [{ENUM_PLACEHOLDER: k.__name__} for k in kinds]}
    if len(kinds) == 1:
        named = {ENUM_PLACEHOLDER: kinds[0].__name__}
    mapping = {"type": "object"} if key is None else {"type": "object", "properties": {key: named}}
    return {"anyOf": [named, {"const": ANY}, mapping]}


def _schema_of_items(kinds: tuple[type[enum.Enum], ...], key: str | None,
                     what: str) -> WithJsonSchema:
    """The schema of a list pattern whose items are ``kinds`` values (or ``$any``) or
    mappings (naming one as their ``key``, when given)."""
    return WithJsonSchema(_list_schema(_item_schema(kinds, key), what))


_CHECK = AfterValidator(check_pattern)


def _items_of(kinds: tuple[type[enum.Enum], ...], key: str | None, what: str
              ) -> tuple[Any, ...]:
    """The metadata of a list pattern whose items name ``kinds`` values (a mapping item by
    its ``key``, when given): checked, respelt as the enums spell them, and so described."""
    return _CHECK, AfterValidator(_respell(kinds, key)), _schema_of_items(kinds, key, what)


Pattern = Annotated[Any, _CHECK, WithJsonSchema({"description": _DOC})]
"""Any pattern."""

StatusesPattern = Annotated[Any, *_items_of(
    (ChatApplicationStatus,), None,
    "The ChatApplicationStatus values of the `status` events, in order.")]
"""A pattern over the status values of a run's ``status`` events."""

SsePattern = Annotated[Any, *_items_of(
    (SseEventKind,), "kind",
    "The SSE events sent, each {kind, t, data}; a string item is a kind.")]
"""A pattern over a run's SSE events."""

TracePattern = Annotated[Any, *_items_of(
    (TraceEventType,), "type",
    "The trace events, each {type, t, phase, status, detail}; a string item is a type.")]
"""A pattern over a run's trace."""

TraceItemsPattern = Annotated[
    list[Any], _CHECK, AfterValidator(_respell((TraceEventType,), "type")),
    WithJsonSchema({"type": "array", "items": _item_schema((TraceEventType,), "type"),
                    "description": "Trace events, each a pattern of one event {type, t, "
                                   "phase, status, detail}; a string item is a type."})]
"""The items of an operator over a run's trace (``trace_contains``, ``trace_excludes``): a
list, never a scalar or a mapping, since the operator is the field's."""

RejectionsPattern = Annotated[Any, *_items_of(
    (PreflightReason,), "reason",
    "The preflight rejections, each {tool, scope, reason, message, t, call_id}; a string "
    "item is a reason.")]
"""A pattern over a run's preflight rejections."""

SseKindsPattern = Annotated[Any, *_items_of(
    (SseEventKind,), None, "The kinds of the SSE sends refused, in order.")]
"""A pattern over the kinds of the SSE sends a run's session refused."""

GainsPattern = Annotated[Any, *_items_of(
    (InformationGain,), None, "Every InformationGain decided, in order.")]
"""A pattern over the InformationGain of each tool result."""

RecordsPattern = Annotated[Any, _CHECK, WithJsonSchema(_list_schema({}, "Records, in order."))]
"""A pattern over a list of records (invocations, router and model requests...)."""

MappingPattern = Annotated[Any, _CHECK, WithJsonSchema({"description": _DOC,
                                                         "type": ["object", "null"]})]
"""A pattern over one record (the stored row, the ProgressSnapshot, the usage)."""

SseStatesPattern = Annotated[Any, *_items_of(
    (SseState,), "state",
    "Every state the SSE session entered, each {state, t}, NEW first; a string item is a "
    "state.")]
"""A pattern over the SSE session's state history."""

TimelinePattern = Annotated[Any, *_items_of(
    (TraceEventType, SseEventKind), "event",
    "The trace and SSE events in the order they happened, each {event, source: trace|sse, "
    "t}; a string item is a trace type or an SSE kind.")]
"""A pattern over a run's trace and SSE events in one order."""

TerminationsPattern = Annotated[
    Any, _CHECK,
    AfterValidator(_respell((), None, {"state": ((RunState,), ()),
                                       "reason": ((CancellationReason,), ("completed",))})),
    WithJsonSchema(_list_schema({"type": "object",
                                 "properties": {"state": {ENUM_PLACEHOLDER: "RunState"},
                                                "reason": {"anyOf": [
                                                    {ENUM_PLACEHOLDER: "CancellationReason"},
                                                    {"const": "completed"}]}}},
                                "Every terminal transition, each {state, reason, detail, t}: "
                                "reason is the CancellationReason that ended the run, or "
                                "completed."))]
"""A pattern over a run's terminal transitions."""


_LABELS: dict[str, tuple[type[enum.Enum], ...]] = {
    "trace": (TraceEventType,), "sse": (SseEventKind,), "rejections": (PreflightReason,),
    "timeline": (TraceEventType, SseEventKind), "sse_states": (SseState,)}


def _relation(text: Any) -> Any:
    """``text`` when it parses and each item its paths name by key value names a value of
    that list's enum (``trace[RUN_FINSHED]`` is refused with a "did you mean")."""
    relation = parse_relation(text)
    for side in (relation.left, relation.right):
        steps = side.steps or ()
        part = steps[0].name if steps else None
        if part not in _LABELS:
            continue
        spellings = _spellings(_LABELS[part], ())
        for step in steps[1:2]:
            if step.keyed_by is None or step.label is None:
                continue
            value = step.label.partition("#")[0]
            if value not in spellings.values():
                names = " or ".join(k.__name__ for k in _LABELS[part])
                raise ValueError(f"{side.text}: unknown {names} {value!r}"
                                 f"{did_you_mean(value, list(spellings.values()))}")
    return text


RelationText = Annotated[str, AfterValidator(_relation),
                         WithJsonSchema({"type": "string",
                                         "description": "LEFT OP RIGHT over observed paths, "
                                                        "e.g. 'sse[content].t == "
                                                        "trace[RUN_FINISHED].t'."})]
"""One relation between observed values (:mod:`harness_lab.scenarios.relations`)."""
