"""``harness-lab report`` writes one self-contained HTML file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness_lab.cli import main
from tests.cli.conftest import on_a_terminal
from tests.conftest import finished_before_created, outcomes_log, tampered_log
from tests.scenarios import missing_context

GOOD = missing_context("good-report", header="case: missing_context\n")


def test_the_report_command_writes_the_viewer_with_a_timeline_per_run(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count('<svg class="timeline"') == 1
    assert "good-report" in text and "MISSING_REQUIRED_CONTEXT" in text
    assert "https://" not in text


def test_the_report_header_says_how_to_make_it_again(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    out = tmp_path / "my report.html"
    assert main(["report", str(tmp_path), "--out", str(out), "--tag", "nothing-has-it"]) == 5
    assert not out.exists()  # nothing selected: no report
    assert main(["report", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert f"harness-lab report {tmp_path} --out &#x27;{out}&#x27;" in text
    assert f"paths: {tmp_path}" in text
    assert re.search(r"ran in \d+\.\d\d s", text)


def test_an_out_in_a_missing_directory_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "no" / "r.html")]) == 2
    assert "does not exist; create it first" in capsys.readouterr().err


def test_the_report_command_exits_one_when_a_scenario_fails(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(GOOD.replace("missing_context", "semantic_unsupported"),
                                       encoding="utf-8")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 1


def test_the_report_shows_each_scenarios_expectations_and_the_files_that_did_not_load(
        tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    wrong = GOOD.replace("good-report", "wrong-report") + "expect: {tool_calls: 5}\n"
    (tmp_path / "wrong.yaml").write_text(wrong, encoding="utf-8")
    (tmp_path / "multi.yaml").write_text("name: multi\ndescription: y\nfoo: 1\nbar: 2\n",
                                         encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path), "--out", str(out)]) == 1
    text = out.read_text(encoding="utf-8")
    assert ">1 ok<" in text and ">1 FAILED<" in text and ">1 ERROR<" in text
    assert "<li>tool_calls: expected 5, got 0</li>" in text
    assert "multi.yaml:3: foo: unknown key" in text
    assert text.index('data-k-name="wrong-report"') < text.index('data-k-name="multi"') < (
        text.index('data-k-name="good-report"'))


def test_plots_embeds_the_outcome_figures_and_the_failed_runs_timeline(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(
        GOOD.replace("good-report", "bad-report") + "expect: {tool_calls: 5}\n",
        encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path), "--out", str(out), "--plots"]) == 1
    text = out.read_text(encoding="utf-8")
    images = re.findall(r'<img src="data:image/png;base64,iVBORw0KGgo[^"]*" alt="([^"]*)"', text)
    assert images == ["outcomes by directory", "outcomes by tag", "timeline of the failed runs"]
    assert "--plots" in text  # the command in the header says so
    plain = tmp_path / "plain.html"
    assert main(["report", str(tmp_path), "--out", str(plain)]) == 1
    assert "<img" not in plain.read_text(encoding="utf-8")


def test_the_command_says_where_to_open_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}: 1 scenario(s), 1 run record(s), 0 not ok; open file://")
    assert said.strip().endswith(out.as_uri())


def test_report_draws_progress_on_a_terminal(library: Path, tmp_path: Path) -> None:
    drawn = on_a_terminal("report", str(library), "--out", str(tmp_path / "r.html"))
    assert "scenario runs" in drawn


def test_a_kept_log_whose_run_finished_before_it_started_is_reported_failed_without_its_timeline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tampered_log(outcomes_log(tmp_path / "logs"), "conclusion-guards-pass",
                       finished_before_created, tmp_path / "tampered.jsonl")
    runs = sum(1 for line in log.read_text(encoding="utf-8").splitlines()
               if '"kind": "run"' in line)
    out = tmp_path / "report.html"
    capsys.readouterr()  # what making the log printed
    assert main(["report", str(log), "--out", str(out)]) == 1
    said = capsys.readouterr()
    assert said.err == ("harness-lab report: 1 logged run(s) now break invariants their log "
                        "did not record (conclusion-guards-pass): shown as checked now (the "
                        "log edited since, or written before the check)\n")
    assert f"{runs} run record(s), 1 not ok" in said.out
    text = out.read_text(encoding="utf-8")
    assert text.count('<svg class="timeline"') == runs - 1
    assert text.count("Not drawn: the run's times contradict each other "
                      "(times_consistent):<ul><li>the stored finished_at -1 is before its "
                      "created_at 0</li></ul>") == 1
    assert text.count('title="times_consistent: the stored finished_at -1 is before its '
                      'created_at 0">times contradict</span>') == 1
