"""The canonical invocation store of one harness: the Ledger protocol and InvocationLedger."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from harness_lab.tools.records import CanonicalInvocation

__all__ = ["InvocationLedger", "Ledger"]


class Ledger(Protocol):
    """Where the tool boundary keeps canonical records; it may refuse to keep one."""

    def begin(self, record: CanonicalInvocation) -> bool:
        """Keep a new PROJECTING record; False when the store refuses it."""
        ...

    def complete(self, record: CanonicalInvocation) -> bool:
        """Keep a finished record; False when the store refuses it."""
        ...


class InvocationLedger:
    """Holds canonical records; may refuse a begin or a completion (store faults).

    ``refuse_begin`` and ``refuse_complete`` hold 1-based ordinals of the begins and
    completions to refuse, counted across the ledger's life.
    """

    def __init__(self, refuse_begin: Iterable[int] = (), refuse_complete: Iterable[int] = ()
                 ) -> None:
        self.refuse_begin = set(refuse_begin)
        self.refuse_complete = set(refuse_complete)
        self._begins = 0
        self._completes = 0

    def begin(self, record: CanonicalInvocation) -> bool:
        """Accept a new PROJECTING record, or refuse it."""
        self._begins += 1
        return self._begins not in self.refuse_begin

    def complete(self, record: CanonicalInvocation) -> bool:
        """Accept a finished record, or refuse to store it."""
        self._completes += 1
        return self._completes not in self.refuse_complete
