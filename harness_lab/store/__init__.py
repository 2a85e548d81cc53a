"""Persistence of runs (doc §12): the RunStore protocol, a SQL store (run by run or
grouped into shared transactions) and an in-memory store."""

from harness_lab.store.base import (
    RUN_COLUMNS,
    RunCompletion,
    RunStart,
    RunStore,
    SessionContext,
)
from harness_lab.store.errors import StoreError
from harness_lab.store.group import GroupCommitStore
from harness_lab.store.memory import MemoryRunStore
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
