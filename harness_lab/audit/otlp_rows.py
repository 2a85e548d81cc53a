"""The spans of one OTLP trace made into the rows of its runs: the parents checked, each span
given to its nearest run span, and each run's ``diagnosis_run``, trace event, tool invocation
and SSE event rows read from its spans and events as ``docs/otel.md`` tabulates."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_lab.audit.otlp_names import (
    DETAIL,
    INVOCATION_ATTRIBUTES,
    RESULT_ATTRIBUTES,
    ROW_ATTRIBUTES,
    SSE_ATTRIBUTES,
    SSE_NAMES,
    TRACE_ATTRIBUTES,
)
from harness_lab.audit.sources import RunRows, SourceError

__all__ = ["TracedSpan", "check_parents", "owners", "run_rows"]


@dataclass(slots=True)
class TracedSpan:
    """One span as read: where it was, its ids, times in Unix nanoseconds, attributes and
    events under our names, and its status message when its status is ERROR."""

    where: str
    span_id: str
    parent: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None

    def same(self, other: TracedSpan) -> bool:
        """True when ``other`` is this span again, wherever it was read."""
        return (self.parent, self.name, self.start, self.end, self.attributes, self.events,
                self.error) == (other.parent, other.name, other.start, other.end,
                                other.attributes, other.events, other.error)


def check_parents(path: Path, trace: str, spans: dict[str, TracedSpan]) -> None:
    """Refuse a span whose parent is not in its trace, and parents that form a cycle."""
    reaches_root: set[str] = set()
    for span_id in spans:
        chain: list[str] = []
        seen: set[str] = set()
        current = span_id
        while current not in reaches_root:
            span = spans[current]
            if current in seen:
                raise SourceError(f"{path}:{span.where}.parentSpanId: span {current} of trace "
                                  f"{trace} is its own ancestor (a cycle of parents)")
            seen.add(current)
            chain.append(current)
            if span.parent is None:
                break
            if span.parent not in spans:
                raise SourceError(f"{path}:{span.where}.parentSpanId: {span.parent} is not a "
                                  f"span of trace {trace}")
            current = span.parent
        reaches_root.update(chain)


def owners(spans: dict[str, TracedSpan], run_span: str) -> dict[str, str | None]:
    """Each span's nearest run span (itself for a run span; None outside every run)."""
    owner: dict[str, str | None] = {}
    for span_id in spans:
        chain: list[str] = []
        current: str | None = span_id
        while current is not None and current not in owner:
            span = spans[current]
            if span.name == run_span:
                owner[current] = current
                break
            chain.append(current)
            current = span.parent
        found = owner[current] if current is not None else None
        for member in chain:
            owner[member] = found
    return owner


def run_rows(trace: str, run: TracedSpan, members: list[TracedSpan]) -> RunRows:
    """The rows of one run: its span, and every span under it."""
    attrs = run.attributes
    started = attrs.get(ROW_ATTRIBUTES["created_at"])
    origin = run.start - (round(started * 1_000_000_000) if type(started) is float else 0)

    def seconds(ns: int) -> float:
        return (ns - origin) / 1_000_000_000

    row = {column: attrs[key] for column, key in ROW_ATTRIBUTES.items() if key in attrs}
    row.setdefault("run_id", trace)
    row.setdefault("created_at", seconds(run.start))
    row.setdefault("finished_at", seconds(run.end))
    run_id = row["run_id"] = str(row["run_id"])
    result = _result(attrs)
    row["answer_json"] = result
    row["published_result"] = result if attrs.get(RESULT_ATTRIBUTES["published_result"]) \
        else None
    rows = RunRows(row, places={"diagnosis_run": [run.where]})
    detail = DETAIL
    for span in members:
        for name, at, event in span.events:
            if TRACE_ATTRIBUTES["seq"] in event:
                rows.places.setdefault("trace_event", []).append(span.where)
                rows.trace.append(
                    {"run_id": run_id, "seq": event[TRACE_ATTRIBUTES["seq"]], "t": seconds(at),
                     "type": name} | {column: event[key] for column, key in
                                      TRACE_ATTRIBUTES.items() if key in event and key != detail}
                    | {"detail": {k[len(detail):]: v for k, v in event.items()
                                  if k.startswith(detail)}})
            elif name in SSE_NAMES:
                if rows.sse is None:
                    rows.sse = []
                rows.places.setdefault("sse_event", []).append(span.where)
                rows.sse.append({"run_id": run_id, "seq": event.get(SSE_ATTRIBUTES["seq"]),
                                 "t": seconds(at), "kind": SSE_NAMES[name],
                                 "data": {data: event[key] for data, key in
                                          SSE_ATTRIBUTES.items()
                                          if key in event and data != "seq"}})
        if INVOCATION_ATTRIBUTES["invocation_id"] in span.attributes:
            rows.places.setdefault("tool_invocation", []).append(span.where)
            rows.invocations.append(_invocation(run_id, len(rows.invocations), span,
                                                seconds(span.start), seconds(span.end)))
    return rows


def _result(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The published result's shape, as the result object the invariants read (None: the
    run span says nothing of one)."""
    if not any(attrs.get(key) is not None for name, key in RESULT_ATTRIBUTES.items()
               if name != "published_result"):
        return None
    result: dict[str, Any] = {
        name: attrs[RESULT_ATTRIBUTES[name]] for name in ("contentType", "fallbackType")
        if RESULT_ATTRIBUTES[name] in attrs}
    if attrs.get(RESULT_ATTRIBUTES["conclusion"]):
        result["conclusion"] = ""  # that there is one; its text is not exported
    result["evidence"] = [{"invocation_id": i}
                          for i in _listed(attrs.get(RESULT_ATTRIBUTES["evidence"]))]
    result["findings"] = [{"citations": _listed(attrs.get(RESULT_ATTRIBUTES["citations"]))}]
    return result


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _invocation(run_id: str, seq: int, span: TracedSpan, start: float, end: float
                ) -> dict[str, Any]:
    """A tool span as its ``tool_invocation`` row (the order of the spans is the seq)."""
    attrs = span.attributes
    row = {column: attrs.get(key) for column, key in INVOCATION_ATTRIBUTES.items()}
    unfinished = row.pop("unfinished")
    return row | {"run_id": run_id, "seq": seq, "error": span.error, "started_at": start,
                  "finished_at": None if unfinished else end}
