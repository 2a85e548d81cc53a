"""ResultSet: the results of many scenario runs, as rows, DataFrames and notebook HTML."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from harness_lab.scenarios.runner import ROW_COLUMNS, ScenarioResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OUTCOME_COLUMNS", "ResultSet", "UNRUN_COLUMNS"]

OUTCOME_COLUMNS = ("scenario", "file", "verdict", "expected", "invariants")
"""The columns of :meth:`ResultSet.outcomes`."""

UNRUN_COLUMNS = ("file", "scenario", "error")
"""The columns of :meth:`ResultSet.unrun`."""


class ResultSet(list[ScenarioResult]):
    """A list of :class:`ScenarioResult` that shows as a table in Jupyter."""

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

    def table(self) -> pd.DataFrame:
        """The CLI rows as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=list(ROW_COLUMNS))

    def outcomes(self) -> pd.DataFrame:
        """One row per result: its verdict and its expectation and invariant results."""
        import pandas as pd

        rows = [(r.scenario, r.path, r.verdict, r.expected_text, r.invariants_text)
                for r in self]
        return pd.DataFrame(rows, columns=list(OUTCOME_COLUMNS))

    def unrun(self) -> pd.DataFrame:
        """The files (or scenarios) that could not be loaded or run, with their error."""
        import pandas as pd

        rows = [(r.path, r.scenario, r.error) for r in self
                if r.error is not None and r.record is None]
        return pd.DataFrame(rows, columns=list(UNRUN_COLUMNS))

    def frame(self) -> pd.DataFrame:
        """One row per run record (every state axis as an ordered categorical)."""
        from harness_lab.report.frames import runs_frame

        with_records = [r for r in self if r.record is not None]
        return runs_frame([r.record for r in with_records if r.record is not None],
                          labels=[r.scenario for r in with_records])

    def mapping(self) -> pd.DataFrame:
        """Observed states beside what the outcome table prescribes, per scenario with a case."""
        from harness_lab.report.mapping import mapping_table

        return mapping_table((r.scenario, r.case, r.record) for r in self
                             if r.record is not None)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in ROW_COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v) if v is not None else '-')}</td>"
                             for v in row.values()) + "</tr>"
            for row in self.rows())
        passed = sum(r.ok for r in self)
        return (f"<table><caption>{passed}/{len(self)} scenario runs ok</caption>"
                f"<tr>{head}</tr>{body}</table>")
