"""A run's observation: everything a scenario can expect, as plain normalised data.

One mapping per run, read by the expectation matcher (``expect``) and written whole to a
snapshot. It holds the run's states, the ChatApplicationStatus values of its ``status``
events, its SSE events with their payloads, its trace with statuses, phases and details, its
canonical invocations and preflight rejections, its ProgressSnapshot, the requests each
router and diagnosis-model call received, and the stored row.

Normalised so that equal runs give equal data: the run's own invocation ids are written
``inv-N`` (as scripts write them), JSON-text columns of the row (``answer_json``,
``published_result``) are parsed, floats are rounded to nine decimals, and enum members are
their values. Everything else is deterministic already: times are virtual, and run and
session ids count from ``run-000001`` and ``session-000001`` in each scenario.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness_lab.record import RunRecord

__all__ = ["PARTS", "observe"]

PARTS = ("states", "statuses", "sse", "trace", "invocations", "rejections", "gains",
         "progress", "stop_required_deliveries", "routing", "agent_requests", "row", "usage",
         "discarded", "terminations")
"""The parts of an observation, in the order a snapshot writes them."""

STATE_AXES = ("intent", "run_state", "termination_reason", "release_outcome",
              "fallback_type", "db_status", "sse_state", "collection_state", "stop_reason",
              "semantic_verdict")
"""The state axes an observation's ``states`` holds."""

_JSON_COLUMNS = ("answer_json", "published_result")


def observe(record: RunRecord, *, progress: Any = None, routes: Sequence[Any] | None = None,
            steps: Sequence[Any] | None = None) -> dict[str, Any]:
    """The normalised observation of one finished run.

    ``progress`` is the run's ProgressSnapshot (None when the run had no diagnosis agent);
    ``routes`` and ``steps`` are the requests its router and diagnosis model received, as the
    scripted fakes keep them (recorded components keep none: ``routing`` and
    ``agent_requests`` are then None)."""
    summary = record.summary()
    usage = record.usage
    raw: dict[str, Any] = {
        "states": {axis: summary[axis] for axis in STATE_AXES},
        "statuses": [e.data.get("status") for e in record.sse_events
                     if e.kind.value == "status"],
        "sse": [{"kind": e.kind.value, "t": e.t, "data": dict(e.data)}
                for e in record.sse_events],
        "trace": [{"type": e.type.value, "t": e.t, "phase": e.phase.value,
                   "status": e.status.value, "detail": dict(e.detail)} for e in record.trace],
        "invocations": [{k: v for k, v in r.to_dict().items()
                         if k not in ("run_id", "seq", "normalized_scope")}
                        for r in record.invocations],
        "rejections": [{k: v for k, v in r.to_dict().items() if k != "run_id"}
                       for r in record.rejections],
        "gains": [g.value for g in record.gains],
        "progress": None if progress is None else progress.to_dict(),
        "stop_required_deliveries": (None if steps is None
                                     else sum(1 for s in steps if s.stop_required)),
        "routing": None if routes is None else [_route(r) for r in routes],
        "agent_requests": None if steps is None else [_step(s) for s in steps],
        "row": _row(record.stored_row),
        "usage": {"model_calls": usage.model_calls, "tool_calls": usage.tool_calls,
                  "tokens": usage.tokens, "input_tokens": usage.input_tokens,
                  "output_tokens": usage.output_tokens, "bytes": usage.bytes},
        "discarded": [{"kind": k, "what": w, "t": t} for k, w, t in record.discarded],
        "terminations": [{"state": s, "reason": r, "t": t} for s, r, t in record.terminations],
    }
    ids = re.compile(re.escape(record.run_id) + r"-(?=inv-\d)")
    return {part: _normal(raw[part], ids) for part in PARTS}


def _previous(prev: Any) -> dict[str, Any] | None:
    if prev is None:
        return None
    return {"run_id": prev.run_id, "query": prev.query, "conclusion": prev.conclusion}


def _route(request: Any) -> dict[str, Any]:
    return {"query": request.query,
            "history": [{"run_id": t.run_id, "query": t.query,
                         "intent": None if t.intent is None else t.intent.value,
                         "answer": t.answer} for t in request.history],
            "previous_turn": _previous(request.previous_turn)}


def _step(request: Any) -> dict[str, Any]:
    return {"step": request.step, "stop_required": request.stop_required,
            "previous_turn": _previous(request.previous_turn),
            "observations": len(request.observations), "notice": request.notice}


def _row(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = dict(row)
    for column in _JSON_COLUMNS:
        text = out.get(column)
        if isinstance(text, str):
            try:
                out[column] = json.loads(text)
            except ValueError:
                pass  # not JSON: compared as the text it is
    return out


def _normal(value: Any, ids: re.Pattern[str]) -> Any:
    """Plain JSON-ready data: enum values, lists, string keys, rounded floats, ``inv-N``."""
    value = getattr(value, "value", value) if not isinstance(value, str | bool) else value
    if isinstance(value, str):
        return ids.sub("", value)
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, Mapping):
        return {str(k): _normal(v, ids) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v, ids) for v in value]
    return value
