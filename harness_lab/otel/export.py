"""Export finished runs as OTLP spans: one trace per run (:func:`export_records`).

Any iterable of :class:`~harness_lab.record.RunRecord` will do: runs just simulated (a
``ResultSet``'s records, ``sweep --records-out``, a pytest run's), runs reopened from a log,
runs a live ``serve`` stored. The spans go to an OpenTelemetry ``SpanExporter`` of the
caller's, or to the OTLP/HTTP exporter for ``endpoint``. Importing this module imports the
OpenTelemetry SDK (the ``otel`` extra); nothing else in the toolkit imports it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from harness_lab.errors import HarnessError
from harness_lab.otel.clock import epoch_of, nanoseconds
from harness_lab.otel.ids import run_seed
from harness_lab.otel.plan import plan_run
from harness_lab.otel.spans import Collector, PlannedIds, emit_run
from harness_lab.redact import shown_url
from harness_lab.version import __version__

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

    from harness_lab.record import RunRecord

__all__ = ["BATCH_SPANS", "SERVICE_NAME", "ExportSummary", "OtlpExportError", "export_records",
           "export_runs", "otlp_exporter"]

SERVICE_NAME = "harness_lab"
"""The resource's ``service.name``, unless ``OTEL_SERVICE_NAME`` names another."""
BATCH_SPANS = 512
"""Spans sent in one export call (one OTLP request) at most."""


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What one export sent: runs (traces), spans, and export calls (OTLP requests)."""

    runs: int
    spans: int
    batches: int


class OtlpExportError(HarnessError):
    """The exporter could not send a batch (refused, or unreachable past its retries);
    ``sent`` spans went out before it, ``lost`` did not."""

    def __init__(self, target: str, sent: int, lost: int) -> None:
        self.target, self.sent, self.lost = target, sent, lost
        super().__init__(f"could not send {lost:,} span(s) to {shown_url(target)} ({sent:,} sent "
                         "before them)")


def export_records(records: Iterable[RunRecord], *, endpoint: str | None = None,
                   exporter: SpanExporter | None = None, epoch: float | None = None,
                   scenarios: Sequence[str | None] | None = None) -> ExportSummary:
    """Send each record's spans to ``exporter``, or to an OTLP/HTTP exporter for
    ``endpoint`` (None: the exporter's own default, ``OTEL_EXPORTER_OTLP_*`` variables
    first), which is shut down at the end; a caller's exporter is left open.

    ``epoch`` is the Unix time of virtual second 0 for every record (None: each record's
    own, :func:`~harness_lab.otel.clock.epoch_of`); ``scenarios``, one per record, names the
    scenario each played. Raise :class:`OtlpExportError` when a batch cannot be sent.
    """
    owned = exporter is None
    if exporter is None:
        exporter = otlp_exporter(endpoint)
    target = (endpoint or "the OTLP default endpoint") if owned else type(exporter).__name__
    names: Iterable[str | None] = scenarios if scenarios is not None else _nones()
    runs = ((record, scenario, epoch)
            for record, scenario in zip(records, names, strict=scenarios is not None))
    # an exporter made here says nothing of its own (a line per retry of every batch, then
    # one giving up): the OtlpExportError raised says what was not sent, once
    logger = logging.getLogger(type(exporter).__module__)
    if owned:
        logger.addFilter(_silent)
    try:
        return export_runs(runs, exporter, target)
    finally:
        if owned:
            exporter.shutdown()
            logger.removeFilter(_silent)


def _silent(record: logging.LogRecord) -> bool:
    """A logging filter that drops every record."""
    return False


def otlp_exporter(endpoint: str | None) -> SpanExporter:
    """The OTLP/HTTP (protobuf) span exporter for ``endpoint`` (None: the exporter's own
    default, ``OTEL_EXPORTER_OTLP_*`` variables first)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint)


def export_runs(runs: Iterable[tuple[RunRecord, str | None, float | None]],
                exporter: SpanExporter, target: str) -> ExportSummary:
    """Send the spans of each ``(record, scenario, epoch)`` to ``exporter`` (left open), in
    batches of at most :data:`BATCH_SPANS`; ``target`` names it in an
    :class:`OtlpExportError`. The rules of :func:`export_records`, each run with its own
    scenario name and epoch."""
    ids, collector = PlannedIds(), Collector()
    provider = TracerProvider(sampler=ALWAYS_ON, resource=_resource(), id_generator=ids,
                              shutdown_on_exit=False)
    provider.add_span_processor(collector)
    tracer = provider.get_tracer("harness_lab.otel", __version__)
    count = spans = batches = 0
    try:
        for record, scenario, epoch in runs:
            at = epoch_of(record, epoch)
            ids.start_run(run_seed(record, nanoseconds(at, 0.0), scenario))
            emit_run(tracer, plan_run(record, scenario), at)
            count += 1
            if len(collector.spans) >= BATCH_SPANS:
                spans += _send(exporter, collector.take(), target, spans)
                batches += 1
        if collector.spans:
            spans += _send(exporter, collector.take(), target, spans)
            batches += 1
    finally:
        provider.shutdown()
    return ExportSummary(count, spans, batches)


def _send(exporter: SpanExporter, batch: list[ReadableSpan], target: str, sent: int) -> int:
    if exporter.export(batch) is not SpanExportResult.SUCCESS:
        raise OtlpExportError(target, sent, len(batch))
    return len(batch)


def _resource() -> Resource:
    attributes = {"service.version": __version__}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = SERVICE_NAME
    return Resource.create(attributes)


def _nones() -> Iterable[None]:
    while True:
        yield None
