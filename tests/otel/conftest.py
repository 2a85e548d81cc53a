"""What the export tests share: library scenarios run and exported into the SDK's own
in-memory exporter, the exported spans read back as a tree, and a real local OTLP/HTTP
receiver."""

from __future__ import annotations

import gzip
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness_lab.otel import export_records
from harness_lab.record import RunRecord
from harness_lab.runner.run import run_paths
from tests.cli.conftest import ROOT
from tests.otel.phoenix import phoenix

__all__ = ["phoenix"]  # the fixture, for the tests of this directory

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

EPOCH_NS = int(datetime(2025, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000_000
"""The documented default epoch, 2025-01-01T00:00:00Z, in nanoseconds."""

TREE = ["harness_lab.run",
        "  routing",
        "  invoke_agent diagnosis",
        "    chat",
        "    execute_tool logs",
        "    chat",
        "    execute_tool metrics",
        "    chat",
        "  evidence_guard",
        "  semantic_guard",
        "  release"]
"""The span tree of ``conclusion-guards-pass`` (docs/otel.md), children in time order."""


def modules_loaded_by(*args: str) -> subprocess.CompletedProcess[str]:
    """``harness-lab ARGS`` run through ``main`` in a fresh interpreter, which then prints to
    stderr ``loaded: [...]``: the modules of OpenTelemetry and of ``harness_lab.otel`` it
    imported."""
    code = ("import sys\n"
            "from harness_lab.cli import main\n"
            f"code = main({list(args)!r})\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'\n"
            "                or m.startswith('harness_lab.otel'))\n"
            "print('loaded:', loaded, file=sys.stderr)\n"
            "raise SystemExit(code)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def at(seconds: str, epoch_ns: int = EPOCH_NS) -> int:
    """The timestamp of virtual second ``seconds`` (written as text, so it stays exact)."""
    return epoch_ns + int(Decimal(seconds) * 1_000_000_000)


def played(*paths: str) -> list[tuple[str, RunRecord]]:
    """Each run of the library scenario files ``paths``, earlier turns first: (scenario,
    record)."""
    found = []
    for result in run_paths([str(SCENARIOS / p) for p in paths]):
        for record in (*result.turns, result.record):
            if record is not None:
                found.append((result.scenario, record))
    return found


def export(pairs: Sequence[tuple[str, RunRecord]], **options: Any) -> list[ReadableSpan]:
    """The spans of ``pairs`` as the SDK's in-memory exporter received them."""
    exporter = InMemorySpanExporter()
    export_records([r for _, r in pairs], exporter=exporter,
                   scenarios=[name for name, _ in pairs], **options)
    return list(exporter.get_finished_spans())


def spans_of(*paths: str, **options: Any) -> list[ReadableSpan]:
    """The exported spans of every run of the scenario files ``paths``."""
    return export(played(*paths), **options)


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan | None) -> list[ReadableSpan]:
    """The spans directly under ``parent`` (None: the roots), in time order."""
    parent_id = None if parent is None else parent.context.span_id
    found = [s for s in spans if (s.parent.span_id if s.parent else None) == parent_id
             and (parent is None or s.context.trace_id == parent.context.trace_id)]
    return sorted(found, key=lambda s: (s.start_time, s.end_time))


def outline(spans: Sequence[ReadableSpan], parent: ReadableSpan | None = None,
            depth: int = 0) -> list[str]:
    """The span names as an indented tree, children in time order."""
    lines = []
    for span in children(spans, parent):
        lines.append("  " * depth + span.name)
        lines += outline(spans, span, depth + 1)
    return lines


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    """The spans called ``name``, in time order."""
    return sorted((s for s in spans if s.name == name), key=lambda s: (s.start_time, s.end_time))


def only(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called ``name``."""
    found = named(spans, name)
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


class Receiver:
    """A local OTLP/HTTP receiver: a stdlib HTTP server that keeps every body POSTed to it
    and answers ``status`` (200: taken)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []  # (path, content type, body)
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.requests.append((self.path, self.headers.get("Content-Type", ""),
                                          body))
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass  # quiet

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """Every span received, with its resource's attributes: (resource, span)."""
        found = []
        for _, _, body in self.requests:
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value
                            for a in resource_spans.resource.attributes}
                found += [(resource, span) for scope in resource_spans.scope_spans
                          for span in scope.spans]
        return found

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A local OTLP/HTTP receiver, stopped after the test."""
    served = Receiver()
    try:
        yield served
    finally:
        served.close()


def string_attributes(span: Any) -> dict[str, str]:
    """A received span's string attributes."""
    return {a.key: a.value.string_value for a in span.attributes
            if a.value.WhichOneof("value") == "string_value"}
