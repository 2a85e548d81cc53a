"""Observed paths: ``trace[RUN_FINISHED].t``, ``sse[content].data.outcome``, ``turns[0].row``.

A path names one value of a run's observation the way a mismatch names it: a part, then
``.key`` for a mapping's key and ``[label]`` for a list's item. An item is named by its index
(``[0]``, ``[-1]`` for the last) or, in a list of records with a key field (``sse`` by
``kind``, ``trace`` by ``type``...), by its key value: ``[RUN_FINISHED]`` when one item has
it, ``[TOOL_PROGRESS#2]`` for its second occurrence.

:func:`parse_path` reads the text (``ValueError`` naming what is wrong), :func:`resolve`
finds the value in observed data (:class:`PathError` naming the first step that found
nothing, with the names that were there).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness_lab.scenarios.suggest import did_you_mean

__all__ = ["KEYS", "PARTS", "PathError", "Step", "parse_path", "resolve"]

PARTS: tuple[str, ...] = (
    "states", "statuses", "sse", "sse_states", "sse_refused", "trace", "timeline",
    "invocations", "rejections", "gains", "progress", "stop_required_deliveries", "routing",
    "agent_requests", "guard_requests", "repair_requests", "row", "usage", "headroom",
    "discarded", "terminations")
"""The parts of a run's observation, in the order a snapshot writes them."""

KEYS: dict[str, str] = {"sse": "kind", "trace": "type", "timeline": "event",
                        "rejections": "reason", "invocations": "tool", "sse_states": "state"}
"""The key field of each list of records: a string item of its pattern, and a ``[label]`` of
a path, stands for it."""

_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[([^\[\]]+)\]")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path: a mapping key (``name``) or a list item (``label``)."""

    name: str | None = None
    label: str | None = None
    keyed_by: str | None = None  # the key field a non-index label names, if the list has one

    def __str__(self) -> str:
        return f".{self.name}" if self.name is not None else f"[{self.label}]"


class PathError(LookupError):
    """A path that names nothing in the observed data; the message says where and why."""


def parse_path(text: str, *, parts: tuple[str, ...] | None = PARTS) -> tuple[Step, ...]:
    """The steps of ``text``; ``ValueError`` for malformed text or, when ``parts`` is given,
    a first name that is not one of them."""
    text = text.strip()
    steps: list[Step] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None or (pos == 0 and m.group(1) is None) or (pos and text[pos].isalpha()):
            raise ValueError(f"{text!r} is not a path like trace[RUN_FINISHED].t: "
                             f"unexpected {text[pos:]!r}")
        if m.group(1) is not None:
            steps.append(Step(name=m.group(1)))
        else:
            label = m.group(2).strip()
            last = next((s.name for s in reversed(steps) if s.name is not None), None)
            keyed = None if _index(label) is not None else KEYS.get(last or "")
            steps.append(Step(label=label, keyed_by=keyed))
        pos = m.end()
    if not steps:
        raise ValueError("an empty path")
    if parts is not None and steps[0].name not in (*parts, "turns"):
        name = steps[0].name or ""
        raise ValueError(f"{text!r}: unknown part {name!r}; the parts are "
                         f"{', '.join(parts)}{did_you_mean(name, list(parts))}")
    return tuple(steps)


def _index(label: str) -> int | None:
    try:
        return int(label)
    except ValueError:
        return None


def resolve(steps: tuple[Step, ...], observed: Any) -> Any:
    """The value ``steps`` name in ``observed``; :class:`PathError` if there is none."""
    value = observed
    done = ""
    for step in steps:
        here = f"{done}{step}" if done else str(step).lstrip(".")
        if step.name is not None:
            if not isinstance(value, Mapping):
                raise PathError(f"{here}: {done or 'the value'} is not a mapping")
            if step.name not in value:
                keys = [str(k) for k in value]
                raise PathError(f"{here}: no such key; the keys are {', '.join(keys) or 'none'}"
                                f"{did_you_mean(step.name, keys)}")
            value = value[step.name]
        else:
            value = _item(value, step, here, done)
        done = here
    return value


def _item(value: Any, step: Step, here: str, done: str) -> Any:
    assert step.label is not None
    if not isinstance(value, list):
        raise PathError(f"{here}: {done or 'the value'} is not a list")
    index = _index(step.label)
    if index is not None:
        if -len(value) <= index < len(value):
            return value[index]
        raise PathError(f"{here}: no such item; {done} has {len(value)}")
    if step.keyed_by is None:
        raise PathError(f"{here}: {done} has no key field; name its item by index")
    name, _, nth = step.label.partition("#")
    hits = [v for v in value if isinstance(v, Mapping) and v.get(step.keyed_by) == name]
    if nth:
        n = _index(nth)
        if n is None or n < 1:
            raise PathError(f"{here}: #{nth} is not an occurrence number (#1, #2, ...)")
        if n <= len(hits):
            return hits[n - 1]
        raise PathError(f"{here}: no such item; {done} has {len(hits)} {name}")
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise PathError(f"{here}: {len(hits)} items have {step.keyed_by} {name}; name one "
                        f"as [{name}#1] ... [{name}#{len(hits)}]")
    seen = list(dict.fromkeys(str(v.get(step.keyed_by)) for v in value
                              if isinstance(v, Mapping)))
    raise PathError(f"{here}: no such item; the {step.keyed_by} values are "
                    f"{', '.join(seen) or 'none'}{did_you_mean(name, seen)}")
