"""audit(): check runs the toolkit did not produce against the lifecycle invariants.

A source is a run log, a JSON Lines export of ``diagnosis_run`` / ``trace_event`` /
``tool_invocation`` / ``sse_event`` rows, or a SQLAlchemy database URL (with a column
mapping for another harness's schema). Each run is rebuilt as a RunRecord and checked by the
same rules as a live run (:mod:`harness_lab.invariant_rules`: doc §16 and the §10/§12.2
mappings); a run still RUNNING without RUN_FINISHED is *incomplete*, not a violation, and
the SSE rules are left out for a run whose source holds no SSE events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AuditReport", "AuditedRun", "audit", "finished_records"]


@dataclass(frozen=True, slots=True)
class AuditedRun:
    """One run's audit: ``checked``, ``incomplete`` or ``unreadable``, and what broke."""

    run_id: str
    state: str
    violations: tuple[tuple[str, str], ...] = ()
    unchecked: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Every audited run of a source."""

    source: str
    runs: tuple[AuditedRun, ...]

    @property
    def ok(self) -> bool:
        """True when no run broke an invariant and every run could be read."""
        return not any(r.violations or r.state == "unreadable" for r in self.runs)

    def counts(self) -> dict[str, int]:
        """Runs by state, then violations by invariant."""
        states = Counter(r.state for r in self.runs)
        broken = Counter(name for r in self.runs for name, _ in r.violations)
        return {"runs": len(self.runs), **{k: states[k] for k in
                                           ("checked", "incomplete", "unreadable")},
                "runs with violations": sum(1 for r in self.runs if r.violations),
                **dict(sorted(broken.items()))}

    @property
    def frame(self) -> pd.DataFrame:
        """One row per violation: run_id, invariant, message."""
        import pandas as pd

        return pd.DataFrame([(r.run_id, name, msg) for r in self.runs
                             for name, msg in r.violations],
                            columns=["run_id", "invariant", "message"])

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {"source": self.source, "ok": self.ok, "counts": self.counts(),
                "runs": [{"run_id": r.run_id, "state": r.state, "note": r.note,
                          "unchecked": list(r.unchecked),
                          "violations": [{"invariant": n, "message": m}
                                         for n, m in r.violations]}
                         for r in self.runs if r.violations or r.state != "checked"]}


def _rebuilt(runs: Iterable[tuple[str, Any, Any]]
             ) -> Iterator[AuditedRun | tuple[Any, tuple[str, ...]]]:
    """Each run as its record and the invariants it cannot be checked on (its source holds
    no SSE events), or as an incomplete or unreadable :class:`AuditedRun`."""
    from harness_lab.audit.rebuild import SSE_RULES, Incomplete, rebuild

    for run_id, record, rows in runs:
        if record is not None:
            yield record, ()
            continue
        try:
            rebuilt = rebuild(rows.row, rows.trace, rows.invocations, rows.sse)
        except Incomplete:
            yield AuditedRun(run_id, "incomplete",
                             note="RUNNING with no RUN_FINISHED: not finished yet")
            continue
        except (ValueError, KeyError, TypeError, ArithmeticError) as exc:
            yield AuditedRun(run_id, "unreadable", note=f"{type(exc).__name__}: {exc}")
            continue
        yield rebuilt, (SSE_RULES if rows.sse is None else ())


def audit(source: str | Path, mapping: Mapping[str, Any] | None = None) -> AuditReport:
    """Audit every run of ``source`` (a run log, a JSON Lines export, or a database URL);
    raise :class:`harness_lab.audit.sources.SourceError` for one that cannot be read."""
    from harness_lab.invariants import INVARIANTS

    runs = []
    for item in _rebuilt(_sources(source, mapping)):
        if not isinstance(item, AuditedRun):
            record, unchecked = item
            item = AuditedRun(record.run_id, "checked",
                              tuple((name, msg) for name, fn in INVARIANTS.items()
                                    if name not in unchecked for msg in fn(record)), unchecked)
        runs.append(item)
    return AuditReport(str(source), tuple(runs))


def _sources(source: str | Path, mapping: Mapping[str, Any] | None
             ) -> Iterable[tuple[str, Any, Any]]:
    from harness_lab.audit.sources import SourceError, iter_sql, read_export, records_of_log
    from harness_lab.logs.sources import is_log_file

    text = str(source)
    if "://" in text:
        return ((str(rows.row["run_id"]), None, rows) for rows in iter_sql(text, mapping))
    path = Path(text)
    if not path.is_file():
        raise SourceError(f"{text}: no such file (give a run log, a JSON Lines export or a "
                          "database URL such as sqlite:///runs.db)")
    if is_log_file(path):
        return records_of_log(path)
    return ((k, None, v) for k, v in read_export(path).items())


def finished_records(source: str | Path, mapping: Mapping[str, Any] | None = None
                     ) -> Iterable[Any]:
    """The RunRecords of every finished, readable run of ``source`` (as :func:`audit` reads
    it), for fitting; incomplete and unreadable runs are left out."""
    return (item[0] for item in _rebuilt(_sources(source, mapping))
            if not isinstance(item, AuditedRun))
