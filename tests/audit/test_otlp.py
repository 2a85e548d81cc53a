"""OTLP JSON as an audit source: the scenario library written as traces audits as its log does,
tampered traces are flagged by invariant, another harness's names are read through a
mapping, and a single JSON document is read as well as JSON Lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_lab.audit import audit
from harness_lab.audit.otlp import is_otlp_file
from harness_lab.audit.sources import SourceError
from harness_lab.cli import main
from harness_lab.invariants import check
from harness_lab.logs.writer import LogWriter
from harness_lab.otel import write_otlp_json
from harness_lab.record import RunRecord
from harness_lab.runner.results import ResultSet
from harness_lab.runner.run import run_paths
from tests.audit.test_audit import outcomes  # noqa: F401 (the outcome runs, as a fixture)
from tests.conftest import INV1

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

Request = dict[str, Any]


@pytest.fixture(scope="module")
def library() -> ResultSet:
    """Every scenario of the library, run once."""
    return run_paths([SCENARIOS])


def _pairs(results: ResultSet) -> list[tuple[str, RunRecord]]:
    return [(r.scenario, rec) for r in results for rec in (*r.turns, r.record)
            if rec is not None]


def _traces_and_log(library: ResultSet, directory: Path) -> tuple[Path, Path]:
    """The runs of ``library`` written to ``directory`` as an OTLP JSON file and as a run log."""
    pairs = _pairs(library)
    written = write_otlp_json([rec for _, rec in pairs], directory / "library.otlp.jsonl",
                              scenarios=[name for name, _ in pairs])
    with LogWriter.open(directory, "run") as writer:
        for result in library:
            writer.add(result)
    return written.path, writer.path


def test_the_library_written_as_otlp_json_audits_as_its_log_does(
        library: ResultSet, tmp_path: Path) -> None:
    traces, log = _traces_and_log(library, tmp_path)
    traced, logged = audit(traces), audit(log)
    pairs = _pairs(library)
    # every run holds every invariant but those a store refused: the checks report the row
    # it did not store (faults/store-refuses-*.yaml lists what each breaks)
    assert {name.split("[")[0] for name, rec in pairs if check(rec)} == {
        "store-refuses-history", "store-refuses-running-row", "store-refuses-completion",
        "store-refuses-failed-completion", "store-refuses-cancelled-completion",
        "store-refuses-completion-not-carried"}
    expected = [("checked", sorted({v.invariant for v in check(rec)})) for _, rec in pairs]
    assert [(r.state, sorted({n for n, _ in r.violations})) for r in traced.runs] == expected
    assert [(r.state, sorted({n for n, _ in r.violations})) for r in logged.runs
            if r.state == "checked"] == expected
    assert traced.counts()["checked"] == logged.counts()["checked"] == len(pairs)
    assert traced.counts()["unreadable"] == logged.counts()["unreadable"] == 0
    assert [r.run_id for r in traced.runs] == [
        r.run_id for r in logged.runs if r.state == "checked"]


def _write(path: Path, requests: list[Request]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return path


def _requests(records: list[RunRecord], tmp_path: Path) -> list[Request]:
    written = write_otlp_json(records, tmp_path / "clean.otlp.jsonl")
    return [json.loads(line) for line in Path(written.path).read_text().splitlines()]


def _spans(request: Request) -> list[Request]:
    return [span for rs in request["resourceSpans"] for ss in rs["scopeSpans"]
            for span in ss["spans"]]


def _attribute(item: Request, key: str) -> Any:
    (value,) = [a["value"] for a in item.get("attributes", []) if a["key"] == key]
    return next(iter(value.values()))


def _root(request: Request) -> Request:
    (root,) = [s for s in _spans(request) if s["name"] == "harness_lab.run"]
    return root


def _events(request: Request, name: str) -> list[Request]:
    return [e for s in _spans(request) for e in s.get("events", []) if e["name"] == name]


def _run_state_failed(request: Request) -> None:
    for a in _root(request)["attributes"]:
        if a["key"] == "harness_lab.run_state":
            a["value"] = {"stringValue": "FAILED"}


def _without_run_finished(request: Request) -> None:
    root = _root(request)
    root["events"] = [e for e in root["events"] if e["name"] != "RUN_FINISHED"]


def _done_before_content(request: Request) -> None:
    (content,), (done,) = _events(request, "sse.content"), _events(request, "sse.done")
    for a, b in zip(content["attributes"], done["attributes"], strict=False):
        if a["key"] == b["key"] == "harness_lab.sse.seq":
            a["value"], b["value"] = b["value"], a["value"]


def _two_terminations(request: Request) -> None:
    root = _root(request)
    (finished,) = _events(request, "RUN_FINISHED")
    again = json.loads(json.dumps(finished))
    for a in again["attributes"]:
        if a["key"] == "harness_lab.trace.seq":
            a["value"] = {"intValue": "1000"}
    root["events"].append(again)


def _cited_tool_failed(request: Request) -> None:
    for span in _spans(request):
        if any(a["key"] == "harness_lab.invocation.id" and a["value"]["stringValue"] == INV1
               for a in span.get("attributes", [])):
            for a in span["attributes"]:
                if a["key"] == "harness_lab.invocation.status":
                    a["value"] = {"stringValue": "ERROR"}


def _tool_after_saturation(request: Request) -> None:
    (stop,) = _events(request, "COLLECTION_STOP")
    seq = int(_attribute(stop, "harness_lab.trace.seq"))
    for event in (e for s in _spans(request) for e in s.get("events", [])):
        for a in event.get("attributes", []):
            if a["key"] == "harness_lab.trace.seq" and int(a["value"]["intValue"]) > seq:
                a["value"] = {"intValue": str(int(a["value"]["intValue"]) + 1)}
    _root(request)["events"].append({"timeUnixNano": stop["timeUnixNano"],
                                     "name": "TOOL_INVOCATION", "attributes": [
        {"key": "harness_lab.trace.seq", "value": {"intValue": str(seq + 1)}},
        {"key": "harness_lab.trace.status", "value": {"stringValue": "STARTED"}},
        {"key": "harness_lab.trace.phase", "value": {"stringValue": "TOOL"}},
        {"key": "harness_lab.detail.tool", "value": {"stringValue": "logs"}}]})


TAMPERED: list[tuple[str, Callable[[Request], None], str, str]] = [
    ("conclusion-guards-pass", _run_state_failed, "single_termination",
     "RUN_FINISHED says SUCCESS, the run is FAILED"),
    ("conclusion-guards-pass", _without_run_finished, "single_termination",
     "0 RUN_FINISHED events"),
    ("conclusion-guards-pass", _done_before_content, "sse_protocol",
     "events out of the order metadata -> status* -> content|failure -> done"),
    ("conclusion-guards-pass", _two_terminations, "single_termination",
     "2 RUN_FINISHED events"),
    ("conclusion-guards-pass", _cited_tool_failed, "cited_ready_only",
     f"published content cites {INV1}, which is not a READY invocation"),
    ("saturated-progress", _tool_after_saturation, "no_evidence_tool_after_saturation",
     "evidence tool logs ran after COLLECTION_STOP"),
]


@pytest.mark.parametrize(("scenario", "tamper", "invariant", "message"), TAMPERED,
                         ids=[t[1].__name__.strip("_") for t in TAMPERED])
def test_a_tampered_trace_is_flagged_by_run_and_invariant(
        outcomes: dict[str, RunRecord], tmp_path: Path, scenario: str,  # noqa: F811
        tamper: Callable[[Request], None], invariant: str, message: str) -> None:
    (request,) = _requests([outcomes[scenario]], tmp_path)
    tamper(request)
    report = audit(_write(tmp_path / "tampered.otlp.jsonl", [request]))
    (run,) = report.runs
    assert run.run_id == outcomes[scenario].run_id
    assert (invariant, message) in run.violations
    assert not report.ok


def test_the_command_names_the_run_and_the_invariant_of_a_tampered_trace(
        outcomes: dict[str, RunRecord], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    (request,) = _requests([outcomes["conclusion-guards-pass"]], tmp_path)
    _two_terminations(request)
    path = _write(tmp_path / "traces.json", [request])
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "run-000001: single_termination: 2 RUN_FINISHED events" in out
    assert "1 run(s): 1 checked, 0 incomplete (RUNNING, no RUN_FINISHED), 1 with violations" \
        in out


def test_an_unreadable_run_of_a_trace_names_the_file_line_span_and_column(
        outcomes: dict[str, RunRecord], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    (request,) = _requests([outcomes["conclusion-guards-pass"]], tmp_path)
    (root,) = [(n, s) for n, s in enumerate(_spans(request)) if s["name"] == "harness_lab.run"]
    for a in root[1]["attributes"]:
        if a["key"] == "harness_lab.db_status":
            a["value"] = {"stringValue": "MAYBE"}
    path = _write(tmp_path / "traces.json", [request])
    assert main(["audit", str(path)]) == 1
    assert (f"run-000001: unreadable: {path}:1: resourceSpans[0].scopeSpans[0].spans[{root[0]}]"
            ": diagnosis_run.status: 'MAYBE' is not a valid StoredRunStatus"
            ) in capsys.readouterr().out.splitlines()


FOREIGN_MAPPING = """\
run_span: diagnosis.request
events:
  RUN_FINISHED: run.finished
  sse.done: stream.done
