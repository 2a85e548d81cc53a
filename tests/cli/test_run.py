"""``harness-lab run``, ``validate``, ``show`` and ``schema``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from tests.cli.conftest import GOOD, ROOT, WRONG, on_a_terminal, run_cli
from tests.scenarios import missing_context


def test_run_prints_one_row_per_scenario_and_exits_zero(library: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    assert main(["run", str(library)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["scenario", "intent", "run_state", "release", "fallback",
                              "db_status", "result"]
    assert out[1].split() == ["good", "DIAGNOSIS", "SUCCESS", "FALLBACK",
                              "MISSING_REQUIRED_CONTEXT", "SUCCESS", "ok"]
    assert out[-1].startswith("1 scenario run(s), 1 ok in ")


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
        ["scenario", "file", "line", "verdict", "intent", "run_state", "release_outcome",
         "fallback_type", "db_status", "invariants", "tags", "duration_s", "mismatches",
         "error"],
        ["good", str(library / "good.yaml"), "1", "ok", "DIAGNOSIS", "SUCCESS", "FALLBACK",
         "MISSING_REQUIRED_CONTEXT", "SUCCESS", "[]", "[]", "0.0", "[]", ""],
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
    assert "broken.yaml:3: modle: unknown key" in rows[0]["error"]
    assert (rows[0]["verdict"], rows[0]["line"]) == ("ERROR", "3")
    assert (rows[1]["verdict"], rows[1]["error"]) == ("ok", "")


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
    assert "foo: unknown key (and 1 more) |" in lines[2]
    main(["run", str(tmp_path)])
    table = capsys.readouterr().out.split("short summary")[0]
    assert len(table.splitlines()) == 2


def test_csv_and_json_keep_the_problems_on_their_own_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    main(["run", str(tmp_path), "--format", "json"])
    [row] = json.loads(capsys.readouterr().out)
    assert row["error"].count("\n") == 1
    main(["run", str(tmp_path), "--format", "csv"])
    [parsed] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert parsed["error"] == row["error"]


def test_an_error_row_shows_its_invariants_as_not_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "multi.yaml").write_text(MULTI, encoding="utf-8")
    assert main(["run", str(tmp_path), "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert row["invariants"] is None


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


MATRIX = missing_context("a-scenario-whose-matrix-variants-have-long-names",
                         "a matrix of two axes", rest="""\
expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}
matrix:
  config.deadline_s: [60.0, 61.0]
  config.no_gain_threshold: [2, 3]
""")


LISTED = missing_context("listed", "a matrix list", rest="""\
expect: {release_outcome: FALLBACK}
matrix:
  - name: quick
    set: {config.deadline_s: 5.0}
  - name: wrong
    set: {config.deadline_s: 6.0}
    expect: {release_outcome: SUCCESS}
