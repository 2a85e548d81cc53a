"""Variants: the base scenario plus one fault, for every point and every applicable fault kind.

Each variant is a plain scenario dict (it can be written as YAML and run with ``harness-lab
run``): the base scenario's data with its expectations removed (the explorer's oracle judges
the run instead), the base's own faults kept, one fault appended, and the name
``<base>@<point>/<fault>``.

Which faults apply at which point, and which are left out because they could not fire or
would mean nothing, is tabled in docs/explore.md ("The variants"); :func:`_points` and its
helpers below follow that table in its order.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter

from harness_lab.core.budget import BUDGET_KINDS
from harness_lab.explore.boundaries import BaseRun, BoundaryState
from harness_lab.ports import CallKind
from harness_lab.scenarios.faults import FAULT_KINDS, Fault, describe
from harness_lab.states import InvocationStatus, ToolErrorCode

__all__ = ["FAULT_ADAPTER", "PROVIDER_CALLS", "Variant", "enumerate_variants"]

FAULT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Fault)
"""Validates one fault dict into its fault model (any kind of the scenario format)."""

PROVIDER_CALLS = (CallKind.ROUTER, CallKind.MODEL, CallKind.GUARD, CallKind.REPAIR,
                  CallKind.RESPONDER, CallKind.RETRIEVER)
"""The model-like calls a ``provider_error`` can hit (tools fail through ``tool_error``)."""

_AT_FAULTS = ("client_disconnect", "user_cancel", "deadline", "crash")
_TIMED_FAULTS = ("client_disconnect", "user_cancel", "deadline")
_TOOL_ERRORS = ("execution", "projection", "size")  # "store" counts completions, see below
_TOOL_REJECTIONS = ("REQUEST", "ID", "STORE")
_DRAFT_FORMS = ("invalid_json", "schema_invalid", "empty")
_PROTOCOL_MODES = ("missing", "invalid", "bad_citation")
_REPAIR_FORMS = ("error", "invalid_json", "still_invalid")


@dataclass(frozen=True)
class Variant:
    """One explored variant: where, which fault, and the whole runnable scenario dict."""

    name: str
    point: str
    fault_label: str
    fault: dict[str, Any]
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        """The fault's kind (one of FAULT_KINDS)."""
        return str(self.fault["kind"])

    def to_yaml(self, expect: dict[str, Any] | None = None, *, case: str | None = None,
                note: str | None = None) -> str:
        """The variant as scenario YAML, with expectations (``case`` and/or ``expect``)."""
        data = copy.deepcopy(self.data)
        if note:
            data["description"] = f"{data.get('description', '')} {note}".strip()
        if case is not None:
            data["case"] = case
        if expect:
            data["expect"] = expect
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _at(b: BoundaryState) -> dict[str, Any]:
    return b.at().model_dump(mode="json", exclude_none=True)


def _call_fields(b: BoundaryState) -> dict[str, Any]:
    if b.kind is CallKind.TOOL:
        return {"call": b.kind.value, "tool": b.name, "n": b.name_ordinal}
    return {"call": b.kind.value, "n": b.ordinal}


