"""``harness-lab report LOG``: a kept run shown in the viewer without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs.sources import is_log_file, read_logs
from tests.conftest import OUTCOMES, outcomes_log


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of the outcome-table scenarios, written by ``harness-lab run``."""
    return outcomes_log(tmp_path_factory.mktemp("logs"))


def test_a_log_is_recognised_by_its_header_line_and_a_scenario_is_not(log: Path) -> None:
    assert is_log_file(log)
    assert not is_log_file(OUTCOMES / "missing-context.yaml")
    assert not is_log_file(OUTCOMES / "no-such-file.jsonl")
    assert not is_log_file(OUTCOMES)


def test_a_log_rewritten_with_other_json_spacing_is_still_a_log(log: Path, tmp_path: Path
                                                                 ) -> None:
    lines = log.read_text(encoding="utf-8").splitlines()
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("\n".join(json.dumps(json.loads(line), indent=None) for line in lines)
                      + "\n", encoding="utf-8")
    assert spaced.read_text(encoding="utf-8").startswith('{"kind": "header"')
    assert is_log_file(spaced)
    not_a_header = tmp_path / "rows.jsonl"
    not_a_header.write_text('{"kind": "run"}\n', encoding="utf-8")
    assert not is_log_file(not_a_header)


def test_a_header_with_an_integer_past_64_bits_is_still_a_log_and_its_reader_names_it(
        log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = log.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["command"] = 1 << 100
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert is_log_file(bad)
    assert main(["explain", str(bad)]) == 2
    assert f"{bad}:1: command: " in capsys.readouterr().err


def test_logged_results_are_the_logs_and_none_for_scenario_paths(log: Path) -> None:
    read = read_logs("report", [str(log)], ["outcome-table"])
    assert not isinstance(read, int) and read is not None
    results, logs = read
    assert len(results) == 13 and results.ok
    assert [kept.path for kept in logs] == [log]
    assert read_logs("report", [str(OUTCOMES)]) is None
    no_tag = read_logs("report", [str(log)], ["no-such-tag"])
    assert not isinstance(no_tag, int) and no_tag is not None and no_tag[0] == []


def test_report_of_a_log_writes_the_viewer_of_the_kept_runs(
        log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kept.html"
    assert main(["report", str(log), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: 13 scenario(s), 13 run record(s)")
    page = out.read_text(encoding="utf-8")
    assert "semantic-unsupported" in page and "timeout-no-content" in page


def test_report_of_a_damaged_log_is_a_usage_error(log: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "{oops\n" + "".join(lines[1:]), encoding="utf-8")
    assert main(["report", str(bad), "--out", str(tmp_path / "r.html")]) == 2
    assert f"harness-lab report: {bad}:2: not JSON" in capsys.readouterr().err


def _retimed(log: Path, out: Path, *, footer: bool) -> Path:
    """``log`` with a start and finish 62.25 s apart (without its footer: interrupted)."""
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    header, last = json.loads(lines[0]), json.loads(lines[-1])
    header["started_at"] = "2026-03-01T10:00:00.000Z"
    last["finished_at"] = "2026-03-01T10:01:02.250Z"
    kept = [json.dumps(header) + "\n", *lines[1:-1]]
    if footer:
        kept.append(json.dumps(last) + "\n")
    out.write_text("".join(kept), encoding="utf-8")
    return out


def test_the_report_of_a_log_says_how_long_the_logged_run_took_not_the_reading(
        log: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept.html"
    assert main(["report", str(_retimed(log, tmp_path / "timed.jsonl", footer=True)),
                 "--out", str(out)]) == 0
    assert "ran in 62.25 s" in out.read_text(encoding="utf-8")


def test_the_report_of_an_interrupted_log_says_no_run_time(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept.html"
    assert main(["report", str(_retimed(log, tmp_path / "killed.jsonl", footer=False)),
                 "--out", str(out)]) == 0
    assert "ran in" not in out.read_text(encoding="utf-8")
