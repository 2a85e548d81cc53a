"""Persistence of runs (doc §12): the RunStore protocol, a SQL store (run by run or
grouped into shared transactions) and an in-memory store.

The SQL stores are imported on first use, so code that persists nothing (a sweep without
``--persist``, the in-memory store) never loads SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use
from harness_lab.store.base import RUN_COLUMNS, RunCompletion, RunStart, RunStore, SessionContext
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


__getattr__, __dir__ = on_first_use(__name__, globals(), _ON_FIRST_USE)
