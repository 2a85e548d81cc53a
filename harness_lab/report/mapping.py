"""Checks of observed runs and stored rows against the outcome table of SPEC §4, as frames.

The table itself (:data:`OUTCOME_TABLE`, hand-written from the specification, and the
ReleaseOutcome -> ``diagnosis_run.status`` mapping of doc §12.2 used by
:func:`status_mapping_check`) lives in :mod:`harness_lab.outcome_table` and is re-exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from harness_lab.outcome_table import (
    OUTCOME_BY_CASE,
    OUTCOME_TABLE,
    STORED_STATUS_FOR_OUTCOME,
    ExpectedOutcome,
    expected_outcome,
)
from harness_lab.record import RunRecord
from harness_lab.report.cells import is_missing

if TYPE_CHECKING:
    import pandas as pd

    from harness_lab.runner.run import ScenarioResult

__all__ = ["OUTCOME_BY_CASE", "OUTCOME_TABLE", "STORED_STATUS_FOR_OUTCOME", "ExpectedOutcome",
           "case_matched", "expected_axes", "expected_outcome", "mapping_table", "observed_axes",
           "status_mapping_check"]

_AXES = ("run_state", "release_outcome", "fallback_type", "db_status")


def _value(member: Any) -> Any:
    return None if member is None else member.value


def observed_axes(record: RunRecord) -> dict[str, str | None]:
    """The four axes the outcome table prescribes, as a record ended: run_state,
    release_outcome, fallback_type and db_status (values, None where there is none)."""
    return {"run_state": record.run_state.value,
            "release_outcome": record.release_outcome.value,
            "fallback_type": _value(record.fallback_type),
            "db_status": _value(record.stored_status)}


def expected_axes(case: str) -> dict[str, str | None]:
    """The four axes the outcome table gives ``case`` (KeyError for an unknown case)."""
    want = expected_outcome(case)
    return {axis: _value(getattr(want, axis)) for axis in _AXES}


def case_matched(case: str, record: RunRecord) -> bool:
    """True when the record ended on all four axes as the outcome table's ``case`` says."""
    return observed_axes(record) == expected_axes(case)


def mapping_table(results: Iterable[tuple[str, str | None, RunRecord]]
                  | Iterable[ScenarioResult]) -> pd.DataFrame:
    """Observed state axes beside the outcome table's, one row per scenario.

    ``results`` holds scenario results (``run_paths(...)``: those with a record count) or
    ``(scenario, case, record)`` triples; ``case`` is an :data:`OUTCOME_TABLE` key or None.
    Columns: scenario, case, run_id, then for each of run_state, release_outcome,
    fallback_type, db_status the observed and ``expected_`` column, and ``matched``
    (nullable boolean: all four equal, NA where there is no case).
    An unknown case key raises KeyError.
    """
    import pandas as pd

    from harness_lab.report.frames import AXIS_DTYPES, categorize

    rows = []
    for scenario, case, record in _triples(results):
        observed = observed_axes(record)
        expected = dict.fromkeys(_AXES) if case is None else expected_axes(case)
        row: dict[str, Any] = {"scenario": scenario, "case": case, "run_id": record.run_id}
        for axis in _AXES:
            row[axis] = observed[axis]
            row[f"expected_{axis}"] = expected[axis]
        row["matched"] = None if case is None else observed == expected
        rows.append(row)
    columns = ["scenario", "case", "run_id",
               *(name for axis in _AXES for name in (axis, f"expected_{axis}")), "matched"]
    df = pd.DataFrame(rows, columns=columns)
    dtypes = {**AXIS_DTYPES, **{f"expected_{axis}": AXIS_DTYPES[axis] for axis in _AXES}}
    df = categorize(df, dtypes)
    df["matched"] = df["matched"].astype("boolean")
    return df


def _triples(results: Iterable[Any]) -> Iterator[tuple[str, str | None, RunRecord]]:
    for item in results:
        if isinstance(item, tuple):
            yield item
        elif item.record is not None:
            yield item.scenario, item.case, item.record


def status_mapping_check(rows: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Check doc §12.2 on stored diagnosis_run rows (dicts, or a frame such as read_runs').

    The stored status is read from ``status`` (raw rows) or ``db_status`` (:func:`read_runs`).
    A row with a release_outcome must carry the status of :data:`STORED_STATUS_FOR_OUTCOME`;
    a row without one must be RUNNING. Returns run_id, release_outcome, status,
    expected_status and ``ok`` per row (an unknown release_outcome is never ok).
    """
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    status_col = "status" if "status" in frame.columns else "db_status"
    out = []
    for run_id, outcome, status in zip(frame["run_id"], frame["release_outcome"],
                                       frame[status_col], strict=True):
        outcome, status = (None if is_missing(v) else str(v) for v in (outcome, status))
        expected = "RUNNING" if outcome is None else STORED_STATUS_FOR_OUTCOME.get(outcome)
        out.append({"run_id": run_id, "release_outcome": outcome, "status": status,
                    "expected_status": expected,
                    "ok": expected is not None and status == expected})
    df = pd.DataFrame(out, columns=["run_id", "release_outcome", "status", "expected_status",
                                    "ok"])
    df["ok"] = df["ok"].astype("bool")
    return df
