"""The columns of the toolkit's pandas frames and the ordered dtype of each state axis.

Every enum-valued column is an ordered categorical of its enum's values in declaration order,
so a crosstab or a plot lists RunState (say) in the document's order, empty values included.
The frames (:mod:`harness_lab.report.frames`) and a sweep's result share these.
"""

from __future__ import annotations

from enum import Enum

import pandas as pd

from harness_lab.states import (
    CollectionState,
    DiagnosisStopReason,
    EvidenceStatus,
    FallbackType,
    InformationGain,
    IntentType,
    InvocationStatus,
    PreflightReason,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    SseEventKind,
    SseState,
    StoredRunStatus,
    ToolErrorCode,
    TraceEventStatus,
    TraceEventType,
    TracePhase,
)

__all__ = ["AXIS_DTYPES", "INVOCATION_DTYPES", "REJECTION_DTYPES", "RUN_FRAME_COLUMNS",
           "SSE_DTYPES", "TRACE_DTYPES", "enum_dtype"]


def enum_dtype(enum: type[Enum]) -> pd.CategoricalDtype:
    """The ordered CategoricalDtype of an enum's values, in declaration order."""
    return pd.CategoricalDtype([m.value for m in enum], ordered=True)


AXIS_DTYPES: dict[str, pd.CategoricalDtype] = {
    "intent": enum_dtype(IntentType),
    "run_state": enum_dtype(RunState),
    "release_outcome": enum_dtype(ReleaseOutcome),
    "fallback_type": enum_dtype(FallbackType),
    "db_status": enum_dtype(StoredRunStatus),
    "sse_state": enum_dtype(SseState),
    "collection_state": enum_dtype(CollectionState),
    "stop_reason": enum_dtype(DiagnosisStopReason),
    "semantic_verdict": enum_dtype(SemanticVerdict),
}
"""Run-level state-axis column -> its ordered dtype (the columns of :func:`runs_frame`)."""

TRACE_DTYPES: dict[str, pd.CategoricalDtype] = {
    "type": enum_dtype(TraceEventType),
    "phase": enum_dtype(TracePhase),
    "status": enum_dtype(TraceEventStatus),
}
"""Categorical columns of :func:`trace_frame`."""

INVOCATION_DTYPES: dict[str, pd.CategoricalDtype] = {
    "status": enum_dtype(InvocationStatus),
    "evidence_status": enum_dtype(EvidenceStatus),
    "information_gain": enum_dtype(InformationGain),
    "error_code": enum_dtype(ToolErrorCode),
}
"""Categorical columns of :func:`invocations_frame`."""

REJECTION_DTYPES: dict[str, pd.CategoricalDtype] = {"reason": enum_dtype(PreflightReason)}
"""Categorical columns of :func:`rejections_frame`."""

SSE_DTYPES: dict[str, pd.CategoricalDtype] = {"kind": enum_dtype(SseEventKind)}
"""Categorical columns of :func:`sse_frame`."""

RUN_FRAME_COLUMNS: tuple[str, ...] = (
    "run_id", "session_id", "scenario", "intent", "run_state", "termination_reason",
    "release_outcome", "fallback_type", "db_status", "sse_state", "collection_state",
    "stop_reason", "semantic_verdict", "agent_steps", "tool_calls", "rejections",
    "model_calls", "tokens", "bytes", "input_tokens", "output_tokens",
    "headroom_model_calls", "headroom_tool_calls", "headroom_tokens", "headroom_bytes",
    "started_at", "finished_at", "duration_s", "error",
)
"""The columns of :func:`runs_frame`, in order."""
