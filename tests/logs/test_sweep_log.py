"""A sweep keeps its kept records and failing samples in a run log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs import read_log
from harness_lab.logs.sweep_log import record_from_dict, sweep_results
from harness_lab.runner.results import ResultSet

SWEEP = Path(__file__).resolve().parents[2] / "scenarios" / "sweeps" / "deadline-sweep.yaml"


def test_a_record_dict_comes_back_as_the_record_but_its_extra(library: ResultSet) -> None:
    for result in library:
        if result.record is not None and not result.record.extra:
            assert record_from_dict(json.loads(json.dumps(result.record.to_dict()))) == \
                result.record


def test_a_sweep_logs_each_kept_record_as_records_out_has_it(tmp_path: Path) -> None:
    out = tmp_path / "kept.json"
    code = main(["sweep", str(SWEEP), "--samples", "40", "--seed", "3", "--workers", "1",
                 "--keep-every", "20", "--records-out", str(out), "--log-dir",
                 str(tmp_path / "logs"), "--quiet"])
    assert code == 0
    (path,) = (tmp_path / "logs").glob("*_sweep_*.jsonl")
    log = read_log(path)
    kept = json.loads(out.read_text(encoding="utf-8"))["kept"]
    assert len(log.entries) == len(kept) > 0
    assert [e.record for e in log.entries] == [record_from_dict(k) for k in kept]
    assert log.entries[0].scenario == "deadline-sweep@g0-s0"
    assert {e.result.verdict for e in log.entries} == {"ok"}


def test_a_failing_sample_without_a_kept_record_is_a_failed_line_without_one() -> None:
    failure = {"grid": 1, "sample": 7, "seed": 3, "error": None,
               "violations": ["sse_single_result"], "run_state": "SUCCESS",
               "release_outcome": "SUCCESS"}
    (result,) = sweep_results("s", "s.yaml", [], [failure])
    assert (result.scenario, result.verdict, result.record) == ("s@g1-s7", "FAILED", None)
    assert result.unexpected == ("sse_single_result",)


def test_no_log_keeps_nothing(tmp_path: Path) -> None:
    assert main(["sweep", str(SWEEP), "--samples", "10", "--seed", "3", "--workers", "1",
                 "--keep-every", "5", "--no-log", "--log-dir", str(tmp_path / "logs"),
                 "--quiet"]) == 0
    assert not (tmp_path / "logs").exists()


def test_a_log_dir_in_a_file_stops_the_sweep_before_it_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("", encoding="utf-8")
    assert main(["sweep", str(SWEEP), "--samples", "10", "--seed", "3", "--workers", "1",
                 "--log-dir", str(tmp_path / "f" / "logs"), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "harness-lab sweep: --log-dir" in captured.err and captured.out == ""
