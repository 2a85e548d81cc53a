"""Finished runs written as OTLP JSON, in the OpenTelemetry Collector file exporter's format
(:func:`write_otlp_json`), without the OpenTelemetry SDK.

The file is JSON Lines: each line one ``ExportTraceServiceRequest`` in the OTLP/JSON
encoding (``resourceSpans`` -> ``scopeSpans`` -> ``spans``), here one line per run. As the
encoding asks, trace and span ids are lowercase hex (not base64), 64-bit integers
(``startTimeUnixNano``, an ``intValue``) are decimal strings, enum fields (a span's ``kind``,
a status ``code``) are integers, and empty fields are left out. A run's spans come from
:func:`~harness_lab.otel.plan.plan_run` with the ids and times of
:mod:`harness_lab.otel.ids` and :mod:`harness_lab.otel.clock`, handed out as the SDK hands
them out (the tree, parents first), so a run written here and the same run sent with
:func:`~harness_lab.otel.export.export_records` have the same ids.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness_lab.atomic import replacing
from harness_lab.otel.attributes import AttributeValue
from harness_lab.otel.clock import epoch_of, nanoseconds
from harness_lab.otel.ids import run_seed, span_ids, trace_id
from harness_lab.otel.plan import PlannedSpan, plan_run
from harness_lab.version import __version__

if TYPE_CHECKING:
    from harness_lab.record import RunRecord

__all__ = ["SCOPE_NAME", "SPAN_KINDS", "WrittenOtlp", "otlp_request", "write_otlp_json"]

SCOPE_NAME: Final = "harness_lab.otel"
"""The instrumentation scope of every span (the SDK export's tracer name)."""
SPAN_KINDS: Final = {"internal": 1, "client": 3}
"""OTLP's ``Span.SpanKind`` numbers of the planned kinds."""
_STATUS_ERROR: Final = 2  # Status.StatusCode STATUS_CODE_ERROR


@dataclass(frozen=True, slots=True)
class WrittenOtlp:
    """What :func:`write_otlp_json` wrote: runs (traces, one line each) and spans."""

    path: str
    runs: int
    spans: int


def _value(value: AttributeValue) -> dict[str, Any]:
    """An attribute value as an OTLP/JSON ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "NaN" if math.isnan(value) else
                "Infinity" if value > 0 else "-Infinity"}
    if isinstance(value, str):
        return {"stringValue": value}
    values = [_value(v) for v in value]
    return {"arrayValue": {"values": values} if values else {}}


def _attributes(attributes: dict[str, AttributeValue]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _spans(plan: PlannedSpan, trace: str, ids: Iterator[int], parent: str | None,
           epoch: float) -> Iterator[dict[str, Any]]:
    """The spans of ``plan``'s tree in the order the SDK creates them (parents first), each
    with the next span id."""
    span_id = f"{next(ids):016x}"
    span: dict[str, Any] = {"traceId": trace, "spanId": span_id}
    if parent is not None:
        span["parentSpanId"] = parent
    span |= {"name": plan.name, "kind": SPAN_KINDS[plan.kind],
             "startTimeUnixNano": str(nanoseconds(epoch, plan.start)),
             "endTimeUnixNano": str(nanoseconds(epoch, plan.end))}
    if plan.attributes:
        span["attributes"] = _attributes(plan.attributes)
    if plan.events:
        span["events"] = [{"timeUnixNano": str(nanoseconds(epoch, e.t)), "name": e.name,
                           **({"attributes": _attributes(e.attributes)}
                              if e.attributes else {})} for e in plan.events]
    span["status"] = ({} if plan.error is None
                      else {"message": plan.error, "code": _STATUS_ERROR})
    yield span
    for child in plan.children:
        yield from _spans(child, trace, ids, span_id, epoch)


def _resource() -> dict[str, Any]:
    """The resource the SDK export gives: ``service.name`` (``OTEL_SERVICE_NAME`` first) and
    ``service.version``."""
    name = os.environ.get("OTEL_SERVICE_NAME") or "harness_lab"
    return {"attributes": _attributes({"service.name": name, "service.version": __version__})}


def otlp_request(record: RunRecord, *, epoch: float | None = None,
                 scenario: str | None = None) -> dict[str, Any]:
    """One run as an ``ExportTraceServiceRequest`` in the OTLP/JSON encoding: its spans,
    virtual second 0 at ``epoch`` (None: :func:`~harness_lab.otel.clock.epoch_of`)."""
    at = epoch_of(record, epoch)
    seed = run_seed(record, nanoseconds(at, 0.0), scenario)
    spans = list(_spans(plan_run(record, scenario), f"{trace_id(seed):032x}",
                        span_ids(seed), None, at))
    return {"resourceSpans": [{"resource": _resource(), "scopeSpans": [{
        "scope": {"name": SCOPE_NAME, "version": __version__}, "spans": spans}]}]}


def write_otlp_json(records: Iterable[RunRecord], path: str | Path, *,
                    epoch: float | None = None,
                    scenarios: Sequence[str | None] | None = None) -> WrittenOtlp:
    """Write each record as one line of OTLP JSON to ``path`` (the Collector file exporter's
    format), atomically: the lines go to a temporary file beside ``path``, renamed over it
    once all are written, so ``path`` never holds part of an export. ``epoch`` and
    ``scenarios`` as for :func:`~harness_lab.otel.export.export_records`. Raise OSError when
    the file cannot be written (nothing is left behind then)."""
    target = Path(path)
    names: Iterable[str | None] = scenarios if scenarios is not None else repeat(None)
    runs = spans = 0
    with replacing(target) as f:
        for record, scenario in zip(records, names, strict=scenarios is not None):
            request = otlp_request(record, epoch=epoch, scenario=scenario)
            f.write(json.dumps(request, ensure_ascii=False, separators=(",", ":")))
            f.write("\n")
            runs += 1
            spans += len(request["resourceSpans"][0]["scopeSpans"][0]["spans"])
    return WrittenOtlp(str(path), runs, spans)
