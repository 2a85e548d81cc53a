"""OTLP JSON as an audit source: traces in the OpenTelemetry Collector file exporter's format
(JSON Lines, each line one ``ExportTraceServiceRequest``), or one such request as a JSON
document, read back into the rows of each run (:func:`read_otlp`).

A run is a span named ``harness_lab.run`` with every span under it. Its attributes give the
``diagnosis_run`` row, each span event carrying ``harness_lab.trace.seq`` is a trace event
(named by its type), each span carrying ``harness_lab.invocation.id`` a tool invocation, and
each ``sse.KIND`` event an SSE event: what :func:`harness_lab.otel.write_otlp_json` and the
OTLP export write (``docs/otel.md`` tabulates it). A mapping (:func:`check_otlp_mapping`)
names another harness's span, event and attribute names for ours.

Every line goes through the bounded JSON reader; a span whose ids, times or values are not
what OTLP allows, whose parent is not in its trace, whose parents form a cycle, or a trace of
more than :data:`MAX_TRACE_SPANS` spans is refused naming the file, the line and the field.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness_lab.audit.rebuild import parse_line
from harness_lab.audit.sources import RunRows, SourceError, json_lines
from harness_lab.bounded_json import MAX_JSON_BYTES, JsonInputError
from harness_lab.bounds import INT_MAX, INT_MIN
from harness_lab.otel.attributes import NAMESPACE, SSE_FIELDS
from harness_lab.otel.plan import ROOT_NAME
from harness_lab.states import SseEventKind, TraceEventType

__all__ = ["EVENT_NAMES", "INVOCATION_ATTRIBUTES", "MAX_TRACE_SPANS", "OTLP_SUFFIXES",
           "RESULT_ATTRIBUTES", "ROW_ATTRIBUTES", "SSE_ATTRIBUTES", "TRACE_ATTRIBUTES",
           "check_otlp_mapping", "is_otlp_file", "iter_otlp", "read_otlp"]

MAX_TRACE_SPANS: Final = 100_000
"""Spans one trace may hold (a run of the scenario library has a few dozen)."""
OTLP_SUFFIXES: Final = (".otlp.json", ".otlp.jsonl", ".otlp")
"""File names read as OTLP JSON whatever they hold (others are told by their first bytes)."""

ROW_ATTRIBUTES: Final = {
    "run_id": f"{NAMESPACE}.run_id", "session_id": f"{NAMESPACE}.session_id",
    "intent": f"{NAMESPACE}.intent", "status": f"{NAMESPACE}.db_status",
    "termination_state": f"{NAMESPACE}.run_state",
    "termination_reason": f"{NAMESPACE}.termination_reason",
    "release_outcome": f"{NAMESPACE}.release_outcome",
    "fallback_type": f"{NAMESPACE}.fallback_type",
    "agent_steps": f"{NAMESPACE}.agent_steps", "tool_calls": f"{NAMESPACE}.tool_calls",
    "total_tokens": f"{NAMESPACE}.tokens", "input_tokens": f"{NAMESPACE}.input_tokens",
    "output_tokens": f"{NAMESPACE}.output_tokens", "created_at": f"{NAMESPACE}.started_at",
    "finished_at": f"{NAMESPACE}.finished_at"}
"""``diagnosis_run`` columns and the run span's attributes they are read from."""
RESULT_ATTRIBUTES: Final = {
    "contentType": f"{NAMESPACE}.result.content_type",
    "fallbackType": f"{NAMESPACE}.result.fallback_type",
    "conclusion": f"{NAMESPACE}.result.conclusion", "evidence": f"{NAMESPACE}.result.evidence",
    "citations": f"{NAMESPACE}.result.citations",
    "published_result": f"{NAMESPACE}.published_result"}
"""The published result's shape (never its text), on the run span."""
TRACE_ATTRIBUTES: Final = {
    "seq": f"{NAMESPACE}.trace.seq", "status": f"{NAMESPACE}.trace.status",
    "phase": f"{NAMESPACE}.trace.phase", "detail": f"{NAMESPACE}.detail."}
