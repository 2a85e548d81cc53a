"""The sums of an audit, kept as runs stream past: memory grows with the runs that are not
clean, never with the runs that are."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from harness_lab.audit.checked import AuditedRun

__all__ = ["STATES", "AuditTally"]

STATES = ("checked", "incomplete", "orphaned", "unreadable")
"""What an audited run can be, in the order the counts list them."""


class AuditTally:
    """Runs by state, violations by invariant, the invariants left unchecked, and every run
    that is not clean (a violation, or not ``checked``)."""

    def __init__(self, orphans: set[str] | frozenset[str] = frozenset()) -> None:
        """An empty tally; ``orphans`` are run ids still RUNNING whose ``serve`` is gone
        (:func:`harness_lab.live.instances.orphaned_running`): counted ``orphaned``, not
        ``incomplete``."""
        self.orphans = orphans
        self.runs = 0
        self.states: Counter[str] = Counter()
        self.broken: Counter[str] = Counter()
        self.with_violations = 0
        self.unchecked: set[str] = set()
        self.not_clean: list[AuditedRun] = []
        self.ran_again = 0
        """Batches that ran again, their worker process having died."""

    def add(self, run: AuditedRun) -> None:
        """Count one run."""
        if run.state == "incomplete" and run.run_id in self.orphans:
            run = replace(run, state="orphaned", note="RUNNING, but the serve process that ran "
                                                      "it is gone: a crash orphan")
        self.runs += 1
        self.states[run.state] += 1
        self.unchecked.update(run.unchecked)
        if run.violations:
            self.with_violations += 1
            self.broken.update(name for name, _ in run.violations)
        if run.violations or run.state != "checked":
            self.not_clean.append(run)

    def again(self) -> None:
        """Count one batch that ran again, its worker process having died."""
        self.ran_again += 1

    @property
    def ok(self) -> bool:
        """True when no run broke an invariant and every run could be read and audited."""
        return not self.with_violations and not self.states["unreadable"]

    def counts(self) -> dict[str, int]:
        """Runs by state, then violations by invariant."""
        return {"runs": self.runs, **{k: self.states[k] for k in STATES},
                "runs with violations": self.with_violations, **dict(sorted(self.broken.items()))}

    def to_dict(self, source: str) -> dict[str, Any]:
        """The audit of ``source`` as JSON data: whether it passed, the counts, how many
        batches ran again after their worker process died, and every run that is not
        clean."""
        return {"source": source, "ok": self.ok, "counts": self.counts(),
                "ran_again": self.ran_again,
                "runs": [{"run_id": r.run_id, "scenario": r.scenario, "state": r.state,
                          "note": r.note, "unchecked": list(r.unchecked),
                          "violations": [{"invariant": n, "message": m}
                                         for n, m in r.violations]}
                         for r in self.not_clean]}
