"""Reports on runs: pandas frames, the SPEC §4 outcome mapping, plots and an HTML report.

>>> from harness_lab.report import runs_frame, crosstab     # doctest: +SKIP
>>> df = runs_frame(records, labels=names)                  # doctest: +SKIP
>>> crosstab(df, "run_state", "release_outcome")            # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
    from harness_lab.report.compare import Comparison, compare_with
    from harness_lab.report.frames import (
        AXIS_DTYPES,
        INVOCATION_DTYPES,
        REJECTION_DTYPES,
        RUN_FRAME_COLUMNS,
        SSE_DTYPES,
        TRACE_DTYPES,
        Source,
        categorize,
        crosstab,
        enum_dtype,
        invocations_frame,
        read_invocations,
        read_runs,
        read_trace,
        rejections_frame,
        runs_frame,
        sse_frame,
        state_crosstabs,
        trace_frame,
    )
    from harness_lab.report.html import html_report, png_img, write_html_report
    from harness_lab.report.mapping import (
        OUTCOME_BY_CASE,
        OUTCOME_TABLE,
        STORED_STATUS_FOR_OUTCOME,
        ExpectedOutcome,
        expected_outcome,
        mapping_table,
        status_mapping_check,
    )
    from harness_lab.report.plots import (
        MARKERS,
        OUTCOME_LABELS,
        PHASE_COLORS,
        figure_png,
        outcome_bars,
        outcome_heatmap,
        outcome_label,
        run_timeline,
    )

_MODULES = {
    "compare": ("Comparison", "compare_with"),
    "frames": ("AXIS_DTYPES", "INVOCATION_DTYPES", "REJECTION_DTYPES", "RUN_FRAME_COLUMNS",
               "SSE_DTYPES", "TRACE_DTYPES", "Source", "categorize", "crosstab", "enum_dtype",
               "invocations_frame", "read_invocations", "read_runs", "read_trace",
               "rejections_frame", "runs_frame", "sse_frame", "state_crosstabs", "trace_frame"),
    "html": ("html_report", "png_img", "write_html_report"),
    "mapping": ("OUTCOME_BY_CASE", "OUTCOME_TABLE", "STORED_STATUS_FOR_OUTCOME",
                "ExpectedOutcome", "expected_outcome", "mapping_table", "status_mapping_check"),
    "plots": ("MARKERS", "OUTCOME_LABELS", "PHASE_COLORS", "figure_png", "outcome_bars",
              "outcome_heatmap", "outcome_label", "run_timeline"),
}
_EXPORTS = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}

__all__ = ["AXIS_DTYPES", "INVOCATION_DTYPES", "MARKERS", "OUTCOME_BY_CASE", "OUTCOME_LABELS",
           "OUTCOME_TABLE", "PHASE_COLORS", "REJECTION_DTYPES", "RUN_FRAME_COLUMNS", "SSE_DTYPES",
           "STORED_STATUS_FOR_OUTCOME", "TRACE_DTYPES", "Comparison", "ExpectedOutcome", "Source",
           "categorize", "compare_with", "crosstab", "enum_dtype", "expected_outcome", "figure_png",
           "html_report", "invocations_frame", "mapping_table", "outcome_bars", "outcome_heatmap",
           "outcome_label", "png_img", "read_invocations", "read_runs", "read_trace",
           "rejections_frame", "run_timeline", "runs_frame", "sse_frame", "state_crosstabs",
           "status_mapping_check", "trace_frame", "write_html_report"]

# the names import on first use: pandas and matplotlib load only when a frame, plot or report
# is asked for
__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)
