"""A planned span tree made into OpenTelemetry SDK spans, with its own ids and times.

The spans are created through the SDK's tracer, as any instrumentation creates them, with
explicit start and end times (the run's virtual seconds placed at an epoch) and ids handed
out by :class:`PlannedIds` in the order the spans are created: the tree, parents first.
"""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from harness_lab.otel.clock import nanoseconds
from harness_lab.otel.ids import span_ids, trace_id
from harness_lab.otel.plan import PlannedSpan

__all__ = ["Collector", "PlannedIds", "emit_run"]

_KINDS = {"client": SpanKind.CLIENT, "internal": SpanKind.INTERNAL}


class PlannedIds(IdGenerator):
    """The ids of one run at a time: :meth:`start_run` loads a run's seed, then the tracer
    draws its trace id and one span id per span created."""

    def __init__(self) -> None:
        self._trace = 1
        self._spans: Iterator[int] = iter(())

    def start_run(self, seed: bytes) -> None:
        """Hand out the ids of the run whose seed is ``seed`` from now on."""
        self._trace = trace_id(seed)
        self._spans = span_ids(seed)

    def generate_trace_id(self) -> int:
        """The current run's trace id."""
        return self._trace

    def generate_span_id(self) -> int:
        """The current run's next span id."""
        return next(self._spans)

    def is_trace_id_random(self) -> bool:
        """False: a run's trace id is derived from the run, not drawn at random."""
        return False


class Collector(SpanProcessor):
    """Keeps every span that ends, for the exporter to take in batches."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        """Keep ``span``."""
        self.spans.append(span)

    def take(self) -> list[ReadableSpan]:
        """The spans kept so far, forgotten here."""
        taken, self.spans = self.spans, []
        return taken


def emit_run(tracer: trace_api.Tracer, plan: PlannedSpan, epoch: float) -> None:
    """Create and end the spans of ``plan`` (a run's root) with ``tracer``: a new trace,
    whatever span may be current in the caller, its times ``epoch`` + virtual seconds."""
    _emit(tracer, plan, Context(), epoch)


def _emit(tracer: trace_api.Tracer, plan: PlannedSpan, parent: Context, epoch: float) -> None:
    span = tracer.start_span(plan.name, context=parent, kind=_KINDS[plan.kind],
                             attributes=plan.attributes,
                             start_time=nanoseconds(epoch, plan.start))
    for event in plan.events:
        span.add_event(event.name, event.attributes, timestamp=nanoseconds(epoch, event.t))
    if plan.error is not None:
        span.set_status(Status(StatusCode.ERROR, plan.error))
    inside = trace_api.set_span_in_context(span, Context())
    for child in plan.children:
        _emit(tracer, child, inside, epoch)
    span.end(end_time=nanoseconds(epoch, plan.end))
