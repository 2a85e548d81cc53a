"""Runs sent over OTLP/HTTP, as a real receiver on this machine gets them: protobuf bodies
on the traces path, decoded with OpenTelemetry's own protocol classes."""

from __future__ import annotations

import pytest

from harness_lab.otel import OtlpExportError, export_records
from tests.otel.conftest import Receiver, export, played, string_attributes


def test_the_spans_of_each_run_reach_an_otlp_http_receiver(receiver: Receiver) -> None:
    pairs = played("outcomes/conclusion-guards-pass.yaml", "paths/knowledge-query.yaml")
    sent = export_records([r for _, r in pairs], endpoint=f"{receiver.url}/v1/traces",
                          scenarios=[n for n, _ in pairs])
    assert {(path, kind) for path, kind, _ in receiver.requests} == {
        ("/v1/traces", "application/x-protobuf")}
    got = receiver.spans()
    assert (sent.runs, sent.spans) == (2, len(got)) == (2, 11 + 4)
    assert {resource["service.name"] for resource, _ in got} == {"harness_lab"}
    roots = [span for _, span in got if not span.parent_span_id]
    assert sorted(string_attributes(r)["harness_lab.scenario"] for r in roots) == [
        "conclusion-guards-pass", "path-knowledge-query"]


def test_a_run_has_the_same_ids_over_otlp_as_in_memory(receiver: Receiver) -> None:
    pairs = played("outcomes/conclusion-guards-pass.yaml")
    export_records([pairs[0][1]], endpoint=f"{receiver.url}/v1/traces",
                   scenarios=[pairs[0][0]])
    over_http = sorted((int.from_bytes(s.trace_id, "big"), int.from_bytes(s.span_id, "big"))
                       for _, s in receiver.spans())
    in_memory = sorted((s.context.trace_id, s.context.span_id) for s in export(pairs))
    assert over_http == in_memory


def test_a_receiver_that_refuses_the_spans_is_an_error_saying_how_many_were_lost(
        receiver: Receiver) -> None:
    receiver.status = 400
    ((name, record),) = played("outcomes/conclusion-guards-pass.yaml")
    with pytest.raises(OtlpExportError) as raised:
        export_records([record], endpoint=f"{receiver.url}/v1/traces", scenarios=[name])
    assert (raised.value.sent, raised.value.lost) == (0, 11)
    assert str(raised.value) == (f"could not send 11 span(s) to {receiver.url}/v1/traces "
                                 "(0 sent before them)")
