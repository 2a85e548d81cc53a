"""A scripted tool backend and the result behaviours it plays."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_lab.errors import ToolExecutionError
from harness_lab.fakes.model import Script, Scripted
from harness_lab.fakes.values import check_reply
from harness_lab.frozen import value_class
from harness_lab.ports import ToolInput, ToolOutput
from harness_lab.tools.scope import normalize_scope, scope_problem

__all__ = ["Evidence", "NoEvidence", "Oversize", "ScopeTable", "ScriptedTool", "ToolBehaviour",
           "ToolFailure", "Unprojectable", "json_size", "scope_key"]


scope_key = normalize_scope
"""Canonical text of a scope: keys sorted, no whitespace, non-JSON values as ``str``."""


def json_size(items: Sequence[Mapping[str, Any]]) -> int:
    """Bytes of the compact UTF-8 JSON array of ``items``."""
    text = json.dumps(list(items), sort_keys=True, separators=(",", ":"), default=str,
                      ensure_ascii=False)
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Evidence:
    """The tool finds ``items``; ``size_bytes`` defaults to their compact JSON size."""

    items: Sequence[Mapping[str, Any]] = ({"line": "evidence"},)
    size_bytes: int | None = None
    latency_s: float | None = None

    def __post_init__(self) -> None:
        check_reply("Evidence", self)
        object.__setattr__(self, "items", tuple(dict(item) for item in self.items))
        if self.size_bytes is None:  # computed once: the items never change
            object.__setattr__(self, "size_bytes", json_size(self.items))

    def output(self, request: ToolInput) -> ToolOutput:
        """A ToolOutput holding a fresh copy of the items."""
        return ToolOutput(tuple([dict(item) for item in self.items]),
                          size_bytes=self.size_bytes or 0, latency_s=self.latency_s)


@dataclass(frozen=True)
class NoEvidence:
    """The tool answers, but with no items (NO_EVIDENCE)."""

    latency_s: float | None = None
    size_bytes: int = 0


    def __post_init__(self) -> None:
        check_reply("NoEvidence", self)
    def output(self, request: ToolInput) -> ToolOutput:
        """An empty ToolOutput."""
        return ToolOutput((), size_bytes=self.size_bytes, latency_s=self.latency_s)


@dataclass(frozen=True)
class ToolFailure:
    """The backend fails: ``output`` raises ToolExecutionError (latency 0.0 when None)."""

    message: str = "backend error"
    latency_s: float | None = None


    def __post_init__(self) -> None:
        check_reply("ToolFailure", self)
    def output(self, request: ToolInput) -> ToolOutput:
        """Raise ToolExecutionError with ``message``."""
        raise ToolExecutionError(self.message, latency_s=self.latency_s)


@dataclass(frozen=True)
class Oversize:
    """The tool answers with one item claiming ``size_bytes``, beyond the projection limit."""

    size_bytes: int = 10_000_000
    latency_s: float | None = None


    def __post_init__(self) -> None:
        check_reply("Oversize", self)
    def output(self, request: ToolInput) -> ToolOutput:
        """A one-item ToolOutput of ``size_bytes``."""
        return ToolOutput(({"line": "oversize result"},), size_bytes=self.size_bytes,
                          latency_s=self.latency_s)


@dataclass(frozen=True)
class Unprojectable:
    """The backend answers something the projection cannot read."""

    latency_s: float | None = None


    def __post_init__(self) -> None:
        check_reply("Unprojectable", self)
    def output(self, request: ToolInput) -> ToolOutput:
        """An empty ToolOutput marked ``projectable=False``."""
        return ToolOutput((), latency_s=self.latency_s, projectable=False)


_BEHAVIOURS = (Evidence, NoEvidence, ToolFailure, Oversize, Unprojectable)
for _behaviour in _BEHAVIOURS:
    value_class(_behaviour)  # see frozen.py

ToolBehaviour = (Evidence | NoEvidence | ToolFailure | Oversize | Unprojectable | ToolOutput
                 | Callable[[ToolInput], ToolOutput])
"""What one tool call does: a behaviour, a ToolOutput returned as is, or a callable."""

ScopeTable = (Mapping[str, ToolBehaviour | Sequence[ToolBehaviour]]
              | Iterable[tuple[Mapping[str, Any], ToolBehaviour | Sequence[ToolBehaviour]]])
"""Per-scope behaviours: ``(scope, behaviour)`` pairs, or a mapping keyed by scope JSON text."""


def _perform(behaviour: ToolBehaviour, request: ToolInput) -> ToolOutput:
    if isinstance(behaviour, ToolOutput):
        return behaviour
    if isinstance(behaviour, _BEHAVIOURS):
        return behaviour.output(request)
    return behaviour(request)


def _scope_entries(table: ScopeTable) -> Iterable[tuple[Mapping[str, Any], Any]]:
    if not isinstance(table, Mapping):
        return table
    entries = []
    for text, value in table.items():
        scope = json.loads(text)
        if not isinstance(scope, Mapping):
            raise ValueError(f"by_scope key {text!r} is not a JSON object")
        entries.append((scope, value))
    return entries


class ScriptedTool(Scripted[ToolInput, ToolBehaviour]):
    """A Tool whose calls play scripted behaviours.

    Each call looks up, in order: the ``by_scope`` entry whose scope equals the call's
    (compared as :func:`scope_key` text, so key order does not matter), then the next step of
    ``script``, then ``default``; if none applies it raises ScriptExhausted naming the tool
    and the 1-based call number. A single ``by_scope`` behaviour serves its scope forever; a
    sequence is consumed call by call for that scope, then the lookup falls through.
    """

    def __init__(self, name: str, script: Sequence[ToolBehaviour] | None = None, *,
                 by_scope: ScopeTable | None = None, default: ToolBehaviour | None = None,
                 read_only: bool = True, evidence: bool = True, required: Iterable[str] = (),
                 name_for_errors: str | None = None) -> None:
        self.component = name_for_errors or f"ScriptedTool({name})"
        super().__init__(name, Script(self.component, script or ()))
        self.read_only = read_only
        self.evidence = evidence
        self.required = tuple(required)
        self.default = check_reply(f"ScriptedTool({name})", default)
        self._by_scope: dict[str, Script[ToolBehaviour]] = {}
        for scope, value in _scope_entries(by_scope or ()):
            key = scope_key(scope)
            if key in self._by_scope:
                raise ValueError(f"{self.component}: by_scope lists scope {key} twice")
            single = not isinstance(value, list | tuple)
            steps = [value] if single else value
            self._by_scope[key] = Script(self.component, steps, repeat=single)

    def rewind(self) -> None:
        """Play every script again from its first step, with no call recorded."""
        super().rewind()
        for script in self._by_scope.values():
            script.rewind()

    def validate(self, scope: Mapping[str, Any]) -> str | None:
        """Why ``scope`` is refused: not a mapping, or missing a ``required`` key; else None."""
        return scope_problem(self.name, scope, self.required)

    def invoke(self, request: ToolInput) -> ToolOutput:
        """Record ``request`` and play the behaviour the lookup finds for it."""
        self.requests.append(request)
        call = len(self.requests)
        per_scope = self._by_scope.get(scope_key(request.scope)) if self._by_scope else None
        if per_scope is not None and not per_scope.exhausted:
            return _perform(per_scope.take(call), request)
        if self.script.exhausted and self.default is not None:
            return _perform(self.default, request)
        return _perform(self.script.take(call), request)
