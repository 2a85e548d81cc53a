"""Span and event attributes from a record's parts: the GenAI semantic conventions' names
where they define one, the harness's own under the ``harness_lab.`` namespace.

An OpenTelemetry attribute holds a string, a boolean, a number (an integer of 64 bits) or a
list of one of those; :func:`attribute` turns any other JSON-ready value (a mapping, a mixed
list) into JSON text, a wider integer into its digits, and drops ``None``, so every part of
a record can be carried as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from harness_lab.bounds import INT_MAX, INT_MIN

if TYPE_CHECKING:
    from harness_lab.record import RunRecord
    from harness_lab.sse import SseEvent
    from harness_lab.tools.records import CanonicalInvocation
    from harness_lab.trace import TraceEvent

__all__ = ["NAMESPACE", "SSE_FIELDS", "AttributeValue", "Attributes", "attribute", "attributes",
           "detail_attributes", "invocation_attributes", "result_attributes", "run_attributes",
           "sse_attributes", "trace_event_attributes"]

Scalar: TypeAlias = str | bool | int | float
AttributeValue: TypeAlias = Scalar | tuple[str, ...] | tuple[bool, ...] | tuple[int, ...] | \
    tuple[float, ...]
Attributes: TypeAlias = dict[str, AttributeValue]

NAMESPACE: Final = "harness_lab"
"""The prefix of every attribute the GenAI conventions do not define."""

SSE_FIELDS: Final = {"status": "status", "outcome": "outcome", "code": "code",
                     "contentType": "content_type", "fallbackType": "fallback_type",
                     "sessionId": "session_id", "runId": "run_id"}
"""The fields of an SSE event's data an event carries (protocol fields and the identity a
result names, never the report's text, which like every message content is left out), with
their attribute names."""


_SECONDS: Final = ("started_at", "finished_at", "duration_s")


def attribute(value: Any) -> AttributeValue | None:
    """``value`` as an attribute value, or None for a ``None`` (which OpenTelemetry drops)."""
    if value is None:
        return None
    if isinstance(value, Enum):
        return attribute(value.value)
    if isinstance(value, int) and not isinstance(value, bool) and not (
            INT_MIN <= value <= INT_MAX):
        return str(value)  # OTLP's intValue is 64-bit; a run's usage may sum past it
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Sequence):
        items = [v.value if isinstance(v, Enum) else v for v in value]
        kinds = {type(v) for v in items}
        if len(kinds) == 1 and kinds <= {str, bool, int, float} and (
                kinds != {int} or INT_MIN <= min(items) <= max(items) <= INT_MAX):
            return tuple(items)
        if not items:
            return ()
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def attributes(pairs: Iterable[tuple[str, Any]]) -> Attributes:
    """The pairs whose value is not None, as attributes."""
    out: Attributes = {}
    for key, value in pairs:
        converted = attribute(value)
        if converted is not None:
            out[key] = converted
    return out


def detail_attributes(detail: Mapping[str, Any]) -> Attributes:
    """A trace event's ``detail`` as ``harness_lab.detail.KEY`` attributes."""
    return attributes((f"{NAMESPACE}.detail.{key}", value) for key, value in detail.items())


def trace_event_attributes(e: TraceEvent) -> Attributes:
    """A trace event's span-event attributes: its sequence number, status and phase, and its
    detail (the event's type is the span event's name)."""
    return attributes([(f"{NAMESPACE}.trace.seq", e.seq),
                       (f"{NAMESPACE}.trace.status", e.status.value),
                       (f"{NAMESPACE}.trace.phase", e.phase.value)]) | detail_attributes(e.detail)


def result_attributes(record: RunRecord) -> Attributes:
    """The shape of what the run published or failed with, never its text: the content
    type, the fallback type, whether it holds a conclusion, the invocations its evidence
    names and those its findings and facts cite; and whether the stored row holds a
    published result. The audit of a trace checks the invariants that read them."""
    result = record.content if record.content is not None else record.failure
    prefix = f"{NAMESPACE}.result"
    pairs: list[tuple[str, Any]] = [
        (f"{NAMESPACE}.published_result",
         (record.stored_row or {}).get("published_result") is not None)]
    if isinstance(result, Mapping):
        cited = [c for fact in [*result.get("findings", ()), *result.get("facts", ())]
                 if isinstance(fact, Mapping) for c in fact.get("citations", ())]
        pairs += [(f"{prefix}.content_type", result.get("contentType")),
                  (f"{prefix}.fallback_type", result.get("fallbackType")),
                  (f"{prefix}.conclusion", "conclusion" in result),
                  (f"{prefix}.evidence", tuple(ref.get("invocation_id")
                                               for ref in result.get("evidence", ())
                                               if isinstance(ref, Mapping)
                                               and isinstance(ref.get("invocation_id"), str))),
                  (f"{prefix}.citations", tuple(c for c in cited if isinstance(c, str)))]
    return attributes(pairs)


def run_attributes(record: RunRecord, scenario: str | None = None) -> Attributes:
    """The root span's attributes: every state axis, count, usage figure and time of the
    record's summary row (``harness_lab.COLUMN``), what the summary row leaves out, and the
    session as the GenAI conversation."""
    row = record.summary()
    for key in _SECONDS:  # a clock starts at the int 0: keep one type per attribute
        row[key] = float(row[key])
    pairs: list[tuple[str, Any]] = [(f"{NAMESPACE}.{key}", value) for key, value in row.items()]
    pairs += [
        (f"{NAMESPACE}.scenario", scenario),
        (f"{NAMESPACE}.statuses", record.statuses),
        (f"{NAMESPACE}.sse_refused", record.sse_refused),
        (f"{NAMESPACE}.stop_required_delivered", record.stop_required_delivered),
        (f"{NAMESPACE}.evidence_repaired", record.evidence_repaired),
        (f"{NAMESPACE}.deadline_at", float(record.deadline_at)),
        (f"{NAMESPACE}.draft_error", record.draft_error),
        ("gen_ai.conversation.id", record.session_id),
    ]
    return attributes(pairs) | result_attributes(record)


def invocation_attributes(invocation: CanonicalInvocation) -> Attributes:
    """An ``execute_tool`` span's attributes: the GenAI tool names and the canonical record."""
    prefix = f"{NAMESPACE}.invocation"
    return attributes([
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", invocation.tool),
        ("gen_ai.tool.type", "function"),
        ("gen_ai.tool.call.id", invocation.call_id),
        (f"{prefix}.id", invocation.invocation_id),
        (f"{prefix}.status", invocation.status),
        (f"{prefix}.evidence_status", invocation.evidence_status),
        (f"{prefix}.error_code", invocation.error_code),
        (f"{prefix}.items", invocation.items),
        (f"{prefix}.bytes", invocation.size_bytes),
        (f"{prefix}.information_gain", invocation.information_gain),
        (f"{prefix}.scope", invocation.normalized_scope),
        ("error.type", invocation.error_code),
    ])


def sse_attributes(event: SseEvent) -> Attributes:
    """An SSE event's span-event attributes: its sequence number and protocol fields."""
    prefix = f"{NAMESPACE}.sse"
    return attributes([(f"{prefix}.seq", event.seq)] + [
        (f"{prefix}.{name}", event.data.get(field)) for field, name in SSE_FIELDS.items()])
