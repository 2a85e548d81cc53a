"""ResultSet: the results of many scenario runs, as rows, DataFrames and notebook HTML."""

from __future__ import annotations

import re
from typing import Any

from harness_lab.runner.run import ScenarioResult
from harness_lab.scenarios.match import plain

__all__ = ["EXPORT_COLUMNS", "ResultSet", "export_row", "first_difference", "location"]

EXPORT_COLUMNS = ("scenario", "file", "line", "verdict", "intent", "run_state",
                  "release_outcome", "fallback_type", "db_status", "invariants", "tags",
                  "duration_s", "mismatches", "error")
"""The fields of a row written as JSON or CSV (:func:`export_row`)."""


def first_difference(result: ScenarioResult) -> str:
    """The first thing that did not hold, in one line: the error, the first mismatch (and how
    many more), an invariant that broke, or one expected to break that held; ``""`` if ok."""
    if result.error is not None:
        problems = result.error.strip().splitlines() or [""]
    else:
        problems = ([str(m) for m in result.mismatches]
                    + [f"invariant {name} broke" for name in result.unexpected]
                    + [f"invariant {name} held, expected to break" for name in result.missing])
    if not problems:
        return ""
    more = len(problems) - 1
    return f"{problems[0]} (and {more} more)" if more else problems[0]


def location(result: ScenarioResult) -> tuple[str | None, int | None]:
    """The file of ``result`` and the line of its first failed expectation (or of the
    scenario, when nothing failed or the failure has no line of its own)."""
    from harness_lab.scenarios.locate import expectation_line

    field = result.mismatches[0].field if result.mismatches else None
    if result.error is not None and result.path is not None:
        line = _error_line(result.error, result.path)
        if line is not None:
            return result.path, line
    return result.path, expectation_line(result.path, result.scenario, field)


def _error_line(error: str, path: str) -> int | None:
    """The line an error message names for ``path`` (``path:12: ...``), if it names one."""
    head = f"{path}:"
    at = error.find(head)
    digits = re.match(r"\d+", error[at + len(head):]) if at >= 0 else None
    return int(digits.group()) if digits else None


def export_row(result: ScenarioResult) -> dict[str, Any]:
    """One result as data (:data:`EXPORT_COLUMNS`): states, file and line, tags, the run's
    virtual duration in seconds, each mismatch as ``{field, expected, observed}``, and the
    invariants that broke unexpectedly (None when there was no record to check)."""
    row = result.row()
    path, line = location(result)
    r = result.record
    return {
        "scenario": result.scenario, "file": path, "line": line, "verdict": result.verdict,
        "intent": row["intent"], "run_state": row["run_state"],
        "release_outcome": row["release_outcome"], "fallback_type": row["fallback_type"],
        "db_status": row["db_status"],
        "invariants": None if r is None else (list(result.unexpected)
                                              + [f"{n} (expected to break)"
                                                 for n in result.missing]),
        "tags": list(result.tags),
        "duration_s": None if r is None else round(float(r.finished_at - r.started_at), 9),
        "mismatches": [{"field": m.field, "expected": _data(m.expected),
                        "observed": _data(m.observed)} for m in result.mismatches],
        "error": result.error,
    }


def _data(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _data(v) for k, v in value.items()}
    value = plain(value)
    return value if isinstance(value, str | int | float | bool | None) else str(value)


class ResultSet(list[ScenarioResult]):
    """A list of :class:`ScenarioResult` (shown as a table in Jupyter: see
    :mod:`harness_lab.report.display`)."""

    @property
    def ok(self) -> bool:
        """True when every result is ok."""
        return all(r.ok for r in self)

    def failures(self) -> ResultSet:
        """The results that are not ok."""
        return ResultSet(r for r in self if not r.ok)

    def rows(self) -> list[dict[str, Any]]:
        """One CLI row per result."""
        return [r.row() for r in self]

    def export_rows(self) -> list[dict[str, Any]]:
        """One data row per result (:func:`export_row`), for JSON and CSV."""
        return [export_row(r) for r in self]

