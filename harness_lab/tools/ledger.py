"""InvocationLedger: the canonical invocation store of one harness."""

from __future__ import annotations

from collections.abc import Iterable

from harness_lab.tools.records import CanonicalInvocation

__all__ = ["InvocationLedger"]


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
