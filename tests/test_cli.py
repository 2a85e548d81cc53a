"""The harness-lab command line."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.cli import main

GOOD = """\
name: good
description: a missing-context fallback
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}
"""
WRONG = GOOD.replace("name: good", "name: wrong").replace("FALLBACK,", "SUCCESS,")


@pytest.fixture
def library(tmp_path: Path) -> Path:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    return tmp_path


def test_run_prints_one_row_per_scenario_and_exits_zero(library: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["run", str(library)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["scenario", "intent", "run_state", "release_outcome",
                              "fallback_type", "db_status", "expected", "invariants"]
    assert out[2].split() == ["good", "DIAGNOSIS", "SUCCESS", "FALLBACK",
                              "MISSING_REQUIRED_CONTEXT", "SUCCESS", "ok", "ok"]


def test_run_exits_one_when_an_expectation_fails(library: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    assert main(["run", str(library)]) == 1


def test_the_csv_has_exactly_the_columns_in_order_header_first(
        library: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    assert main(["run", str(library), "--format", "csv", "--out", str(out)]) == 0
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows == [
        ["scenario", "intent", "run_state", "release_outcome", "fallback_type", "db_status",
         "expected", "invariants"],
        ["good", "DIAGNOSIS", "SUCCESS", "FALLBACK", "MISSING_REQUIRED_CONTEXT", "SUCCESS", "ok",
         "ok"],
    ]


def test_json_and_markdown_formats_carry_the_same_row(library: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    main(["run", str(library), "--format", "json"])
    [row] = json.loads(capsys.readouterr().out)
    assert row["fallback_type"] == "MISSING_REQUIRED_CONTEXT"
    main(["run", str(library), "--format", "markdown"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "|---|---|---|---|---|---|---|---|"
    assert lines[2].startswith("| good | DIAGNOSIS | SUCCESS | FALLBACK |")


def test_a_broken_file_is_an_error_row_under_run(library: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (library / "broken.yaml").write_text("name: broken\ndescription: x\nmodle: []\n",
                                         encoding="utf-8")
    assert main(["run", str(library), "--format", "csv"]) == 1
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["scenario"] for r in rows] == ["broken", "good"]
    assert rows[0]["expected"].endswith("broken.yaml:3: modle: unknown key")
    assert rows[1]["expected"] == "ok"


def test_validate_exits_two_and_names_file_line_and_field(library: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    bad = library / "bad.yaml"
    bad.write_text(GOOD + "config: {deadline_s: -1}\n", encoding="utf-8")
    assert main(["validate", str(library)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:7: config.deadline_s: Input should be greater than 0" in err


def test_validate_exits_zero_for_valid_files(library: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(library)]) == 0
    assert capsys.readouterr().out == "1 scenario(s) valid, 0 file(s) with problems\n"


def test_show_prints_the_sse_events_and_the_trace_with_virtual_times(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(library / "good.yaml")]) == 0
    out = capsys.readouterr().out
    assert "-- SSE events" in out and "-- trace" in out
    assert "t=    0.000  RUN        RUN_STARTED" in out


def test_schema_prints_the_json_schema_of_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "Scenario"
    assert {"query", "model", "tools", "faults", "expect", "matrix"} <= set(schema["properties"])


def test_run_on_a_missing_path_is_a_usage_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope")]) == 2


ROOT = Path(__file__).resolve().parents[1]
CRASH = ROOT / "scenarios" / "faults" / "crash-before-guard.yaml"
MULTI = "name: multi\ndescription: y\nfoo: 1\nbar: 2\n"


def test_a_cassette_beside_its_scenario_is_not_run_or_validated_as_a_scenario(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (library / "cassettes").mkdir()
    (library / "cassettes" / "good.yaml").write_text("interactions: []\nversion: 1\n",
                                                     encoding="utf-8")
    assert main(["run", str(library), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["scenario"] for r in rows] == ["good"]
    assert main(["validate", str(library)]) == 0


def test_a_row_with_several_problems_stays_one_line_in_table_and_markdown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    main(["run", str(tmp_path), "--format", "markdown"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert "foo: unknown key<br>" in lines[2] and lines[2].endswith("| not checked |")
    main(["run", str(tmp_path)])
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_csv_and_json_keep_the_problems_on_their_own_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    main(["run", str(tmp_path), "--format", "json"])
    [row] = json.loads(capsys.readouterr().out)
    assert row["expected"].count("\n") == 1
    main(["run", str(tmp_path), "--format", "csv"])
    [parsed] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert parsed["expected"] == row["expected"]


def test_an_error_row_shows_its_invariants_as_not_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    assert main(["run", str(tmp_path), "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert row["invariants"] == "not checked"


@pytest.mark.parametrize("command", ["run", "report"])
def test_out_in_a_missing_directory_is_a_usage_error_before_anything_runs(
        library: Path, tmp_path: Path, command: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nodir" / "x.out"
    assert main([command, str(library), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"the directory {out.parent} does not exist" in err
    assert not out.parent.exists()


@pytest.mark.parametrize("command", ["run", "report"])
def test_out_naming_a_directory_is_a_usage_error(
        library: Path, tmp_path: Path, command: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "emptydir"
    target.mkdir()
    assert main([command, str(library), "--out", str(target)]) == 2
    assert f"--out {target} is a directory" in capsys.readouterr().err


def test_the_help_names_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "5 no scenario selected" in out and "its directory must exist" in out


def test_show_exits_like_run_for_a_scenario_that_expects_its_crash(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(CRASH)]) == 0
    assert main(["show", str(CRASH)]) == 0
    out = capsys.readouterr().out
    assert "crashed (injected crash before guard#1) / db RUNNING; expected ok" in out
    assert "-- trace (until the crash)" in out and "SEMANTIC_GUARD_ATTEMPT" in out
    assert "-- SSE events (until the crash)" in out


def test_show_exits_like_run_for_a_malformed_file(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    assert main(["run", str(tmp_path / "multi.yaml")]) == 1
    assert main(["show", str(tmp_path / "multi.yaml")]) == 1
    assert "multi.yaml:4: bar: unknown key" in capsys.readouterr().err


def test_a_tag_that_selects_no_scenario_exits_five(library: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(library), "--tag", "no-such-tag"]) == 5
    assert "no scenario selected" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "validate", "report"])
def test_an_empty_directory_exits_five(tmp_path: Path, command: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "emptydir"
    empty.mkdir()
    assert main([command, str(empty), *(["--out", str(tmp_path / "r")] * (command != "validate"))
                 ]) == 5
    assert f"no scenario selected under {empty}" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_closed_standard_output_ends_show_quietly() -> None:
    path = ROOT / "scenarios" / "outcomes" / "saturated-progress.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", "show", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err
