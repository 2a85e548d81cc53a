"""Checks a scenario file needs beyond its schema: names that must refer to something.

They read the document's data as given (dicts and lists), not the validated model, so a file
with schema errors still gets these problems in the same report (every problem at once). Each
check skips what is not of the shape it reads: the schema reports that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness_lab.scenarios.suggest import did_you_mean

__all__ = ["Add", "Loc", "check_document"]

Loc = Sequence[int | str]
Add = Callable[[Loc, str], None]
"""Adds one problem at a location of the document (keys and indices)."""


def check_document(data: dict[str, Any], add: Add) -> None:
    """Every check of this module on one document (or one matrix variant's data)."""
    _check_tools(data, add)
    _check_recorded(data, add)
    _check_names(data, add)


def _items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The mappings of a list, with their indices."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _check_tools(data: dict[str, Any], add: Add) -> None:
    """Every tool a model step or a fault names is a tool of the scenario."""
    declared = data.get("tools")
    tools = sorted(str(t) for t in declared) if isinstance(declared, dict) else []

    def check(name: Any, loc: Loc) -> None:
        if isinstance(name, str) and name not in tools:
            add(loc, f"unknown tool {name!r}; the scenario's tools are "
                     f"{tools or 'none'}{did_you_mean(name, tools)}")

    for i, step in _items(data.get("model")):
        check(step.get("tool"), ("model", i, "tool"))
    for t, turn in _items(data.get("turns")):
        for i, step in _items(turn.get("model")):
            check(step.get("tool"), ("turns", t, "model", i, "tool"))
    for i, fault in _items(data.get("faults")):
        check(fault.get("tool"), ("faults", i, "tool"))
        at = fault.get("at")
        if isinstance(at, dict):
            check(at.get("tool"), ("faults", i, "at", "tool"))


def _check_recorded(data: dict[str, Any], add: Add) -> None:
    """``recorded`` and ``cassette`` go together: a replay never touches the network."""
    recorded = data.get("recorded") is not None
    cassette = data.get("cassette") is not None
    if recorded and not cassette:
        add(("recorded",), "recorded components need a `cassette:` to replay from; without "
                           "one the run would call the network (record it with "
                           "`harness-lab record`)")
    if cassette and not recorded:
        add(("cassette",), "a cassette is replayed for `recorded:` components, and this "
                           "scenario has no `recorded:` block")


def _check_names(data: dict[str, Any], add: Add) -> None:
    """Invariant names and the outcome-table case exist."""
    from harness_lab.invariants import invariant_names

    known = sorted(invariant_names())
    expect = data.get("expect")
    violations = expect.get("violations") if isinstance(expect, dict) else None
    for name in violations if isinstance(violations, list) else []:
        if isinstance(name, str) and name not in known:
            add(("expect", "violations"), f"unknown invariant {name!r}; known: "
                                          f"{known}{did_you_mean(name, known)}")
    case = data.get("case")
    if isinstance(case, str):
        from harness_lab.outcome_table import OUTCOME_BY_CASE

        if case not in OUTCOME_BY_CASE:
            add(("case",), f"unknown case {case!r}; known: {sorted(OUTCOME_BY_CASE)}"
                           f"{did_you_mean(case, OUTCOME_BY_CASE)}")
