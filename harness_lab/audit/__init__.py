"""audit(): check runs the toolkit did not produce against the lifecycle invariants.

A source is a run log, a JSON Lines export of ``diagnosis_run`` / ``trace_event`` /
``tool_invocation`` / ``sse_event`` rows, OTLP JSON traces (:mod:`harness_lab.audit.otlp`),
or a SQLAlchemy database URL (with a mapping of another harness's names for both). Each
run is rebuilt as a RunRecord and checked by the same rules as a live run
(:mod:`harness_lab.invariant_rules`: doc §16, the §10/§12.2 mappings and the run's times); a
run still RUNNING without RUN_FINISHED is *incomplete*, not a violation, and the SSE rules
are left out for a run whose source holds no SSE events.

A large source is audited as a stream (:func:`audit_runs`, summed by
:class:`~harness_lab.audit.tally.AuditTally`), its runs rebuilt and checked across worker
processes (:mod:`harness_lab.audit.parallel`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from harness_lab.audit.checked import AuditedRun, audited, rebuilt
from harness_lab.audit.tally import AuditTally

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PARALLEL_FROM", "AuditReport", "AuditedRun", "Source", "audit", "audit_runs",
           "counted", "finished_records", "open_source"]

PARALLEL_FROM = 20_000
"""Runs from which a source of rows is audited across worker processes by default (fewer
finish sooner in this one than the workers take to start)."""


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Every audited run of a source."""

    source: str
    runs: tuple[AuditedRun, ...]
    ran_again: int = 0
    """Batches that ran again, their worker process having died."""

    def _tally(self) -> AuditTally:
        tally = AuditTally()
        for run in self.runs:
            tally.add(run)
        tally.ran_again = self.ran_again
        return tally

    @property
    def ok(self) -> bool:
        """True when no run broke an invariant and every run could be read."""
        return self._tally().ok

    def counts(self) -> dict[str, int]:
        """Runs by state, then violations by invariant."""
        return self._tally().counts()

    @property
    def frame(self) -> pd.DataFrame:
        """One row per violation: run_id, invariant, message."""
        import pandas as pd

        return pd.DataFrame([(r.run_id, name, msg) for r in self.runs
                             for name, msg in r.violations],
                            columns=["run_id", "invariant", "message"])

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data."""
        return self._tally().to_dict(self.source)


class Source(NamedTuple):
    """A source opened for auditing: how many runs it holds (None: not known before they are
    read), each run as (run id, record or None, rows or None), followed by the scenario that
    made it where the source names one (a run log), and whether every run comes as rows
    (which worker processes can audit)."""

    total: int | None
    runs: Iterable[tuple[Any, ...]]
    rows_only: bool
    database: tuple[str, Mapping[str, Any] | None] | None = None
    """The URL and mapping of a database (which workers read themselves)."""


def open_source(source: str | Path, mapping: Mapping[str, Any] | None = None, *,
                count: bool = False) -> Source:
    """``source`` (a run log, a JSON Lines export, OTLP JSON, or a database URL) opened for
    reading, ``mapping`` naming a database's or a trace's names for ours; ``count`` asks a
    database for its number of runs first. Raise
    :class:`harness_lab.audit.sources.SourceError` for one that cannot be read."""
    from harness_lab.audit.otlp import is_otlp_file, iter_otlp
    from harness_lab.audit.sources import (
        MappingError,
        SourceError,
        count_sql,
        iter_sql,
        read_export,
        records_of_log,
    )
    from harness_lab.logs.sources import is_log_file

    text = str(source)
    if "://" in text:
        total = count_sql(text, mapping) if count else None
        return Source(total, ((str(rows.row["run_id"]), None, rows)
                              for rows in iter_sql(text, mapping)), True, (text, mapping))
    path = Path(text)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "no such file"
        raise SourceError(f"{text}: {what} (give a run log, a JSON Lines export, OTLP JSON or "
                          "a database URL such as sqlite:///runs.db)")
    log = is_log_file(path)
    if not log and is_otlp_file(path):
        total, traced = iter_otlp(path, mapping)
        return Source(total, ((str(rows.row["run_id"]), None, rows) for rows in traced), True)
    if mapping is not None:  # its names are the toolkit's own: a mapping would go unused
        kind = "a run log" if log else "a JSON Lines export"
        raise MappingError(f"{text} is {kind}, whose tables and columns are the toolkit's "
                           "own; a mapping applies to a database or to OTLP traces")
    if log:
        return Source(None, records_of_log(path), False)
    runs = read_export(path)
    return Source(len(runs), ((k, None, v) for k, v in runs.items()), True)


def audit_runs(source: Source, *, workers: int | None = None,
               advance: Callable[[int], None] | None = None,
               again: Callable[[], None] | None = None) -> Iterator[AuditedRun]:
    """Each run of an opened source audited, in the source's order. ``workers`` processes
    rebuild and check the runs of a source of rows (None: one per core when it holds at
    least :data:`PARALLEL_FROM` runs, else none); ``advance(n)`` is told of the runs as
    they are audited, a batch at a time, and ``again()`` of each batch that runs again, its
    worker process having died (:mod:`harness_lab.audit.parallel`)."""
    from harness_lab.audit.parallel import audited_in_workers, audited_sql_in_workers
    from harness_lab.pool import available_cores

    if workers is None:
        workers = available_cores() if (source.total or 0) >= PARALLEL_FROM else 1
    runs: Iterator[AuditedRun]
    if workers > 1 and source.database is not None:
        runs = audited_sql_in_workers(*source.database, workers, again)
    elif workers > 1 and source.rows_only:
        runs = audited_in_workers(((run_id, rows) for run_id, _, rows in source.runs), workers,
                                  again)
    else:
        runs = (audited(*item) for item in source.runs)
    yield from runs if advance is None else counted(runs, advance)


T = TypeVar("T")


def counted(items: Iterable[T], advance: Callable[[int], None]) -> Iterator[T]:
    """``items``, telling ``advance(n)`` of them a batch at a time (and of the rest at the
    end), so a progress bar costs nothing per item."""
    from harness_lab.audit.sources import BATCH

    done = 0
    for item in items:
        yield item
        done += 1
        if done == BATCH:
            advance(done)
            done = 0
    if done:
        advance(done)


def audit(source: str | Path, mapping: Mapping[str, Any] | None = None, *,
          workers: int | None = 1) -> AuditReport:
    """Audit every run of ``source`` (a run log, a JSON Lines export, OTLP JSON, or a database
    URL; ``mapping`` as for :func:`open_source`); raise
    :class:`harness_lab.audit.sources.SourceError` for one that cannot be read.
    ``workers`` as for :func:`audit_runs` (None: by the source's size)."""
    opened = open_source(source, mapping, count=workers is None)
    again = [0]

    def count_again() -> None:
        again[0] += 1

    runs = tuple(audit_runs(opened, workers=workers, again=count_again))
    return AuditReport(str(source), runs, again[0])


def finished_records(source: str | Path | Source, mapping: Mapping[str, Any] | None = None,
                     *, left_out: list[AuditedRun] | None = None) -> Iterable[Any]:
    """The RunRecords of every finished, readable run of ``source`` (as :func:`audit` reads
    it, or opened by :func:`open_source`), for fitting; incomplete and unreadable runs are
    left out, each appended to ``left_out`` when it is given (so a fit can say so)."""
    opened = source if isinstance(source, Source) else open_source(source, mapping)
    for run in opened.runs:
        item = rebuilt(*run[:3])
        if not isinstance(item, AuditedRun):
            yield item[0]
        elif left_out is not None:
            left_out.append(item)
