"""Tool scopes: the canonical text used to detect duplicates, and the shared request check."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness_lab.json_text import json_writer

__all__ = ["normalize_scope", "scope_problem"]

# one encoder, built once: json.dumps would build a new one for these options on every call
_CANONICAL = json_writer(sort_keys=True, separators=(",", ":"), default=str)


def normalize_scope(scope: Mapping[str, Any]) -> str:
    """Canonical text of a scope: keys sorted, no whitespace (duplicate detection key).

    The text ``json.dumps(scope, sort_keys=True, separators=(",", ":"), default=str)`` gives.
    """
    return _CANONICAL(scope)


def scope_problem(tool: str, scope: Any, required: Iterable[str]) -> str | None:
    """Why ``scope`` is not a valid request of ``tool``: not an object, or missing keys."""
    if type(scope) is not dict and not isinstance(scope, Mapping):  # dict first: no ABC check
        return f"tool {tool!r}: scope must be an object, not {type(scope).__name__}"
    missing = [key for key in required if key not in scope]
    if missing:
        names = ", ".join(repr(key) for key in missing)
        return f"tool {tool!r}: scope is missing required key(s) {names}"
    return None