def _points(base: BaseRun) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(point, fault label, fault) for every applicable fault, in lifecycle order."""
    yield from _start_points()
    for b in base.boundaries:
        yield from _boundary_points(b)
    taken = _targeted_calls(base)
    for b in base.boundaries:
        if b.when == "before" and b.live and not _is_targeted(b, taken):
            yield from _call_points(base, b)
    for s in base.sends:
        yield s.label, "client_disconnect", {"kind": "client_disconnect", "sse_event": s.k}
    for g in base.gaps:
        for kind in _TIMED_FAULTS:
            yield g.label, kind, {"kind": kind, "at_s": g.at_s}


def _targeted_calls(base: BaseRun) -> set[str]:
    """The calls the base scenario's own faults already change.

    Labels are call labels (``model#2``, ``tool:logs#1``), ``tool:logs#*`` for every call of
    a tool, ``tool#3`` for the third tool call of the run whatever the tool.

    A second fault on the same call would either never fire (the first one answers the
    call) or change what the first one does, so no variant puts one there.
    """
    out: set[str] = set()
    f: Any  # each fault model has the fields its kind names
    for f in base.scenario.faults:
        kind = f.kind
        if kind in ("provider_error", "latency_spike"):
            tool = getattr(f, "tool", None) if f.call == "tool" else None
            out.add(f"tool:{tool}#{f.n}" if tool else f"{f.call}#{f.n}")  # tool#N: of any tool
        elif kind in ("tool_error", "tool_rejection"):
            whole = kind == "tool_rejection" and f.reason in ("AUTH", "READ_ONLY")
            out.add(f"tool:{f.tool}#*" if whole else f"tool:{f.tool}#{f.n}")
        elif kind == "no_gain_streak":
            prefix = f"tool:{f.tool}" if f.tool else "tool"  # no tool: calls of every tool
            out.update(f"{prefix}#{f.n + i}" for i in range(f.count))
        elif kind == "semantic_guard":
            out.add(f"guard#{f.n}")
        elif kind == "repair_failed":
            out.add("repair#*")
        elif kind == "router_unavailable":
            out.add("router#*")
        elif kind in ("invalid_draft", "protocol_violation"):
            count = getattr(f, "count", 1)
            out.update(f"model#{f.n + i}" for i in range(count))
    return out


def _is_targeted(b: BoundaryState, taken: set[str]) -> bool:
    label = b.call_label
    family = label.rsplit("#", 1)[0]
    return (label in taken or f"{family}#*" in taken
            or (b.kind is CallKind.TOOL and f"tool#{b.ordinal}" in taken))


def _start_points() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for budget in BUDGET_KINDS:
        yield "start", f"budget_exhausted:{budget}", {"kind": "budget_exhausted",
                                                       "budget": budget}


def _boundary_points(b: BoundaryState) -> Iterator[tuple[str, str, dict[str, Any]]]:
    at = _at(b)
    for kind in _AT_FAULTS:
        yield b.label, kind, {"kind": kind, "at": at}
    for budget in BUDGET_KINDS:
        yield b.label, f"budget_exhausted:{budget}", {"kind": "budget_exhausted",
                                                       "budget": budget, "at": at}


def _call_points(base: BaseRun, b: BoundaryState) -> Iterator[tuple[str, str, dict[str, Any]]]:
    point = b.call_label
    if b.kind in PROVIDER_CALLS:
        yield point, "provider_error", {"kind": "provider_error", "call": b.kind.value,
                                        "n": b.ordinal}
    if b.kind is CallKind.ROUTER and b.ordinal == 1:
        yield point, "router_unavailable", {"kind": "router_unavailable"}
    # a raising call takes no spike, gain or progress change, and a discarded one shows none
    after = base.after_of(b)
    raised = base.call_raised(b) or after is None or not after.live
    spike = round(max(base.deadline_at - b.t, 0.0) + 1.0, 6)
    if not raised:
        yield point, "latency_spike", {"kind": "latency_spike", **_call_fields(b),
                                       "latency_s": spike}
    if b.kind is CallKind.TOOL:
        tool = {"tool": b.name, "n": b.name_ordinal}
        for error in _TOOL_ERRORS:
            yield point, f"tool_error:{error}", {"kind": "tool_error", "error": error, **tool}
        completion = _completion(base, b)  # the store counts completions, not calls
        if completion is not None:
            yield point, "tool_error:store", {"kind": "tool_error", "error": "store",
                                              "tool": b.name, "n": completion}
        for reason in _TOOL_REJECTIONS:
            yield point, f"tool_rejection:{reason}", {"kind": "tool_rejection",
                                                      "reason": reason, **tool}
        if not raised:
            yield point, "no_gain_streak", {"kind": "no_gain_streak", "n": b.name_ordinal,
                                            "tool": b.name,
                                            "count": base.scenario.config.no_gain_threshold}
    if b.kind is CallKind.GUARD:
        for verdict in ("UNSUPPORTED", "UNAVAILABLE"):
            yield point, f"semantic_guard:{verdict}", {"kind": "semantic_guard",
                                                       "verdict": verdict, "n": b.ordinal}
    if b.kind is CallKind.REPAIR and b.ordinal == 1:
        for form in _REPAIR_FORMS:
            yield point, f"repair_failed:{form}", {"kind": "repair_failed", "form": form}
    if b.kind is CallKind.MODEL:
        for form in _DRAFT_FORMS:
            yield point, f"invalid_draft:{form}", {"kind": "invalid_draft", "form": form,
                                                   "n": b.ordinal}
        if b.ordinal >= 2 and not raised:
            for mode in _PROTOCOL_MODES:
                yield point, f"protocol_violation:{mode}", {"kind": "protocol_violation",
                                                            "mode": mode, "n": b.ordinal}


def _completion(base: BaseRun, b: BoundaryState) -> int | None:
    """The store-completion ordinal (per tool) of this tool call in the base run, or None
    when the call never reached the store's completion."""
    def completed(inv: Any) -> bool:
        """True when the invocation reached the store's completion."""
        return inv.status is InvocationStatus.READY or inv.error_code is ToolErrorCode.STORE

    invocations = base.record.invocations[: b.ordinal]
    if len(invocations) < b.ordinal or not completed(invocations[-1]):
        return None
    return sum(1 for inv in invocations if inv.tool == b.name and completed(inv))


def enumerate_variants(base: BaseRun, kinds: Collection[str] | None = None) -> list[Variant]:
    """Every variant of ``base`` whose fault kind is in ``kinds`` (default: every kind)."""
    if kinds is not None:
        unknown = sorted(set(kinds) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; known: {list(FAULT_KINDS)}")
    out: list[Variant] = []
    base_faults = list(base.data.get("faults", []))
    cassette = base.data.get("cassette")
    if isinstance(cassette, str) and not Path(cassette).is_absolute() and Path(base.path).is_file():
        cassette = str((Path(base.path).parent / cassette).resolve())  # variants move
    for point, label, fault in _points(base):
        if kinds is not None and fault["kind"] not in kinds:
            continue
        name = f"{base.name}@{point}/{label}"
        # A shallow copy: variants share the base's nested values, which nothing mutates
        # (to_yaml deep-copies), and a chunk of variants pickles them once for a worker.
        data = {**base.data, "name": name, "faults": [*base_faults, fault],
                "description": f"{base.scenario.description.rstrip('.')}; explored with "
                               f"{_describe(fault)} at {point}."}
        if cassette is not None:
            data["cassette"] = cassette
        out.append(Variant(name, point, label, fault, data))
    return out


def _describe(fault: dict[str, Any]) -> str:
    return describe(FAULT_ADAPTER.validate_python(fault))