"""``trace_event`` columns and the span event attributes they are read from (``detail``: every
attribute under the prefix)."""
INVOCATION_ATTRIBUTES: Final = {
    "invocation_id": f"{NAMESPACE}.invocation.id", "tool": "gen_ai.tool.name",
    "normalized_scope": f"{NAMESPACE}.invocation.scope",
    "status": f"{NAMESPACE}.invocation.status",
    "evidence_status": f"{NAMESPACE}.invocation.evidence_status",
    "error_code": f"{NAMESPACE}.invocation.error_code",
    "items": f"{NAMESPACE}.invocation.items", "size_bytes": f"{NAMESPACE}.invocation.bytes",
    "information_gain": f"{NAMESPACE}.invocation.information_gain",
    "call_id": "gen_ai.tool.call.id", "unfinished": f"{NAMESPACE}.unfinished"}
"""``tool_invocation`` columns and the tool span's attributes they are read from."""
SSE_ATTRIBUTES: Final = {"seq": f"{NAMESPACE}.sse.seq"} | {
    data: f"{NAMESPACE}.sse.{name}" for data, name in SSE_FIELDS.items()}
"""An SSE event's ``seq`` and data fields and the span event attributes they are read from."""
EVENT_NAMES: Final = tuple(t.value for t in TraceEventType) + tuple(
    f"sse.{k.value}" for k in SseEventKind)
"""The span event names a mapping may rename: the trace event types and the SSE events."""

_KNOWN_ATTRIBUTES: Final = frozenset(
    [*ROW_ATTRIBUTES.values(), *RESULT_ATTRIBUTES.values(), *TRACE_ATTRIBUTES.values(),
     *INVOCATION_ATTRIBUTES.values(), *SSE_ATTRIBUTES.values()])
_SSE_NAMES: Final = {f"sse.{k.value}": k.value for k in SseEventKind}
_SPAN_KEYS: Final = frozenset(INVOCATION_ATTRIBUTES.values())
_RUN_KEYS: Final = _SPAN_KEYS | frozenset([*ROW_ATTRIBUTES.values(), *RESULT_ATTRIBUTES.values()])
_TRACE_KEYS: Final = frozenset(TRACE_ATTRIBUTES.values())
_SSE_KEYS: Final = frozenset(SSE_ATTRIBUTES.values())
_DETAIL: Final = TRACE_ATTRIBUTES["detail"]
_HEAD_BYTES: Final = 64 * 1024
_OTLP_START: Final = re.compile(rb'\A\s*\{\s*"resourceSpans"\s*:')
_HEX: Final = re.compile(r"\A[0-9a-fA-F]+\Z")
_DOUBLES: Final = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_UINT64: Final = (1 << 64) - 1
_ANY_KINDS: Final = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue",
                     "kvlistValue", "bytesValue")


def is_otlp_file(path: str | Path) -> bool:
    """True for a file named ``*.otlp.json``, ``*.otlp.jsonl`` or ``*.otlp``, or whose first
    bytes open an object with ``resourceSpans``."""
    if str(path).endswith(OTLP_SUFFIXES):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return False
    return _OTLP_START.match(head) is not None