""")


def test_every_line_of_run_fits_a_hundred_columns_with_every_state_whole(
        library: Path) -> None:
    (library / "matrix.yaml").write_text(MATRIX, encoding="utf-8")
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    proc = run_cli("run", str(library), env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1
    assert max(len(line) for line in lines) <= 100
    rows = [line.split() for line in lines[1:7]]
    states = ["SUCCESS", "FALLBACK", "MISSING_REQUIRED_CONTEXT", "SUCCESS"]
    assert [r[1:] for r in rows] == [states + ["ok"]] * 5 + [states + ["FAILED"]]
    # 39 columns for names: the variant's keys give way before the name does
    assert rows[1][0] == "a-scenario-whose-matrix-varian…[60.0,2]"
    assert lines[0].split()[:2] == ["scenario", "run_state"]  # the intent column gave way
    assert "intent left out at this width" in lines[7]


@pytest.mark.slow
def test_run_ends_with_one_summary_line_per_failure_naming_file_line_and_difference(
        library: Path) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    proc = run_cli("run", str(library), env={"COLUMNS": "300"})
    summary = proc.stdout.split("short summary\n")[1].splitlines()
    assert summary[0] == (f"FAILED wrong ({library / 'wrong.yaml'}:6): release_outcome: "
                          "expected SUCCESS, got FALLBACK")
    assert summary[1].startswith("2 scenario run(s), 1 ok, 1 failed in ")


@pytest.mark.slow
def test_run_is_coloured_only_when_asked_or_on_a_terminal(library: Path) -> None:
    assert "\x1b[" not in run_cli("run", str(library)).stdout
    assert "\x1b[" in run_cli("run", str(library), env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in run_cli("run", str(library),
                               env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


@pytest.mark.slow  # the library on a pseudo-terminal
def test_run_draws_a_progress_bar_counting_runs_on_a_terminal_only(library: Path) -> None:
    (library / "matrix.yaml").write_text(MATRIX, encoding="utf-8")
    drawn = on_a_terminal("run", str(library))
    assert "scenario runs" in drawn and "5/5" in drawn
    assert "scenario runs" not in on_a_terminal("run", str(library), "--quiet")
    assert "scenario runs" not in run_cli("run", str(library)).stderr


@pytest.mark.parametrize(("suffix", "check"), [
    (".json", lambda text: json.loads(text)[0]["tags"] == []),
    (".csv", lambda text: text.startswith("scenario,file,line,verdict,")),
    (".md", lambda text: text.startswith("| scenario | intent | run_state |")),
    (".html", lambda text: text.startswith("<!DOCTYPE html>") and "<table" in text),
])
def test_out_picks_its_format_from_the_extension_and_the_summary_still_shows(
        library: Path, tmp_path: Path, suffix: str, check: Any,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the summary line whole, whatever the caller's width
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    out = tmp_path / f"rows{suffix}"
    assert main(["run", str(library), "--out", str(out)]) == 1
    assert check(out.read_text(encoding="utf-8"))
    err = capsys.readouterr().err
    assert "FAILED wrong (" in err and "1 failed" in err


def test_json_rows_carry_file_line_tags_duration_and_mismatches(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    main(["run", str(library / "wrong.yaml"), "--format", "json"])
    [row] = json.loads(capsys.readouterr().out)
    assert (row["file"], row["line"]) == (str(library / "wrong.yaml"), 6)
    assert row["mismatches"] == [{"field": "release_outcome", "expected": "SUCCESS",
                                  "observed": "FALLBACK"}]
    assert row["duration_s"] == 0 and row["tags"] == [] and row["verdict"] == "FAILED"


def test_file_with_a_variant_in_brackets_runs_that_variant_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "listed.yaml"
    path.write_text(LISTED, encoding="utf-8")
    assert main(["run", f"{path}[quick]", "--format", "json"]) == 0
    assert [r["scenario"] for r in json.loads(capsys.readouterr().out)] == ["listed[quick]"]
    assert main(["run", f"{path}[wrong]", "--format", "json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert (row["scenario"], row["line"]) == ("listed[wrong]", 12)
    assert main(["show", f"{path}[quick]"]) == 0
    assert "== listed[quick]:" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "show"])
def test_an_unknown_variant_is_a_usage_error_naming_the_variants(
        tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "listed.yaml"
    path.write_text(LISTED, encoding="utf-8")
    assert main([command, f"{path}[slow]"]) == 2
    assert "has no variant 'slow'; its variants: quick, wrong" in capsys.readouterr().err


def test_hidden_directories_and_virtual_environments_are_not_searched(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for hidden in (".venv/lib", "node_modules/x", "__pycache__", "env"):
        (library / hidden).mkdir(parents=True)
        (library / hidden / "bad.yaml").write_text("nope: [", encoding="utf-8")
    (library / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    assert main(["validate", str(library)]) == 0
    capsys.readouterr()
    assert main(["run", str(library), "--format", "json"]) == 0
    assert [r["scenario"] for r in json.loads(capsys.readouterr().out)] == ["good"]


def test_show_takes_a_directory(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    assert main(["show", str(library)]) == 1
    out = capsys.readouterr().out
    assert "== good:" in out and "== wrong:" in out


@pytest.mark.slow
def test_show_lines_fit_the_columns() -> None:
    proc = run_cli("show", "scenarios/outcomes/conclusion-guards-pass.yaml",
                env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and max(map(len, lines)) == 100
    assert any(line.endswith("…") for line in lines)


def test_show_wraps_the_description_and_verdict_where_it_cuts_the_events(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["show", str(ROOT / "scenarios/outcomes/conclusion-guards-pass.yaml")]) == 0
    heading = capsys.readouterr().out.split("-- SSE events")[0]
    lines = heading.splitlines()
    assert len(lines) > 2 and max(map(len, lines)) <= 60
    assert not any(line.endswith("…") for line in lines)
    assert " ".join(heading.split()).endswith("; expected ok; invariants ok")


def test_validate_takes_a_file_with_a_variant_as_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "listed.yaml"
    path.write_text(LISTED, encoding="utf-8")
    assert main(["validate", f"{path}[quick]"]) == 0
    assert "2 scenario(s) valid" in capsys.readouterr().out


def test_a_coloured_fallback_cell_has_the_html_report_colour_of_its_type(
        library: Path) -> None:
    from harness_lab.report.palette import OUTCOME_COLORS

    colour = OUTCOME_COLORS["FALLBACK:MISSING_REQUIRED_CONTEXT"].lstrip("#")
    rgb = ";".join(str(int(colour[i:i + 2], 16)) for i in (0, 2, 4))
    out = run_cli("run", str(library), env={"FORCE_COLOR": "1"}).stdout
    assert f"\x1b[38;2;{rgb}mFALLBACK" in out


def test_an_xml_out_file_gets_a_junit_report_of_the_run(
        library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from xml.etree import ElementTree as ET

    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    out = tmp_path / "results.xml"
    assert main(["run", str(library), "--out", str(out), "--no-log"]) == 1
    root = ET.parse(out).getroot()
    assert (root.tag, root.attrib["tests"], root.attrib["failures"]) == ("testsuites", "2", "1")
    assert [c.attrib["name"] for c in root.iter("testcase")] == ["good", "wrong"]
    assert all(float(c.attrib["time"]) >= 0 for c in root.iter("testcase"))
    assert "wrote 2 row(s) as junit to" in capsys.readouterr().err


def test_format_junit_without_out_prints_the_xml(library: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(library), "--format", "junit", "--no-log"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<?xml version='1.0' encoding='utf-8'?>\n<testsuites ")
    assert out.endswith("</testsuites>\n")


def test_on_github_actions_each_failure_is_an_error_annotation_after_the_table(
        library: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(library))
    assert main(["run", str(library), "--no-log"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("::error file=wrong.yaml,line=6,title=FAILED wrong::"
                       "release_outcome: expected SUCCESS, got FALLBACK")
    assert out[-2].startswith("2 scenario run(s), 1 ok, 1 failed in ")


def test_on_github_actions_annotations_keep_out_of_data_on_standard_output(
        library: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["run", str(library), "--format", "json", "--no-log"]) == 1
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 2
    assert captured.err.splitlines()[-1].startswith(
        f"::error file={library / 'wrong.yaml'},line=6,title=FAILED wrong::")


def test_without_github_actions_there_is_no_annotation(
        library: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main(["run", str(library), "--no-log"]) == 1
    captured = capsys.readouterr()
    assert "::error" not in captured.out + captured.err


def test_a_scenario_file_that_links_to_itself_is_an_error_row_naming_it_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the summary line whole, whatever the caller's width
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "self.yaml").symlink_to("self.yaml")
    assert main(["run", str(tmp_path), "--log-dir", str(tmp_path / "logs")]) == 1
    out = capsys.readouterr().out
    assert f"ERROR self ({tmp_path / 'self.yaml'}): <document>: cannot read file: Too many " \
           "levels of symbolic links" in out
    assert "1 ok, 1 error" in out
