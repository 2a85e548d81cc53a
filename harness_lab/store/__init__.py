"""Persistence of runs (doc §12): the RunStore protocol, a SQL store (run by run or
grouped into shared transactions) and an in-memory store.

The SQL stores are imported on first use, so code that persists nothing (a sweep without
``--persist``, the in-memory store) never loads SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness_lab.store.base import (
    RUN_COLUMNS,
    RunCompletion,
    RunStart,
    RunStore,
    SessionContext,
)
from harness_lab.store.errors import StoreError
from harness_lab.store.memory import MemoryRunStore

if TYPE_CHECKING:
    from harness_lab.store.group import GroupCommitStore
    from harness_lab.store.sql import SqlRunStore

__all__ = [
    "RUN_COLUMNS",
    "GroupCommitStore",
    "MemoryRunStore",
    "RunCompletion",
    "RunStart",
    "RunStore",
    "SessionContext",
    "SqlRunStore",
    "StoreError",
]

_ON_FIRST_USE = {"GroupCommitStore": "harness_lab.store.group",
                 "SqlRunStore": "harness_lab.store.sql"}


def __getattr__(name: str) -> Any:
    """The SQL stores, imported when first asked for."""
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