attributes:
  harness_lab.run_id: diagnosis.run.id
  harness_lab.run_state: diagnosis.state
  harness_lab.trace.seq: diagnosis.event.seq
  harness_lab.detail.: diagnosis.event.
"""

_THEIRS = {"harness_lab.run": "diagnosis.request", "RUN_FINISHED": "run.finished",
           "sse.done": "stream.done", "harness_lab.run_id": "diagnosis.run.id",
           "harness_lab.run_state": "diagnosis.state",
           "harness_lab.trace.seq": "diagnosis.event.seq"}


def _renamed(value: Any) -> Any:
    """The request as a harness that names things its own way would write it."""
    if isinstance(value, list):
        return [_renamed(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _renamed(v) for k, v in value.items()}
    for key in ("name", "key"):
        name = out.get(key)
        if isinstance(name, str):
            out[key] = _THEIRS.get(name, name.replace("harness_lab.detail.",
                                                      "diagnosis.event."))
    return out


def test_another_harness_s_names_are_read_through_a_yaml_mapping(
        outcomes: dict[str, RunRecord], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    requests = [_renamed(r) for r in _requests(list(outcomes.values()), tmp_path)]
    path = _write(tmp_path / "java-harness.jsonl", requests)
    assert "harness_lab.run\"" not in path.read_text()
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(FOREIGN_MAPPING, encoding="utf-8")
    assert main(["audit", str(path), "--mapping", str(mapping)]) == 0
    assert f"{len(outcomes)} run(s): {len(outcomes)} checked" in capsys.readouterr().out
    assert main(["audit", str(path)]) == 2  # without the mapping no span is a run
    assert "holds no run to audit" in capsys.readouterr().err


def test_one_request_as_a_pretty_printed_document_is_read(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:  # noqa: F811
    (request,) = _requests([outcomes["conclusion-guards-pass"]], tmp_path)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request, indent=2), encoding="utf-8")
    assert is_otlp_file(path)
    report = audit(path)
    assert [(r.run_id, r.state, r.violations) for r in report.runs] == [
        ("run-000001", "checked", ())]


def test_a_run_sent_twice_is_one_run_and_a_span_id_reused_differently_is_refused(
        outcomes: dict[str, RunRecord], tmp_path: Path) -> None:  # noqa: F811
    (request,) = _requests([outcomes["conclusion-guards-pass"]], tmp_path)
    assert [r.run_id for r in audit(_write(tmp_path / "twice.otlp.jsonl",
                                           [request, request])).runs] == ["run-000001"]
    changed = json.loads(json.dumps(request))
    _root(changed)["name"] = "another"
    path = _write(tmp_path / "reused.otlp.jsonl", [request, changed])
    with pytest.raises(SourceError, match=rf"^{path}:2: resourceSpans\[0\]\.scopeSpans\[0\]\."
                                          r"spans\[0\]\.spanId: span \w+ of trace \w+ appears "
                                          r"twice, differently \(first at 1: "):
        audit(path)


def test_a_trace_without_a_run_span_is_left_out(outcomes: dict[str, RunRecord],  # noqa: F811
                                                tmp_path: Path) -> None:
    requests = _requests([outcomes["conclusion-guards-pass"], outcomes["missing-context"]],
                         tmp_path)
    _root(requests[0])["name"] = "http.server"
    report = audit(_write(tmp_path / "two.otlp.jsonl", requests))
    assert [r.run_id for r in report.runs] == [outcomes["missing-context"].run_id]


def test_calibrate_fits_the_same_latencies_and_error_rates_from_the_traces_as_from_the_log(
        library: ResultSet, tmp_path: Path) -> None:
    from harness_lab.audit import finished_records
    from harness_lab.audit.calibrate import calibrate

    traced, logged = (calibrate(finished_records(source))
                      for source in _traces_and_log(library, tmp_path))
    # a row source knows a termination by its RUN_FINISHED, not its instant and reason:
    # the disconnect and cancel fits are a log's alone
    assert traced["latency"] == logged["latency"]
    assert [traced["faults"][k] == logged["faults"][k]
            for k in ("tool_error_p", "provider_error_p")] == [True, True]
