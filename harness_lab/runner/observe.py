"""A run's observation: everything a scenario can expect, as plain normalised data.

One mapping per run, read by the expectation matcher (``expect``) and written whole to a
snapshot. It holds the run's states, the ChatApplicationStatus values of its ``status``
events, its SSE events with their payloads and the SSE session's states, its trace with
statuses, phases and details, the trace and SSE events in one timeline, its canonical
invocations and preflight rejections, its ProgressSnapshot, the requests each router,
diagnosis-model, SemanticGuard and EvidenceRepair call received, and the stored row.

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
from harness_lab.scenarios.paths import PARTS

__all__ = ["PARTS", "observe"]

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
        "sse_states": [{"state": state, "t": t} for state, t in record.sse_history],
        "sse_refused": [kind.value for kind in record.sse_refused],
        "trace": [{"type": e.type.value, "t": e.t, "phase": e.phase.value,
                   "status": e.status.value, "detail": dict(e.detail)} for e in record.trace],
        "timeline": _timeline(record),
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
        "guard_requests": [{"query": r.query, "draft": r.draft,
                            "evidence": [_cited(e) for e in r.evidence]}
                           for r in record.guard_requests],
        "repair_requests": [{"query": r.query, "draft": r.draft, "problems": r.problems,
                             "citable": r.citable} for r in record.repair_requests],
        "row": _row(record.stored_row),
        "usage": {"model_calls": usage.model_calls, "tool_calls": usage.tool_calls,
                  "tokens": usage.tokens, "input_tokens": usage.input_tokens,
                  "output_tokens": usage.output_tokens, "bytes": usage.bytes},
        "headroom": dict(record.headroom),
        "discarded": [{"kind": k, "what": w, "t": t} for k, w, t in record.discarded],
        "terminations": [{"state": s, "reason": cause, "detail": r, "t": t}
                         for (s, r, t), cause in zip(record.terminations, _causes(record),
                                                     strict=True)],
    }
    ids = re.compile(re.escape(record.run_id) + r"-(?=inv-\d)")
    return {part: _normal(raw[part], ids) for part in PARTS}


def _cited(record: Mapping[str, Any]) -> dict[str, Any]:
    """A cited invocation as ``invocations`` shows one."""
    return {k: v for k, v in record.items() if k not in ("run_id", "seq", "normalized_scope")}


def _causes(record: RunRecord) -> tuple[str | None, ...]:
    """Each termination's CancellationReason (or ``completed``); none for a record written
    before causes were kept."""
    causes = record.termination_causes
    return causes if len(causes) == len(record.terminations) else (None,) * len(
        record.terminations)


def _timeline(record: RunRecord) -> list[dict[str, Any]]:
    """The trace and the SSE events in the one order they happened: each SSE event after
    the trace events recorded before it was sent."""
    marks = record.sse_trace_marks
    if len(marks) != len(record.sse_events):
        return []  # a record written before the marks were kept
    out: list[dict[str, Any]] = []
    done = 0
    trace = record.trace
    for mark, e in zip(marks, record.sse_events, strict=True):
        for ev in trace[done:mark]:
            out.append({"event": ev.type.value, "source": "trace", "t": ev.t})
        done = max(done, mark)
        out.append({"event": e.kind.value, "source": "sse", "t": e.t})
    out += [{"event": ev.type.value, "source": "trace", "t": ev.t} for ev in trace[done:]]
    return out


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
