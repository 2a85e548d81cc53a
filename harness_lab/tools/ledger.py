"""The canonical invocation store of one harness: the Ledger protocol and InvocationLedger."""

from __future__ import annotations

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
    """Keeps every canonical record it is given. A store that refuses one is injected around
    the ledger, as the run's other faults are (``harness_lab.application.intercept``)."""

    def begin(self, record: CanonicalInvocation) -> bool:
        """Accept a new PROJECTING record."""
        return True

    def complete(self, record: CanonicalInvocation) -> bool:
        """Accept a finished record."""
        return True
