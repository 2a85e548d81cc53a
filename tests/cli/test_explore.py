"""``harness-lab explore``: rows, formats, exit codes, heatmap and written failures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.runner import run_paths
from tests.cli.conftest import ROOT, run_cli
from tests.explore.helpers import REPORT, write_with_defects
from tests.sweep.processes import kill_a_worker


def test_a_clean_exploration_prints_one_row_per_variant_and_exits_0(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(REPORT)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["variant", "expected", "run", "release", "fallback", "db",
                                "spec", "broken"]
    assert len(lines) == 1 + 189
    assert "FLAG" not in out
    assert err.startswith("189 variants, 0 flagged, ")


def test_csv_output_starts_with_the_header(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(REPORT), "--format", "csv", "--fault", "crash"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("flag,variant,expected,run_state,release_outcome,fallback_type,"
                      "db_status,contradicts_spec,violations,error,note")
    assert out[1] == (',report-released@before router#1/crash,"crash: db RUNNING, no record",'
                      ",,,RUNNING,False,,,")
    assert len(out) == 1 + 14


def test_markdown_output_is_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(REPORT), "--format", "markdown", "--fault", "deadline"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| flag | variant | expected |")
    assert out[1].startswith("|---|")


def test_fault_kinds_can_be_repeated_or_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(REPORT), "--fault", "crash", "--fault", "deadline"]) == 0
    first = capsys.readouterr().err
    assert main(["explore", str(REPORT), "--fault", "crash,deadline"]) == 0
    second = capsys.readouterr().err
    assert first.startswith("35 variants, 0 flagged") and second.startswith("35 variants")


def test_a_seeded_defect_flags_rows_exits_1_and_writes_failing_scenarios(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_with_defects(REPORT, ["second_content_event"], tmp_path / "base.yaml")
    failures = tmp_path / "failures"
    code = main(["explore", str(base), "--write-failures", str(failures),
                 "--out", str(tmp_path / "rows.txt")])
    assert code == 1
    rows = (tmp_path / "rows.txt").read_text(encoding="utf-8")
    assert "FLAG" in rows and "sse_protocol" in rows
    err = capsys.readouterr().err
    written = sorted(failures.glob("*.yaml"))
    assert f"wrote {len(written)} flagged variant(s)" in err
    results = run_paths(written)
    assert results and not any(r.ok for r in results)


@pytest.mark.slow
def test_the_heatmap_option_writes_a_png(tmp_path: Path) -> None:
    png = tmp_path / "heatmap.png"
    assert main(["explore", str(REPORT), "--heatmap", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "no/such/file.yaml"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_malformed_scenario_is_a_usage_error(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndescription: d\nmodel: [{tool: nope}]\n", encoding="utf-8")
    assert main(["explore", str(bad)]) == 2
    assert "unknown tool 'nope'" in capsys.readouterr().err


def test_explore_and_search_are_the_functions_even_after_their_modules_are_imported() -> None:
    import harness_lab.explore.explorer
    import harness_lab.explore.property_search  # noqa: F401
    from harness_lab.explore import explore, search

    assert callable(explore) and callable(search)
    assert explore.__module__ == "harness_lab.explore.explorer"
    assert search.__module__ == "harness_lab.explore.property_search"


def test_fault_is_repeatable_and_leaves_the_file_name_alone(
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    base = str(Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"
               / "conclusion-guards-pass.yaml")
    assert main(["explore", "--fault", "deadline", "--fault", "crash", base,
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["variant"].rsplit("/", 1)[1] for r in rows} == {"deadline", "crash"}


def test_explore_lines_fit_a_hundred_columns() -> None:
    proc = run_cli("explore", "--fault", "crash,deadline",
                "scenarios/outcomes/conclusion-guards-pass.yaml", env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 36
    assert max(map(len, lines)) <= 100
    assert " @before router#1/crash          crash " in proc.stdout


def test_at_80_columns_explore_leaves_out_the_derived_columns_and_shows_variants_whole(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["explore", str(REPORT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["variant", "release", "fallback", "spec", "broken"]
    assert max(map(len, lines)) <= 80
    assert " ".join(lines[-2:]) == ("(expected, run, db left out at this width: widen the "
                                    "terminal or use --format json)")
    assert any(line.startswith(" @start/budget_exhausted:tokens ") for line in lines)


def test_a_heatmap_in_a_missing_directory_is_refused_before_anything_is_explored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "missing" / "heatmap.png"
    assert main(["explore", str(REPORT), "--heatmap", str(png)]) == 2
    captured = capsys.readouterr()
    assert f"--heatmap {png}: the directory {png.parent} does not exist" in captured.err
    assert captured.out == ""  # no table: nothing was explored


@pytest.mark.slow
def test_a_worker_killed_mid_exploration_costs_nothing_its_chunks_running_again(
        capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(ROOT / "scenarios" / "outcomes")]
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab", "explore", "-q", "--workers",
                             "2", "--format", "json", *paths],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kill_a_worker(proc.pid)
    out, err = proc.communicate(timeout=300)
    assert main(["explore", "-q", "--workers", "2", "--format", "json", *paths]) == 0
    assert json.loads(out) == json.loads(capsys.readouterr().out)  # as if nothing died
    assert proc.returncode == 0, err
    # the chunk the killed worker ran, and the one the other worker ran at most
    assert err.splitlines()[-1].endswith((
        "; 1 chunk ran again after a worker process died",
        "; 2 chunks ran again after a worker process died"))


@pytest.mark.slow
def test_a_chunk_that_kills_its_worker_every_time_is_not_run_and_no_other_is_lost(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from tests.explore.jobs import dies_on_the_killer, killer_runs

    runs = killer_runs(os.getpid())
    runs.unlink(missing_ok=True)
    monkeypatch.setattr("harness_lab.explore.library.run_chunk", dies_on_the_killer)
    try:
        assert main(["explore", str(REPORT), "--workers", "2", "--format", "json"]) == 1
        [first, second] = runs.read_text(encoding="utf-8").splitlines()
    finally:
        runs.unlink(missing_ok=True)
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    not_run = [r for r in rows if r["error"].startswith("not run: ")]
    assert first == second == " ".join(repr(r["variant"]) for r in not_run)  # its chunk alone
    assert {(r["flag"], r["error"]) for r in not_run} == {
        ("?", "not run: its worker process died (exit SIGKILL(-9))")}
    assert f"inconclusive ({len(not_run):,} not run: a worker died)" in (
        captured.err.splitlines()[-1])
    assert " ran again after a worker process died" in captured.err.splitlines()[-1]


@pytest.mark.parametrize("workers", ["0", "-5"])
def test_fewer_than_one_worker_is_refused_before_anything_runs(
        workers: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(REPORT), "--workers", workers]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"harness-lab explore: --workers {workers}: give 1 or more\n"


def test_out_takes_its_format_from_its_extension_as_run_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = "scenarios/outcomes/missing-context.yaml"
    assert main(["explore", base, "--fault", "deadline", "--out", str(tmp_path / "v.json"),
                 "-q"]) == 0
    rows = json.loads((tmp_path / "v.json").read_text(encoding="utf-8"))
    assert rows and all(row["variant"].startswith("missing-context@") for row in rows)
    capsys.readouterr()
    assert main(["explore", base, "--out", str(tmp_path / "v.html")]) == 2
    assert capsys.readouterr().err == (
        f"harness-lab explore: --out {tmp_path / 'v.html'}: this writes table, csv, json or "
        "markdown, not the html a .html file holds; name the file for what it holds\n")
    assert not (tmp_path / "v.html").exists()