def check_otlp_mapping(mapping: Mapping[str, Any]) -> None:
    """Raise :class:`SourceError` naming what is wrong with an OTLP mapping:
    ``{"run_span": NAME, "events": {OURS: THEIRS}, "attributes": {OURS: THEIRS}}``, ours
    being names this reader knows (``harness_lab.detail.`` maps a prefix)."""
    if not isinstance(mapping, Mapping):
        raise SourceError("the mapping must be an object")
    for key in mapping:
        if key not in ("run_span", "events", "attributes"):
            raise SourceError(f"mapping: unknown key {key!r} (run_span, events, attributes)")
    if not isinstance(mapping.get("run_span", ROOT_NAME), str):
        raise SourceError("mapping.run_span: the name of the run's span (a string)")
    for section, known in (("events", EVENT_NAMES), ("attributes", _KNOWN_ATTRIBUTES)):
        names = mapping.get(section, {})
        if not isinstance(names, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise SourceError(f"mapping.{section}: an object of names, ours to theirs "
                              "(strings)")
        for ours in names:
            if ours not in known:
                raise SourceError(f"mapping.{section}: unknown name {ours!r} (docs/otel.md "
                                  "lists the names read)")


@dataclass(frozen=True, slots=True)
class _Names:
    """A mapping turned around: their names to ours."""

    run_span: str
    events: dict[str, str]
    attributes: dict[str, str]
    detail: str  # their prefix of a trace event's detail

    @property
    def ours(self) -> bool:
        """True when every attribute has our name."""
        return not self.attributes and self.detail == TRACE_ATTRIBUTES["detail"]

    @classmethod
    def of(cls, mapping: Mapping[str, Any] | None) -> _Names:
        """The names of ``mapping`` (checked; None: ours)."""
        given = mapping or {}
        check_otlp_mapping(given)
        attributes = dict(given.get("attributes", {}))
        detail = attributes.pop(TRACE_ATTRIBUTES["detail"], TRACE_ATTRIBUTES["detail"])
        return cls(str(given.get("run_span", ROOT_NAME)),
                   {theirs: ours for ours, theirs in given.get("events", {}).items()},
                   {theirs: ours for ours, theirs in attributes.items()}, detail)

    def attribute(self, key: str) -> str:
        """Our name of their attribute ``key``."""
        ours = self.attributes.get(key)
        if ours is not None:
            return ours
        if self.detail != TRACE_ATTRIBUTES["detail"] and key.startswith(self.detail):
            return TRACE_ATTRIBUTES["detail"] + key[len(self.detail):]
        return key


@dataclass(slots=True)
class _Span:
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

    def same(self, other: _Span) -> bool:
        """True when ``other`` is this span again, wherever it was read."""
        return (self.parent, self.name, self.start, self.end, self.attributes, self.events,
                self.error) == (other.parent, other.name, other.start, other.end,
                                other.attributes, other.events, other.error)


class _Reader:
    """Reads the spans of one file, trace by trace."""

    def __init__(self, path: Path, names: _Names) -> None:
        self.path = path
        self.names = names
        self.traces: dict[str, dict[str, _Span]] = {}
        self.owners: dict[str, dict[str, str | None]] = {}

    def request(self, data: Any, line: int | None) -> None:
        """Take the spans of one ``ExportTraceServiceRequest``."""
        at = f"{line}: " if line is not None else " "
        if not isinstance(data, dict):
            raise SourceError(f"{self.path}:{at}not an ExportTraceServiceRequest (an object "
                              "with resourceSpans)")
        for i, resource in enumerate(self.items(data, "resourceSpans", at)):
            for j, scope in enumerate(self.items(resource, "scopeSpans",
                                                 f"{at}resourceSpans[{i}].")):
                where = f"{at}resourceSpans[{i}].scopeSpans[{j}]."
                for k, span in enumerate(self.items(scope, "spans", where)):
                    self.span(span, f"{where}spans[{k}]")

    def items(self, data: Any, key: str, where: str) -> list[Any]:
        """The list under ``key`` of the object ``data`` (empty when absent)."""
        if not isinstance(data, dict):
            raise SourceError(f"{self.path}:{where.rstrip('.')}: not an object")
        value = data.get(key, [])
        if not isinstance(value, list):
            raise SourceError(f"{self.path}:{where}{key}: not a list")
        return value

    def span(self, data: Any, where: str) -> None:
        """Check one span and keep it in its trace."""
        if not isinstance(data, dict):
            raise SourceError(f"{self.path}:{where}: not an object")
        trace = _hex(self, data.get("traceId"), 32, f"{where}.traceId")
        span_id = _hex(self, data.get("spanId"), 16, f"{where}.spanId")
        parent = data.get("parentSpanId") or None
        if parent is not None:
            parent = _hex(self, parent, 16, f"{where}.parentSpanId")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise SourceError(f"{self.path}:{where}.name: not a string")
        start = _nanos(self, data.get("startTimeUnixNano", "0"), f"{where}.startTimeUnixNano")
        end = _nanos(self, data.get("endTimeUnixNano", "0"), f"{where}.endTimeUnixNano")
        if end < start:
            raise SourceError(f"{self.path}:{where}.endTimeUnixNano: {end} is before the "
                              f"span's start {start}")
        keep = _RUN_KEYS if name == self.names.run_span else _SPAN_KEYS
        span = _Span(where, span_id, parent, name, start, end, {
            k: v for k, v in self.attributes(data, where).items() if k in keep})
        for n, event in enumerate(self.items(data, "events", f"{where}.")):
            at = f"{where}.events[{n}]"
            if not isinstance(event, dict):
                raise SourceError(f"{self.path}:{at}: not an object")
            event_name = event.get("name", "")
            if not isinstance(event_name, str):
                raise SourceError(f"{self.path}:{at}.name: not a string")
            ours = self.names.events.get(event_name, event_name)
            time = _nanos(self, event.get("timeUnixNano", "0"), f"{at}.timeUnixNano")
            attrs = self.attributes(event, at)
            if TRACE_ATTRIBUTES["seq"] in attrs:  # only what the rows are made of is kept
                span.events.append((ours, time, {k: v for k, v in attrs.items()
                                                 if k in _TRACE_KEYS or k.startswith(_DETAIL)}))
            elif ours in _SSE_NAMES:
                span.events.append((ours, time, {k: v for k, v in attrs.items()
                                                 if k in _SSE_KEYS}))
        status = data.get("status")
        status = {} if status is None else status
        if not isinstance(status, dict):
            raise SourceError(f"{self.path}:{where}.status: not an object")
        if status.get("code") in (2, "STATUS_CODE_ERROR"):
            span.error = str(status.get("message") or "")
        spans = self.traces.setdefault(trace, {})
        first = spans.get(span_id)
        if first is not None:
            if first.same(span):  # sent again (delivery is at least once): one span
                return
            raise SourceError(f"{self.path}:{where}.spanId: span {span_id} of trace {trace} "
                              f"appears twice, differently (first at {first.where})")
        if len(spans) >= MAX_TRACE_SPANS:
            raise SourceError(f"{self.path}:{where}: trace {trace} holds more than "
                              f"{MAX_TRACE_SPANS:,} spans, more than this toolkit reads")
        spans[span_id] = span

    def attributes(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        """The ``attributes`` of a span or event, by our names."""
        found: dict[str, Any] = {}
        rename = None if self.names.ours else self.names.attribute
        items = data.get("attributes")
        if items is None:
            return found
        if type(items) is not list:
            raise SourceError(f"{self.path}:{where}.attributes: not a list")
        for n, item in enumerate(items):
            key = item.get("key") if type(item) is dict else None
            if type(key) is not str:
                raise SourceError(f"{self.path}:{where}.attributes[{n}]: not a key and value")
            given = item.get("value", {})
            text = given.get("stringValue") if type(given) is dict and len(given) == 1 else None
            value = text if type(text) is str else _any(
                self, given, f"{where}.attributes[{n}].value")
            if value is not None:
                found[key if rename is None else rename(key)] = value
        return found

    def checked(self) -> int:
        """Check every trace's parents and find its runs; how many runs there are."""
        for trace, spans in self.traces.items():
            _check_parents(self.path, trace, spans)
            owner = _owners(spans, self.names.run_span)
            self.owners[trace] = owner
        return sum(1 for owner in self.owners.values() for span, run in owner.items()
                   if span == run)

    def runs(self) -> Iterator[RunRows]:
        """Each run span's rows (once :meth:`checked`), trace by trace, in the order the
        traces first appear; a trace's spans are let go once its rows are made."""
        for trace in list(self.traces):
            spans, owner = self.traces.pop(trace), self.owners.pop(trace)
            for span_id, span in spans.items():
                if owner.get(span_id) == span_id:
                    members = [s for sid, s in spans.items() if owner.get(sid) == span_id]
                    yield _rows(trace, span, members)


def _hex(reader: _Reader, value: Any, digits: int, where: str) -> str:
    """An id of ``digits`` hex digits, not all zero, in lowercase."""
    if not isinstance(value, str) or len(value) != digits or not _HEX.match(value) \
            or not value.strip("0"):
        shown = repr(value)[:60]
        raise SourceError(f"{reader.path}:{where}: {shown} is not an id of {digits} hex digits "
                          "(not all zero)")
    return value.lower()


def _nanos(reader: _Reader, value: Any, where: str) -> int:
    """A time in Unix nanoseconds: an unsigned 64-bit integer, as a string or a number."""
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        number = int(value)
    elif type(value) is int:
        number = value
    else:
        raise SourceError(f"{reader.path}:{where}: {repr(value)[:60]} is not a time in "
                          "nanoseconds (a whole number as a string)")
    if not 0 <= number <= _UINT64:
        raise SourceError(f"{reader.path}:{where}: {value} is outside the unsigned 64-bit "
                          "range")
    return number


def _any(reader: _Reader, value: Any, where: str) -> Any:
    """An OTLP ``AnyValue`` as a plain value (None when it holds none)."""
    if not isinstance(value, dict):
        raise SourceError(f"{reader.path}:{where}: not an AnyValue object")
    kind = next((k for k in _ANY_KINDS if k in value), None)
    if kind is None:
        return None
    given = value[kind]
    if kind in ("stringValue", "bytesValue") and isinstance(given, str):
        return given
    if kind == "boolValue" and isinstance(given, bool):
        return given
    if kind == "intValue":
        return _int(reader, given, f"{where}.intValue")
    if kind == "doubleValue" and type(given) in (int, float):
        return float(given)
    if kind == "doubleValue" and isinstance(given, str) and given in _DOUBLES:
        return _DOUBLES[given]
    items = given.get("values", []) if isinstance(given, dict) else None
    if kind == "arrayValue" and isinstance(items, list):
        return [_any(reader, v, f"{where}.arrayValue.values[{n}]")
                for n, v in enumerate(items)]
    if kind == "kvlistValue" and isinstance(items, list) and all(
            isinstance(p, dict) and isinstance(p.get("key"), str) for p in items):
        return {p["key"]: _any(reader, p.get("value", {}), f"{where}.kvlistValue.values[{n}]")
                for n, p in enumerate(items)}
    raise SourceError(f"{reader.path}:{where}.{kind}: {repr(given)[:60]} is not a valid "
                      f"{kind}")


def _int(reader: _Reader, value: Any, where: str) -> int:
    """A 64-bit integer, as a string or a number."""
    text = value.strip() if isinstance(value, str) else None
    if type(value) is int:
        number = value
    elif text is not None and text.lstrip("-").isdigit() and len(text) <= 20:
        number = int(text)
    else:
        raise SourceError(f"{reader.path}:{where}: {repr(value)[:60]} is not a 64-bit "
                          "integer")
    if not INT_MIN <= number <= INT_MAX:
        raise SourceError(f"{reader.path}:{where}: {str(value)[:40]} is outside the signed "
                          "64-bit range")
    return number


def _check_parents(path: Path, trace: str, spans: dict[str, _Span]) -> None:
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


def _owners(spans: dict[str, _Span], run_span: str) -> dict[str, str | None]:
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


def _rows(trace: str, run: _Span, members: list[_Span]) -> RunRows:
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
    rows = RunRows(row)
    detail = TRACE_ATTRIBUTES["detail"]
    for span in members:
        for name, at, event in span.events:
            if TRACE_ATTRIBUTES["seq"] in event:
                rows.trace.append(
                    {"run_id": run_id, "seq": event[TRACE_ATTRIBUTES["seq"]], "t": seconds(at),
                     "type": name} | {column: event[key] for column, key in
                                      TRACE_ATTRIBUTES.items() if key in event and key != detail}
                    | {"detail": {k[len(detail):]: v for k, v in event.items()
                                  if k.startswith(detail)}})
            elif name in _SSE_NAMES:
                if rows.sse is None:
                    rows.sse = []
                rows.sse.append({"run_id": run_id, "seq": event.get(SSE_ATTRIBUTES["seq"]),
                                 "t": seconds(at), "kind": _SSE_NAMES[name],
                                 "data": {data: event[key] for data, key in
                                          SSE_ATTRIBUTES.items()
                                          if key in event and data != "seq"}})
        if INVOCATION_ATTRIBUTES["invocation_id"] in span.attributes:
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


def _invocation(run_id: str, seq: int, span: _Span, start: float, end: float
                ) -> dict[str, Any]:
    """A tool span as its ``tool_invocation`` row (the order of the spans is the seq)."""
    attrs = span.attributes
    row = {column: attrs.get(key) for column, key in INVOCATION_ATTRIBUTES.items()}
    unfinished = row.pop("unfinished")
    return row | {"run_id": run_id, "seq": seq, "error": span.error, "started_at": start,
                  "finished_at": None if unfinished else end}


def read_otlp(path: str | Path, mapping: Mapping[str, Any] | None = None) -> list[RunRows]:
    """The runs of an OTLP JSON file, each run span's rows in the order the traces first
    appear; ``mapping`` (:func:`check_otlp_mapping`) names another harness's names. Raise
    :class:`SourceError` naming the file, line and field of anything OTLP does not allow."""
    return list(iter_otlp(path, mapping)[1])


def iter_otlp(path: str | Path, mapping: Mapping[str, Any] | None = None
              ) -> tuple[int, Iterator[RunRows]]:
    """How many runs an OTLP JSON file holds, and their rows as :func:`read_otlp` gives them,
    each made when it is reached (the spans are read and checked before this returns)."""
    where = Path(path)
    reader = _Reader(where, _Names.of(mapping))
    collecting = gc.isenabled()
    gc.disable()  # the spans form no cycle; collecting as they pile up costs a quarter
    try:
        _read(where, reader)
        return reader.checked(), reader.runs()
    finally:
        if collecting:
            gc.enable()


def _read(where: Path, reader: _Reader) -> None:
    """Read the spans of the file ``where``: one request a line, or one in all."""
    lines = json_lines(where)
    first = next(lines, None)
    if first is None:
        return
    try:
        data = parse_line(first[1], source=str(where), line=first[0])
    except JsonInputError as exc:
        if not exc.message.startswith("not JSON"):
            raise SourceError(str(exc)) from None
        reader.request(_document(where), None)  # one request spread over lines
        return
    reader.request(data, first[0])
    for number, text in lines:
        try:
            reader.request(parse_line(text, source=str(where), line=number), number)
        except JsonInputError as exc:
            raise SourceError(str(exc)) from None


def _document(path: Path) -> Any:
    """The file as one JSON document, within the bounded reader's size."""
    try:
        size = os.stat(path).st_size
        if size > MAX_JSON_BYTES:
            raise SourceError(f"{path}: its first line is not JSON and the whole file, "
                              f"{size:,} bytes, is more than the {MAX_JSON_BYTES:,} read as "
                              "one document")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return parse_line(text, source=str(path))
    except JsonInputError as exc:
        raise SourceError(str(exc)) from None
