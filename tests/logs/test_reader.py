"""read_log: the same results, records and DataFrames as the live run; damaged logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from harness_lab.logs import LogError, read_log
from harness_lab.logs.schema import FORMAT_VERSION
from harness_lab.report.frames import (
    invocations_frame,
    rejections_frame,
    runs_frame,
    sse_frame,
    trace_frame,
)
from harness_lab.runner.results import ResultSet


def test_a_log_reads_back_into_the_results_of_the_live_run(library: ResultSet,
                                                            library_log: Path) -> None:
    log = read_log(library_log)
    assert log.complete and log.notes == ()
    assert [e.scenario for e in log.entries] == [r.scenario for r in library]
    assert [r.verdict for r in log.results] == [r.verdict for r in library]
    assert log.records == [r.record for r in library if r.record is not None]


@pytest.mark.parametrize("frame", [runs_frame, trace_frame, invocations_frame,
                                   rejections_frame, sse_frame])
def test_the_report_frames_of_read_records_equal_those_of_live_ones(
        library: ResultSet, library_log: Path, frame: object) -> None:
    live = [r.record for r in library if r.record is not None]
    read = read_log(library_log).records
    pd.testing.assert_frame_equal(frame(read), frame(live))  # type: ignore[operator]


def test_the_labelled_run_frame_of_a_log_equals_the_result_sets(library: ResultSet,
                                                                 library_log: Path) -> None:
    pd.testing.assert_frame_equal(runs_frame(read_log(library_log).results), runs_frame(library))


def test_a_log_entry_is_found_by_scenario_name_or_run_id(library_log: Path) -> None:
    log = read_log(library_log)
    entry = log.find("timeout-no-content")
    assert entry.record is not None and entry.record.run_state.value == "TIMED_OUT"
    assert entry.sha256 is not None and len(entry.sha256) == 64
    with pytest.raises(KeyError, match="did you mean timeout-no-content"):
        log.find("timeout-no-contnet")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_log_without_its_footer_is_read_with_a_note(library_log: Path, tmp_path: Path
                                                      ) -> None:
    killed = tmp_path / "killed.jsonl"
    killed.write_text("".join(_lines(library_log)[:6]), encoding="utf-8")
    log = read_log(killed)
    assert not log.complete
    assert len(log.entries) == 5
    assert log.notes == ("no footer: the run was interrupted after 5 run(s); what it logged "
                         "is read",)


def test_a_last_line_cut_short_by_a_kill_is_dropped_with_a_note(library_log: Path,
                                                                tmp_path: Path) -> None:
    lines = _lines(library_log)
    torn = tmp_path / "torn.jsonl"
    torn.write_text("".join(lines[:4]) + lines[4][:100], encoding="utf-8")
    log = read_log(torn)
    assert len(log.entries) == 3
    assert log.notes[0] == ("line 5 was cut short (the writer stopped mid-line: killed, or "
                            "its disk full); dropped")


def test_a_malformed_line_in_the_middle_names_the_file_and_line(library_log: Path,
                                                                 tmp_path: Path) -> None:
    lines = _lines(library_log)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[3:]), encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:4: not JSON"):
        read_log(bad)


def test_a_run_whose_usage_passed_64_bits_reads_back_and_a_longer_integer_is_refused(
        library: ResultSet, library_log: Path, tmp_path: Path) -> None:
    live = [r.record for r in library if r.record is not None]
    past = [i for i, record in enumerate(live) if record.usage.tokens > (1 << 63) - 1]
    assert past, "the library has a run whose token total passes what a store holds"
    read = read_log(library_log).records
    assert [read[i].usage.tokens for i in past] == [live[i].usage.tokens for i in past]
    lines = _lines(library_log)
    bad = tmp_path / "long.jsonl"
    third = re.sub(r'"seq":\s*\d+', '"seq":' + "9" * 40, lines[2], count=1)
    assert third != lines[2]
    bad.write_text("".join(lines[:2]) + third + "".join(lines[3:]), encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:3: .*outside the 128-bit range"):
        read_log(bad)


def test_a_run_line_with_a_value_outside_its_enum_names_line_and_scenario(
        library_log: Path, tmp_path: Path) -> None:
    lines = _lines(library_log)
    run = json.loads(lines[1])
    run["record"]["run_state"] = "EXPLODED"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + json.dumps(run) + "\n", encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:2: scenario '{run['scenario']}': "
                                       r"record.run_state: 'EXPLODED' is not a RunState"):
        read_log(bad)


def test_a_log_of_a_newer_format_is_refused_with_the_versions(library_log: Path,
                                                              tmp_path: Path) -> None:
    header = json.loads(_lines(library_log)[0])
    header["format_version"] = FORMAT_VERSION + 1
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(LogError, match=f"format_version {FORMAT_VERSION + 1} is newer"):
        read_log(newer)


@pytest.mark.parametrize(("line", "field", "value"), [
    ("header", "command", "harness-lab run"),
    ("header", "started_at", 1764892800),
    ("header", "git_commit", ["e0a187f"]),
    ("header", "cwd", None),
    ("footer", "runs", "240"),
    ("footer", "verdicts", ["ok"]),
    ("footer", "ok", "yes"),
    ("footer", "finished_at", None),
])
def test_a_header_or_footer_field_of_the_wrong_type_names_the_file_line_and_field(
        library_log: Path, tmp_path: Path, line: str, field: str, value: object) -> None:
    lines = _lines(library_log)
    index = 0 if line == "header" else len(lines) - 1
    changed = json.loads(lines[index])
    changed[field] = value
    lines[index] = json.dumps(changed) + "\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:{index + 1}: {field}: "):
        read_log(bad)


@pytest.mark.parametrize(("change", "said", "made"), [
    ({"verdict": "FAILED"}, "FAILED", "ok"),
    ({"error": "the scenario's script ran out"}, "ok", "ERROR"),
    ({"unexpected": ["single_termination"]}, "ok", "FAILED"),
], ids=["a failure its content does not bear out", "an error said to be ok",
        "a broken invariant said to be ok"])
def test_a_run_line_whose_verdict_its_content_contradicts_is_refused_naming_it(
        library_log: Path, tmp_path: Path, change: dict[str, object], said: str,
        made: str) -> None:
    lines = _lines(library_log)
    run = json.loads(lines[1])
    assert run["verdict"] == "ok"
    run.update(change)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + json.dumps(run) + "\n", encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:2: scenario '{run['scenario']}': verdict: the "
                                       rf"line says '{said}', but .* make it '{made}'$"):
        read_log(bad)


@pytest.mark.parametrize("version", [0, -1])
def test_a_format_version_below_one_is_refused_by_name(library_log: Path, tmp_path: Path,
                                                       version: int) -> None:
    lines = _lines(library_log)
    header = json.loads(lines[0])
    header["format_version"] = version
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    with pytest.raises(LogError, match=rf"^{bad}:1: format_version: expected 1 or more"):
        read_log(bad)


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty; not a run log"),
    ('{"kind": "run"}\n', "the first line is not a log header"),
    ("[1, 2]\n", "not a log line"),
    ("\xff\xfe", "not UTF-8 text"),
])
def test_a_file_that_is_not_a_log_is_refused_by_name(tmp_path: Path, text: str,
                                                      message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(LogError, match=message):
        read_log(path)


def test_a_directory_or_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="is a directory"):
        read_log(tmp_path)
    with pytest.raises(LogError, match="cannot read: No such file"):
        read_log(tmp_path / "missing.jsonl")


def _retimed(library_log: Path, out: Path, started: str, finished: str | None) -> Path:
    """``library_log`` with its header's start and footer's finish set (no footer: None)."""
    lines = _lines(library_log)
    header, footer = json.loads(lines[0]), json.loads(lines[-1])
    header["started_at"] = started
    body = [json.dumps(header) + "\n", *lines[1:-1]]
    if finished is not None:
        footer["finished_at"] = finished
        body.append(json.dumps(footer) + "\n")
    out.write_text("".join(body), encoding="utf-8")
    return out


def test_a_logs_wall_time_runs_from_its_header_start_to_its_footer_finish(
        library_log: Path, tmp_path: Path) -> None:
    log = read_log(_retimed(library_log, tmp_path / "timed.jsonl",
                            "2026-03-01T10:00:00.000Z", "2026-03-01T10:01:02.250Z"))
    assert log.wall_s == 62.25


def test_an_interrupted_log_has_no_wall_time(library_log: Path, tmp_path: Path) -> None:
    log = read_log(_retimed(library_log, tmp_path / "killed.jsonl",
                            "2026-03-01T10:00:00.000Z", None))
    assert log.complete is False and log.wall_s is None


OLDER = Path(__file__).parent / "data" / "before-termination-causes.jsonl"


def test_a_log_written_before_the_latest_record_fields_still_reads_with_their_defaults(
) -> None:
    log = read_log(OLDER)
    assert [r.scenario for r in log.results] == [
        "client-disconnect", "conclusion-guards-pass", "policy-user-cancel-notice[failure]",
        "policy-user-cancel-notice[silent]"]
    disconnected = log.records[0]
    assert (disconnected.run_state.value, disconnected.sse_state.value) == (
        "CANCELLED", "DISCONNECTED")
    assert (disconnected.termination_causes, disconnected.sse_history,
            disconnected.guard_requests) == ((), (), ())
    assert all(result.ok for result in log.results)
