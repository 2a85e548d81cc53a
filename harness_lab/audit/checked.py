"""One run audited: its record rebuilt from rows (or taken whole from a log) and checked."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

__all__ = ["PROCESS_LOST", "AuditedRun", "audited", "rebuilt"]

PROCESS_LOST = "PROCESS_LOST"
"""The termination reason ``serve`` stores for a crash orphan
(:data:`harness_lab.live.instances.PROCESS_LOST`, which imports this)."""


@dataclass(frozen=True, slots=True)
class AuditedRun:
    """One run's audit: ``checked``, ``incomplete``, ``orphaned`` or ``unreadable``, and what
    broke."""

    run_id: str
    state: str
    violations: tuple[tuple[str, str], ...] = ()
    unchecked: tuple[str, ...] = ()
    note: str | None = None
    scenario: str | None = None
    """The scenario that made the run, where the source says (a run log, whose scenarios'
    runs share ids such as ``run-000001``)."""


def rebuilt(run_id: str, record: Any, rows: Any) -> AuditedRun | tuple[Any, tuple[str, ...]]:
    """The run as its record and the invariants it cannot be checked on (its source holds no
    SSE events), or as an incomplete or unreadable :class:`AuditedRun`."""
    from harness_lab.audit.rebuild import SSE_RULES, ColumnError, Incomplete, rebuild

    if record is not None:
        return record, ()
    if rows.row.get("termination_reason") == PROCESS_LOST:  # its trace stops where it died
        return AuditedRun(run_id, "orphaned", note="its serve process was lost; a later "
                                                   "serve ended it FAILED (PROCESS_LOST)")
    try:
        record = rebuild(rows.row, rows.trace, rows.invocations, rows.sse)
    except Incomplete:
        return AuditedRun(run_id, "incomplete",
                          note="RUNNING with no RUN_FINISHED: not finished yet")
    except ColumnError as exc:  # named where it is: the file and line of its row, if any
        return AuditedRun(run_id, "unreadable", note=f"{rows.where(exc.table, exc.index)}{exc}")
    except (ValueError, KeyError, TypeError, ArithmeticError) as exc:
        return AuditedRun(run_id, "unreadable", note=f"{type(exc).__name__}: {exc}")
    return record, (SSE_RULES if rows.sse is None else ())


def audited(run_id: str, record: Any, rows: Any, scenario: str | None = None) -> AuditedRun:
    """The run rebuilt (see :func:`rebuilt`) and, when it could be, checked against every
    invariant it can be checked on; ``scenario`` names the scenario that made it."""
    run = _audited(run_id, record, rows)
    return run if scenario is None else replace(run, scenario=scenario)


def _audited(run_id: str, record: Any, rows: Any) -> AuditedRun:
    from harness_lab.invariants import INVARIANTS

    item = rebuilt(run_id, record, rows)
    if isinstance(item, AuditedRun):
        return item
    record, unchecked = item
    violations: list[tuple[str, str]] = []
    for name, check in INVARIANTS.items():
        if name in unchecked:
            continue
        try:
            violations += ((name, message) for message in check(record))
        except Exception as exc:  # a record no rule foresaw: this run's row, not the audit's end
            return AuditedRun(record.run_id, "unreadable",
                              note=f"checking {name} failed: {type(exc).__name__}: {exc}")
    return AuditedRun(record.run_id, "checked", tuple(violations), unchecked)
