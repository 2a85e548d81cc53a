"""Runs queued as they finish and sent by a thread of their own: a run is never waited for,
a full queue drops runs and counts them, a receiver that cannot take them is said once, and
closing sends what is queued."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from harness_lab.otel.background import BackgroundExport, BackgroundSummary
from harness_lab.record import RunRecord
from tests.otel.conftest import Receiver, export, played

GUARDS_PASS = "outcomes/conclusion-guards-pass.yaml"  # one run, eleven spans


class Gate(SpanExporter):
    """An exporter that holds every export call until :attr:`opened` is set (shutting it
    down opens it), then answers ``result``; it keeps the batches it was given."""

    def __init__(self, result: SpanExportResult = SpanExportResult.SUCCESS) -> None:
        self.result = result
        self.opened = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[ReadableSpan]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.entered.set()
        self.opened.wait(60)
        self.batches.append(list(spans))
        return self.result

    def shutdown(self) -> None:
        self.opened.set()


def a_run() -> tuple[str, RunRecord]:
    ((name, record),) = played(GUARDS_PASS)
    return name, record


def test_each_run_submitted_reaches_the_receiver_as_one_trace(receiver: Receiver) -> None:
    name, record = a_run()
    exported = BackgroundExport(f"{receiver.url}/v1/traces")
    assert exported.submit(record, name, 1_800_000_000.0)
    assert exported.submit(record, name, 1_800_000_100.0)  # the same run placed elsewhere
    summary = exported.close()
    assert summary == BackgroundSummary(runs=2, spans=22, failed=0, dropped=0, abandoned=0)
    spans = [span for _, span in receiver.spans()]
    assert len(spans) == 22 and len({s.trace_id for s in spans}) == 2
    roots = sorted(s.start_time_unix_nano for s in spans if not s.parent_span_id)
    assert roots == [1_800_000_000 * 10**9, 1_800_000_100 * 10**9]


def test_the_spans_sent_are_those_of_a_direct_export() -> None:
    name, record = a_run()
    gate = Gate()
    gate.opened.set()
    exported = BackgroundExport(exporter=gate)
    exported.submit(record, name)
    exported.close()
    direct = export([(name, record)])
    sent = [s for batch in gate.batches for s in batch]
    assert sorted((s.name, s.context.span_id, s.start_time) for s in sent) == sorted(
        (s.name, s.context.span_id, s.start_time) for s in direct)


def test_submit_returns_while_an_export_is_under_way_and_the_runs_queued_go_together() -> None:
    name, record = a_run()
    gate = Gate()
    exported = BackgroundExport(exporter=gate)
    exported.submit(record, name, 1_800_000_000.0)
    assert gate.entered.wait(30)  # the thread is sending the first run and is held there
    for k in range(1, 4):  # each returns at once although nothing more can be sent
        assert exported.submit(record, name, 1_800_000_000.0 + k)
    gate.opened.set()
    assert exported.close().runs == 4
    assert [len(batch) for batch in gate.batches] == [11, 33]  # one call, then three runs


def test_a_run_that_finds_the_queue_full_is_dropped_and_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    name, record = a_run()
    gate = Gate()
    exported = BackgroundExport(exporter=gate, capacity=1)
    exported.submit(record, name, 1_800_000_000.0)
    assert gate.entered.wait(30)  # the first run is out of the queue, held by the exporter
    assert exported.submit(record, name, 1_800_000_001.0)  # fills the queue
    with caplog.at_level(logging.WARNING, logger="harness_lab.otel"):
        assert not exported.submit(record, name, 1_800_000_002.0)
    gate.opened.set()
    summary = exported.close()
    assert (summary.runs, summary.dropped) == (2, 1)
    assert "the export queue is full" in caplog.text


def test_a_receiver_that_refuses_the_runs_is_said_in_one_line_and_every_run_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    name, record = a_run()
    gate = Gate(SpanExportResult.FAILURE)
    with caplog.at_level(logging.WARNING):
        exported = BackgroundExport(exporter=gate, warn_every_s=3600)
        exported.submit(record, name, 1_800_000_000.0)
        assert gate.entered.wait(30)
        for k in range(1, 3):  # refused in a second export call, within the hour
            exported.submit(record, name, 1_800_000_000.0 + k)
        gate.opened.set()
        summary = exported.close()
    assert (summary.runs, summary.failed, summary.lost) == (0, 3, 3)
    warnings = [r for r in caplog.records if r.name == "harness_lab.otel"]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith("otlp: 1 run(s) not sent to Gate: refused, or "
                                               "unreachable within the exporter's retries")
    assert summary.describe("Gate") == ("otlp: 0 span(s) of 0 run(s) sent to Gate; 3 run(s) "
                                        "not sent (3 refused or unreachable)")


def test_close_gives_up_on_a_receiver_that_does_not_answer_and_counts_what_was_left() -> None:
    name, record = a_run()
    gate = Gate(SpanExportResult.FAILURE)  # opened only by the shutdown
    exported = BackgroundExport(exporter=gate)
    exported.submit(record, name, 1_800_000_000.0)
    assert gate.entered.wait(30)
    exported.submit(record, name, 1_800_000_001.0)
    summary = exported.close(timeout_s=0.1)
    assert (summary.failed, summary.abandoned) == (1, 1)
    assert not exported.submit(record, name)  # closed: nothing more is taken
