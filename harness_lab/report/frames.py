"""RunRecords and the run store as pandas DataFrames, every state axis an ordered Categorical.

Each state-axis column is a :class:`pandas.CategoricalDtype` whose categories are the members
of its enum in declaration order, which is the lifecycle order; so ``value_counts(sort=False)``,
``groupby(observed=False)`` and :func:`crosstab` list every state, in that order, zeros included.

The ``read_*`` functions give the same frames back from a run store's tables (doc §12).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.engine import URL

from harness_lab.columns import (
    AXIS_DTYPES,
    INVOCATION_DTYPES,
    REJECTION_DTYPES,
    RUN_FRAME_COLUMNS,
    SSE_DTYPES,
    TRACE_DTYPES,
    enum_dtype,
)
from harness_lab.record import RunRecord
from harness_lab.store.sql import SqlRunStore, diagnosis_run, tool_invocation, trace_event

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["AXIS_DTYPES", "INVOCATION_DTYPES", "REJECTION_DTYPES", "RUN_FRAME_COLUMNS",
           "SSE_DTYPES", "TRACE_DTYPES", "Source", "categorize", "crosstab", "enum_dtype",
           "invocations_frame", "read_invocations", "read_runs", "read_trace", "rejections_frame",
           "runs_frame", "sse_frame", "state_crosstabs", "trace_frame"]

Source: TypeAlias = str | URL | Engine | SqlRunStore
"""Where the ``read_*`` functions read from: a SQLAlchemy URL, an Engine or a SqlRunStore."""


_RUN_NUMBER_DTYPES = {
    **{f"headroom_{k}": "Int64" for k in ("model_calls", "tool_calls", "tokens", "bytes")},
    **dict.fromkeys(("agent_steps", "tool_calls", "rejections", "model_calls", "tokens", "bytes",
                     "input_tokens", "output_tokens"), "int64"),
    **dict.fromkeys(("started_at", "finished_at", "duration_s"), "float64"),
}
_TRACE_COLUMNS = ("run_id", "seq", "t", "type", "phase", "status", "detail")
_INVOCATION_COLUMNS = ("run_id", "invocation_id", "seq", "tool", "status", "evidence_status",
                       "information_gain", "error_code", "items", "size_bytes", "started_at",
                       "finished_at")
_REJECTION_COLUMNS = ("run_id", "tool", "reason", "message", "t")
_SSE_COLUMNS = ("run_id", "seq", "t", "kind", "data")


def categorize(df: pd.DataFrame, dtypes: Mapping[str, pd.CategoricalDtype] | None = None
               ) -> pd.DataFrame:
    """A copy of ``df`` with every column named in ``dtypes`` (default AXIS_DTYPES) cast.

    Columns the frame does not have are skipped; a value outside the enum becomes missing.
    """
    out = df.copy()
    for name, dtype in (AXIS_DTYPES if dtypes is None else dtypes).items():
        if name in out.columns:
            out[name] = _as_category(out[name], dtype)
    return out


def _as_category(values: pd.Series, dtype: pd.CategoricalDtype) -> pd.Series:
    known = set(dtype.categories)
    plain = values.astype(object).map(lambda v: v if v in known else None)
    return plain.astype(dtype)


def _frame(rows: list[dict[str, Any]], columns: Sequence[str],
           dtypes: Mapping[str, pd.CategoricalDtype]) -> pd.DataFrame:
    return categorize(pd.DataFrame(rows, columns=list(columns)), dtypes)


def runs_frame(records: Iterable[RunRecord] | Iterable[ScenarioResult], *,
               labels: Sequence[str | None] | None = None) -> pd.DataFrame:
    """One row per record (columns :data:`RUN_FRAME_COLUMNS`); ``labels`` fill ``scenario``.

    ``records`` may be scenario results instead (``run_paths(...)``, a log's ``results``):
    each that has a record gives its row, labelled by its scenario name. ``labels`` must be
    as long as ``records`` when given; without it ``scenario`` is missing for bare records.
    Headroom columns are nullable ``Int64`` (missing where a budget has no limit).
    """
    recs, names = _labelled_records(records, labels)
    rows = [{"scenario": label, **r.summary()} for r, label in zip(recs, names, strict=True)]
    return _frame(rows, RUN_FRAME_COLUMNS, AXIS_DTYPES).astype(_RUN_NUMBER_DTYPES)


def _labelled_records(items: Iterable[Any], labels: Sequence[str | None] | None
                      ) -> tuple[list[RunRecord], list[str | None]]:
    given = list(items)
    if labels is None and any(not isinstance(i, RunRecord) for i in given):
        with_records = [r for r in given if getattr(r, "record", None) is not None]
        return [r.record for r in with_records], [r.scenario for r in with_records]
    names: list[str | None] = [None] * len(given) if labels is None else list(labels)
    if len(names) != len(given):
        raise ValueError(f"{len(names)} labels for {len(given)} records")
    return given, names


def trace_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per trace event: run_id, seq, t, type, phase, status, detail (a dict)."""
    rows = [{**e.to_dict(), "t": float(e.t)} for r in records for e in r.trace]
    return _frame(rows, _TRACE_COLUMNS, TRACE_DTYPES)


def invocations_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per canonical tool invocation, by run then seq."""
    rows = [{k: inv.to_dict()[k] for k in _INVOCATION_COLUMNS}
            for r in records for inv in r.invocations]
    return _frame(rows, _INVOCATION_COLUMNS, INVOCATION_DTYPES)


def rejections_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per preflight rejection: run_id, tool, reason, message, t."""
    rows = [{k: rej.to_dict()[k] for k in _REJECTION_COLUMNS}
            for r in records for rej in r.rejections]
    return _frame(rows, _REJECTION_COLUMNS, REJECTION_DTYPES)


def sse_frame(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per public SSE event: run_id, seq, t, kind, data (a dict)."""
    rows = [{"run_id": r.run_id, **e.to_dict(), "t": float(e.t)}
            for r in records for e in r.sse_events]
    return _frame(rows, _SSE_COLUMNS, SSE_DTYPES)


def _read(source: Source, query: Any) -> pd.DataFrame:
    """The rows ``query`` selects from ``source`` (an engine made from a URL is disposed)."""
    if isinstance(source, SqlRunStore):
        source = source.engine
    engine = source if isinstance(source, Engine) else create_engine(source)
    try:
        with engine.connect() as conn:
            return pd.read_sql(query, conn)
    finally:
        if engine is not source:
            engine.dispose()


_RUN_ORDER = (diagnosis_run.c.created_at, diagnosis_run.c.ordinal)
_STORED_RUN_COLUMNS = tuple(c.name for c in diagnosis_run.c if c.name != "ordinal")
_STORED_RUN_NAMES = {"status": "db_status", "termination_state": "run_state",
                     "total_tokens": "tokens", "created_at": "started_at"}
_READ_RUN_COLUMNS = (
    "run_id", "session_id", "intent", "run_state", "termination_reason", "release_outcome",
    "fallback_type", "db_status", "agent_steps", "tool_calls", "input_tokens",
    "output_tokens", "tokens", "started_at", "finished_at", "duration_s", "query",
    "conclusion", "answer_json", "published_result",
)


def read_runs(source: Source) -> pd.DataFrame:
    """The diagnosis_run rows, oldest first, named like :func:`runs_frame` where they overlap.

    ``status`` becomes ``db_status``, ``termination_state`` ``run_state``, ``total_tokens``
    ``tokens``, ``created_at`` ``started_at``, and ``duration_ms`` ``duration_s`` (seconds).
    A plain ``sqlite://`` URL opens a new, empty in-memory database: pass the store or its
    engine to read an in-memory store.
    """
    query = select(*(diagnosis_run.c[name] for name in _STORED_RUN_COLUMNS)).order_by(*_RUN_ORDER)
    df = _read(source, query).rename(columns=_STORED_RUN_NAMES)
    df["duration_s"] = df.pop("duration_ms").astype("float64") / 1000.0
    return categorize(df.reindex(columns=list(_READ_RUN_COLUMNS)), AXIS_DTYPES)


def _read_child(source: Source, table: Any, columns: Sequence[str]) -> pd.DataFrame:
    query = (select(*(table.c[name] for name in columns))
             .join(diagnosis_run, diagnosis_run.c.run_id == table.c.run_id)
             .order_by(*_RUN_ORDER, table.c.seq))
    return _read(source, query)


def read_trace(source: Source) -> pd.DataFrame:
    """The trace_event rows as :func:`trace_frame` columns (``detail`` decoded to a dict)."""
    df = _read_child(source, trace_event, _TRACE_COLUMNS)
    df["detail"] = [json.loads(text) for text in df["detail"]]
    df["t"] = df["t"].astype("float64")
    return categorize(df, TRACE_DTYPES)


def read_invocations(source: Source) -> pd.DataFrame:
    """The tool_invocation rows as :func:`invocations_frame` columns."""
    return categorize(_read_child(source, tool_invocation, _INVOCATION_COLUMNS), INVOCATION_DTYPES)


def crosstab(df: pd.DataFrame, rows: str = "run_state", cols: str = "release_outcome", *,
             missing: str | None = None) -> pd.DataFrame:
    """Counts of ``rows`` x ``cols`` keeping every category, zeros included, in enum order.

    Missing values are left out unless ``missing`` names a label for them: that label is then
    the last category of each axis that has missing values. Non-categorical columns keep
    their values' first-appearance order.
    """
    index, columns = _labelled(df[rows], missing), _labelled(df[cols], missing)
    table = pd.crosstab(index, columns, dropna=False)
    row_cats, col_cats = list(index.cat.categories), list(columns.cat.categories)
    table = table.reindex(index=row_cats, columns=col_cats, fill_value=0)
    table.index = pd.CategoricalIndex(row_cats, categories=row_cats, ordered=True, name=rows)
    table.columns = pd.CategoricalIndex(col_cats, categories=col_cats, ordered=True, name=cols)
    return table.astype("int64")


def _labelled(values: pd.Series, missing: str | None) -> pd.Series:
    if not isinstance(values.dtype, pd.CategoricalDtype):
        cats = list(pd.unique(values.dropna()))
        values = values.astype(object).where(values.notna(), None).astype(
            pd.CategoricalDtype(cats, ordered=True))
    if missing is not None and bool(values.isna().any()):
        values = values.cat.add_categories([missing]).fillna(missing)
    return values


def state_crosstabs(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """RunState x ReleaseOutcome and ReleaseOutcome x FallbackType (no fallback: ``(none)``)."""
    return {
        "run_state x release_outcome": crosstab(df, "run_state", "release_outcome"),
        "release_outcome x fallback_type": crosstab(df, "release_outcome", "fallback_type",
                                                    missing="(none)"),
    }
