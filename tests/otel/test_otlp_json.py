"""OTLP JSON files (the Collector file exporter's format): the encoding the OTLP/JSON spec asks
for, the same ids, times and attributes as the SDK export, written atomically, and
``harness-lab run --otlp-file``."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from harness_lab.cli import main
from harness_lab.otel import write_otlp_json
from harness_lab.otel.otlp_json import otlp_request
from harness_lab.record import RunRecord
from tests.cli.conftest import ROOT, run_cli
from tests.otel.conftest import EPOCH_NS, SCENARIOS, at, export, played

GUARDS_PASS = "outcomes/conclusion-guards-pass.yaml"
FAILING_TOOL = "tools/error-execution.yaml"


def _spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    (resource,) = request["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    assert scope["scope"]["name"] == "harness_lab.otel"
    return list(scope["spans"])


def _record(path: str) -> RunRecord:
    ((_, record),) = played(path)
    return record


def _values(attributes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {a["key"]: a["value"] for a in attributes}


def test_a_run_is_one_request_in_the_otlp_json_encoding() -> None:
    spans = _spans(otlp_request(_record(GUARDS_PASS)))
    root, *rest = spans
    assert (root["name"], root["kind"], "parentSpanId" in root) == ("harness_lab.run", 1, False)
    assert len(root["traceId"]) == 32 and len(root["spanId"]) == 16
    assert all(int(s["traceId"], 16) and int(s["spanId"], 16) for s in spans)
    assert {s["traceId"] for s in spans} == {root["traceId"]}
    assert (root["startTimeUnixNano"], root["endTimeUnixNano"]) == (str(EPOCH_NS),
                                                                     str(at("6.7")))
    values = _values(root["attributes"])
    assert values["harness_lab.run_state"] == {"stringValue": "SUCCESS"}
    assert values["harness_lab.agent_steps"] == {"intValue": "3"}
    assert values["harness_lab.duration_s"] == {"doubleValue": 6.7}
    assert values["harness_lab.published_result"] == {"boolValue": True}
    assert values["harness_lab.statuses"]["arrayValue"]["values"][0] == {
        "stringValue": "ROUTING"}
    assert root["status"] == {}
    chat = next(s for s in rest if s["name"] == "chat")
    assert chat["kind"] == 3 and chat["parentSpanId"] != root["spanId"]  # under the agent
    finished = next(e for e in root["events"] if e["name"] == "RUN_FINISHED")
    assert finished["timeUnixNano"] == str(at("6.7"))
    assert _values(finished["attributes"])["harness_lab.trace.phase"] == {
        "stringValue": "RUN"}


def test_a_failed_span_has_status_code_2_and_its_message() -> None:
    spans = _spans(otlp_request(_record(FAILING_TOOL)))
    failed = [s for s in spans if s["status"]]
    assert failed and all(s["status"]["code"] == 2 and s["status"]["message"] for s in failed)


def _sdk_view(span: Any) -> tuple[Any, ...]:
    parent = f"{span.parent.span_id:016x}" if span.parent else None
    return (f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}", parent, span.name,
            span.start_time, span.end_time, dict(span.attributes),
            [(e.name, e.timestamp, dict(e.attributes)) for e in span.events])


def _plain(value: dict[str, Any]) -> Any:
    (kind, given), = value.items()
    if kind == "intValue":
        return int(given)
    if kind == "arrayValue":
        return tuple(_plain(v) for v in given.get("values", []))
    return given


def _json_view(span: dict[str, Any]) -> tuple[Any, ...]:
    def attrs(item: dict[str, Any]) -> dict[str, Any]:
        return {a["key"]: _plain(a["value"]) for a in item.get("attributes", [])}

    return (span["traceId"], span["spanId"], span.get("parentSpanId"), span["name"],
            int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"]), attrs(span),
            [(e["name"], int(e["timeUnixNano"]), attrs(e)) for e in span.get("events", [])])


def test_ids_times_and_attributes_are_those_the_sdk_export_sends(tmp_path: Path) -> None:
    pairs = played(GUARDS_PASS, FAILING_TOOL, "late/first-reason-wins.yaml",
                   "faults/unstorable-token-count.yaml")
    sdk = sorted(_sdk_view(s) for s in export(pairs))
    written = write_otlp_json([r for _, r in pairs], tmp_path / "runs.otlp.jsonl",
                              scenarios=[name for name, _ in pairs])
    lines = Path(written.path).read_text(encoding="utf-8").splitlines()
    assert (written.runs, written.spans, len(lines)) == (len(pairs), len(sdk), len(pairs))
    assert sorted(_json_view(s) for line in lines for s in _spans(json.loads(line))) == sdk


def test_a_token_count_past_64_bits_is_written_as_its_digits_which_otlp_can_carry() -> None:
    pairs = played("faults/unstorable-token-count.yaml")
    record = next(r for name, r in pairs if "one-past-the-limit" in name)
    root = _spans(otlp_request(record))[0]
    assert _values(root["attributes"])["harness_lab.tokens"] == {
        "stringValue": "9223372036854775808"}
    encode_spans(export(pairs))  # the SDK's protobuf encoder takes every attribute


def _failing(records: list[RunRecord]) -> Iterator[RunRecord]:
    yield records[0]
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_write_that_fails_leaves_the_file_as_it_was_and_nothing_beside_it(
        tmp_path: Path) -> None:
    path = tmp_path / "runs.otlp.jsonl"
    path.write_text("before\n", encoding="utf-8")
    with pytest.raises(OSError, match="No space left"):
        write_otlp_json(_failing([_record(GUARDS_PASS)]), path)
    assert path.read_text(encoding="utf-8") == "before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.otlp.jsonl"]


def test_run_writes_every_run_it_makes_to_the_otlp_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.otlp.jsonl"
    done = run_cli("run", str(SCENARIOS / GUARDS_PASS),
                   str(SCENARIOS / "late" / "first-reason-wins.yaml"), "-q",
                   "--otlp-file", str(path))
    assert done.returncode == 0, done.stderr
    requests = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    spans = sum(len(_spans(r)) for r in requests)
    assert len(requests) == 4
    assert f"otlp: {spans} span(s) of 4 run(s) written to {path}" in done.stderr


def test_run_refuses_an_otlp_file_in_a_missing_directory_before_any_run(
        tmp_path: Path) -> None:
    done = run_cli("run", str(SCENARIOS / GUARDS_PASS), "--otlp-file",
                   str(tmp_path / "missing" / "runs.jsonl"))
    assert done.returncode == 2
    assert done.stderr.startswith(f"harness-lab run: --otlp-file {tmp_path}/missing/runs.jsonl:"
                                  f" the directory {tmp_path}/missing does not exist")
    assert "conclusion-guards-pass" not in done.stdout + done.stderr


def test_run_says_a_failed_write_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import harness_lab.otel.otlp_json as otlp_json

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(otlp_json, "write_otlp_json", full)
    path = tmp_path / "runs.otlp.jsonl"
    assert main(["run", str(SCENARIOS / GUARDS_PASS), "-q", "--no-log",
                 "--otlp-file", str(path)]) == 1
    assert capsys.readouterr().err.endswith(
        f"harness-lab run: --otlp-file {path}: cannot write: No space left on device\n")
    assert not path.exists()


def test_run_writes_the_otlp_file_without_the_otel_extra(tmp_path: Path) -> None:
    path = tmp_path / "runs.otlp.jsonl"
    code = ("import sys; sys.modules['opentelemetry'] = None\n"
            "from harness_lab.cli import main\n"
            f"raise SystemExit(main(['run', {str(SCENARIOS / GUARDS_PASS)!r}, '-q', "
            f"'--no-log', '--otlp-file', {str(path)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert len(_spans(json.loads(path.read_text(encoding="utf-8")))) == 11


def test_every_field_is_one_the_otlp_protobuf_schema_knows_by_its_json_name() -> None:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = otlp_request(_record(FAILING_TOOL))
    parsed = json_format.ParseDict(request, ExportTraceServiceRequest())  # unknown: an error
    spans = parsed.resource_spans[0].scope_spans[0].spans
    assert len(spans) == len(_spans(request))
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano > 0 for s in spans)
    assert {s.kind for s in spans} == {1, 3}
    assert any(s.status.code == 2 for s in spans)
