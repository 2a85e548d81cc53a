"""OTLP JSON as an audit source: traces in the OpenTelemetry Collector file exporter's format
(JSON Lines, each line one ``ExportTraceServiceRequest``), or one such request as a JSON
document, read back into the rows of each run (:func:`read_otlp`).

A run is a span named ``harness_lab.run`` with every span under it. Its attributes give the
``diagnosis_run`` row, each span event carrying ``harness_lab.trace.seq`` is a trace event
(named by its type), each span carrying ``harness_lab.invocation.id`` a tool invocation, and
each ``sse.KIND`` event an SSE event: what :func:`harness_lab.otel.write_otlp_json` and the
OTLP export write (``docs/otel.md`` tabulates it; :mod:`harness_lab.audit.otlp_rows` makes
the rows). A mapping (:mod:`harness_lab.audit.otlp_names`) names another harness's span,
event and attribute names for ours.

Every line goes through the bounded JSON reader; a span whose ids, times or values are not
what OTLP allows, whose parent is not in its trace, whose parents form a cycle, or a trace of
more than :data:`MAX_TRACE_SPANS` spans is refused naming the file, the line and the field.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from harness_lab.audit.otlp_names import (
    DETAIL,
    RUN_KEYS,
    SPAN_KEYS,
    SSE_KEYS,
    SSE_NAMES,
    TRACE_ATTRIBUTES,
    TRACE_KEYS,
    OtlpNames,
)
from harness_lab.audit.otlp_rows import TracedSpan, check_parents, owners, run_rows
from harness_lab.audit.rebuild import parse_line
from harness_lab.audit.sources import RunRows, SourceError, json_lines, json_value, reading
from harness_lab.bounded_json import MAX_JSON_BYTES, JsonInputError
from harness_lab.bounds import INT_MAX, INT_MIN

__all__ = ["MAX_TRACE_SPANS", "OTLP_SUFFIXES", "is_otlp_file", "iter_otlp", "read_otlp"]

MAX_TRACE_SPANS: Final = 100_000
"""Spans one trace may hold (a run of the scenario library has 15 at most)."""
OTLP_SUFFIXES: Final = (".otlp.json", ".otlp.jsonl", ".otlp")
"""File names read as OTLP JSON whatever they hold (others are told by their first bytes)."""

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


class _Reader:
    """Reads the spans of one file, trace by trace."""

    def __init__(self, path: Path, names: OtlpNames) -> None:
        self.path = path
        self.names = names
        self.traces: dict[str, dict[str, TracedSpan]] = {}
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
        keep = RUN_KEYS if name == self.names.run_span else SPAN_KEYS
        span = TracedSpan(where, span_id, parent, name, start, end, {
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
                                                 if k in TRACE_KEYS or k.startswith(DETAIL)}))
            elif ours in SSE_NAMES:
                span.events.append((ours, time, {k: v for k, v in attrs.items() if k in SSE_KEYS}))
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
            check_parents(self.path, trace, spans)
            self.owners[trace] = owners(spans, self.names.run_span)
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
                    rows = run_rows(trace, span, members)
                    rows.source = str(self.path)
                    yield rows


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
        raise SourceError(f"{reader.path}:{where}: {value} is outside the unsigned 64-bit range")
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
        return [_any(reader, v, f"{where}.arrayValue.values[{n}]") for n, v in enumerate(items)]
    if kind == "kvlistValue" and isinstance(items, list) and all(
            isinstance(p, dict) and isinstance(p.get("key"), str) for p in items):
        return {p["key"]: _any(reader, p.get("value", {}), f"{where}.kvlistValue.values[{n}]")
                for n, p in enumerate(items)}
    raise SourceError(f"{reader.path}:{where}.{kind}: {repr(given)[:60]} is not a valid {kind}")


def _int(reader: _Reader, value: Any, where: str) -> int:
    """A 64-bit integer, as a string or a number."""
    text = value.strip() if isinstance(value, str) else None
    if type(value) is int:
        number = value
    elif text is not None and text.lstrip("-").isdigit() and len(text) <= 20:
        number = int(text)
    else:
        raise SourceError(f"{reader.path}:{where}: {repr(value)[:60]} is not a 64-bit integer")
    if not INT_MIN <= number <= INT_MAX:
        raise SourceError(f"{reader.path}:{where}: {str(value)[:40]} is outside the signed "
                          "64-bit range")
    return number


def read_otlp(path: str | Path, mapping: Mapping[str, Any] | None = None) -> list[RunRows]:
    """The runs of an OTLP JSON file, each run span's rows in the order the traces first
    appear; ``mapping`` (:func:`~harness_lab.audit.otlp_names.check_otlp_mapping`) names
    another harness's names. Raise :class:`SourceError` naming the file, line and field of
    anything OTLP does not allow."""
    return list(iter_otlp(path, mapping)[1])


def iter_otlp(path: str | Path, mapping: Mapping[str, Any] | None = None
              ) -> tuple[int, Iterator[RunRows]]:
    """How many runs an OTLP JSON file holds, and their rows as :func:`read_otlp` gives them,
    each made when it is reached (the spans are read and checked before this returns)."""
    where = Path(path)
    reader = _Reader(where, OtlpNames.of(mapping))
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
        reader.request(json_value(text, where, number), number)


def _document(path: Path) -> Any:
    """The file as one JSON document, within the bounded reader's size."""
    with reading(path):
        size = os.stat(path).st_size
        if size > MAX_JSON_BYTES:
            raise SourceError(f"{path}: its first line is not JSON and the whole file, "
                              f"{size:,} bytes, is more than the {MAX_JSON_BYTES:,} read as "
                              "one document")
        text = path.read_text(encoding="utf-8")
    return json_value(text, path)
