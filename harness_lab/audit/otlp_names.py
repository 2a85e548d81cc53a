"""The names an OTLP trace is read by: the attributes, span events and span each audit row
is made of (``docs/otel.md`` tabulates them), and a mapping of another harness's names for
ours (:func:`check_otlp_mapping`, :class:`OtlpNames`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from harness_lab.audit.sources import MappingError
from harness_lab.otel.attributes import NAMESPACE, SSE_FIELDS
from harness_lab.otel.plan import ROOT_NAME
from harness_lab.states import SseEventKind, TraceEventType

__all__ = ["DETAIL", "EVENT_NAMES", "INVOCATION_ATTRIBUTES", "RESULT_ATTRIBUTES",
           "ROW_ATTRIBUTES", "RUN_KEYS", "SPAN_KEYS", "SSE_ATTRIBUTES", "SSE_KEYS", "SSE_NAMES",
           "TRACE_ATTRIBUTES", "TRACE_KEYS", "OtlpNames", "check_otlp_mapping"]

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

DETAIL: Final = TRACE_ATTRIBUTES["detail"]
"""The prefix of a trace event's detail attributes."""
SSE_NAMES: Final = {f"sse.{k.value}": k.value for k in SseEventKind}
"""The SSE events' span event names, with their kinds."""
SPAN_KEYS: Final = frozenset(INVOCATION_ATTRIBUTES.values())
"""The attributes kept of a span other than the run's."""
RUN_KEYS: Final = SPAN_KEYS | frozenset([*ROW_ATTRIBUTES.values(), *RESULT_ATTRIBUTES.values()])
"""The attributes kept of the run's span."""
TRACE_KEYS: Final = frozenset(TRACE_ATTRIBUTES.values())
"""The attributes kept of a trace event (and every one under :data:`DETAIL`)."""
SSE_KEYS: Final = frozenset(SSE_ATTRIBUTES.values())
"""The attributes kept of an SSE event."""
_KNOWN_ATTRIBUTES: Final = RUN_KEYS | TRACE_KEYS | SSE_KEYS


def check_otlp_mapping(mapping: Mapping[str, Any]) -> None:
    """Raise :class:`~harness_lab.audit.sources.MappingError` naming what is wrong with an
    OTLP mapping: ``{"run_span": NAME, "events": {OURS: THEIRS}, "attributes": {OURS:
    THEIRS}}``, ours being names this reader knows (``harness_lab.detail.`` maps a prefix)."""
    if not isinstance(mapping, Mapping):
        raise MappingError("the mapping must be an object")
    for key in mapping:
        if key not in ("run_span", "events", "attributes"):
            raise MappingError(f"mapping: unknown key {key!r} (run_span, events, attributes)")
    if not isinstance(mapping.get("run_span", ROOT_NAME), str):
        raise MappingError("mapping.run_span: the name of the run's span (a string)")
    for section, known in (("events", EVENT_NAMES), ("attributes", _KNOWN_ATTRIBUTES)):
        names = mapping.get(section, {})
        if not isinstance(names, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise MappingError(f"mapping.{section}: an object of names, ours to theirs "
                              "(strings)")
        for ours in names:
            if ours not in known:
                raise MappingError(f"mapping.{section}: unknown name {ours!r} (docs/otel.md "
                                  "lists the names read)")


@dataclass(frozen=True, slots=True)
class OtlpNames:
    """A mapping turned around: their names to ours."""

    run_span: str
    events: dict[str, str]
    attributes: dict[str, str]
    detail: str  # their prefix of a trace event's detail

    @property
    def ours(self) -> bool:
        """True when every attribute has our name."""
        return not self.attributes and self.detail == DETAIL

    @classmethod
    def of(cls, mapping: Mapping[str, Any] | None) -> OtlpNames:
        """The names of ``mapping`` (checked; None: ours)."""
        given = mapping or {}
        check_otlp_mapping(given)
        attributes = dict(given.get("attributes", {}))
        detail = attributes.pop(DETAIL, DETAIL)
        return cls(str(given.get("run_span", ROOT_NAME)),
                   {theirs: ours for ours, theirs in given.get("events", {}).items()},
                   {theirs: ours for ours, theirs in attributes.items()}, detail)

    def attribute(self, key: str) -> str:
        """Our name of their attribute ``key``."""
        ours = self.attributes.get(key)
        if ours is not None:
            return ours
        if self.detail != DETAIL and key.startswith(self.detail):
            return DETAIL + key[len(self.detail):]
        return key
