"""Persistence of runs (doc §12): the RunStore protocol, a SQL store and an in-memory store."""

from harness_lab.store.base import (
    RUN_COLUMNS,
    RunCompletion,
    RunStart,
    RunStore,
    SessionContext,
)
from harness_lab.store.errors import StoreError
from harness_lab.store.memory import MemoryRunStore
from harness_lab.store.sql import SqlRunStore

__all__ = [
    "RUN_COLUMNS",
    "MemoryRunStore",
    "RunCompletion",
    "RunStart",
    "RunStore",
    "SessionContext",
    "SqlRunStore",
    "StoreError",
]
