"""``harness-lab report LOG``: a kept run shown in the viewer without running anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs.sources import is_log_file, logged_results

OUTCOMES = Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of the outcome-table scenarios, written by ``harness-lab run``."""
    where = tmp_path_factory.mktemp("logs")
    assert main(["run", str(OUTCOMES), "-q", "--format", "csv", "--log-dir", str(where)]) == 0
    (path,) = where.glob("*.jsonl")
    return path


def test_a_log_is_recognised_by_its_first_bytes_and_a_scenario_is_not(log: Path) -> None:
    assert is_log_file(log)
    assert not is_log_file(OUTCOMES / "missing-context.yaml")
    assert not is_log_file(OUTCOMES / "no-such-file.jsonl")


def test_logged_results_are_the_logs_and_none_for_scenario_paths(log: Path) -> None:
    results = logged_results("report", [str(log)], ["outcome-table"])
    assert not isinstance(results, int) and results is not None
    assert len(results) == 13 and results.ok
    assert logged_results("report", [str(OUTCOMES)]) is None
    assert logged_results("report", [str(log)], ["no-such-tag"]) == []


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
