"""OpenTelemetry export of finished runs: one OTLP trace per run.

:func:`export_records` sends any records (simulated, reopened from a log, served live) to
an OTLP endpoint or to an OpenTelemetry span exporter; :func:`write_otlp_json` writes them
as OTLP JSON (the Collector file exporter's format) without the SDK; :func:`plan_run` is the
span tree of one record as plain values, without OpenTelemetry. ``docs/otel.md`` draws the
tree, lists the attributes and states where virtual time lands on the time line
(:func:`epoch_of`).

:class:`BackgroundExport` sends runs as they finish, from a thread of its own (``serve``,
the pytest plugin).

Nothing here is imported unless asked for, and only :mod:`harness_lab.otel.export`,
:mod:`harness_lab.otel.background` and :mod:`harness_lab.otel.spans` import the
OpenTelemetry SDK (the ``otel`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
    from harness_lab.otel.background import BackgroundExport, BackgroundSummary
    from harness_lab.otel.clock import DEFAULT_EPOCH, epoch_of
    from harness_lab.otel.endpoint import endpoint_problem, traces_url
    from harness_lab.otel.export import ExportSummary, OtlpExportError, export_records
    from harness_lab.otel.otlp_json import WrittenOtlp, write_otlp_json
    from harness_lab.otel.plan import PlannedEvent, PlannedSpan, plan_run

_EXPORTS = {
    "BackgroundExport": "harness_lab.otel.background",
    "BackgroundSummary": "harness_lab.otel.background",
    "DEFAULT_EPOCH": "harness_lab.otel.clock", "ExportSummary": "harness_lab.otel.export",
    "OtlpExportError": "harness_lab.otel.export", "PlannedEvent": "harness_lab.otel.plan",
    "PlannedSpan": "harness_lab.otel.plan", "endpoint_problem": "harness_lab.otel.endpoint",
    "epoch_of": "harness_lab.otel.clock", "export_records": "harness_lab.otel.export",
    "plan_run": "harness_lab.otel.plan", "traces_url": "harness_lab.otel.endpoint",
    "WrittenOtlp": "harness_lab.otel.otlp_json", "write_otlp_json": "harness_lab.otel.otlp_json",
}

__all__ = ["BackgroundExport", "BackgroundSummary", "DEFAULT_EPOCH", "ExportSummary",
           "OtlpExportError", "PlannedEvent", "PlannedSpan", "WrittenOtlp", "endpoint_problem",
           "epoch_of", "export_records", "plan_run", "traces_url", "write_otlp_json"]


__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)
