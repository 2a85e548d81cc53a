"""The harness-lab command line."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


@pytest.mark.slow
def test_a_closed_standard_output_ends_show_quietly() -> None:
    path = ROOT / "scenarios" / "outcomes" / "saturated-progress.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", "show", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


MATRIX = """\
name: a-scenario-whose-matrix-variants-have-long-names
description: a matrix of two axes
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}
matrix:
  config.deadline_s: [60.0, 61.0]
  config.no_gain_threshold: [2, 3]
"""
LISTED = """\
name: listed
description: a matrix list
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
expect: {release_outcome: FALLBACK}
matrix:
  - name: quick
    set: {config.deadline_s: 5.0}
  - name: wrong
    set: {config.deadline_s: 6.0}
    expect: {release_outcome: SUCCESS}
"""


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
         ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "harness_lab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**base, "HARNESS_LAB_PURE": "1", **(env or {})})


@pytest.mark.slow
def test_every_line_of_run_fits_a_hundred_columns_with_every_state_whole(
        library: Path) -> None:
    (library / "matrix.yaml").write_text(MATRIX, encoding="utf-8")
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    proc = _cli("run", str(library), env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1
    assert max(len(line) for line in lines) <= 100
    rows = [line.split() for line in lines[1:7]]
    states = ["SUCCESS", "FALLBACK", "MISSING_REQUIRED_CONTEXT", "SUCCESS"]
    assert [r[1:] for r in rows] == [states + ["ok"]] * 5 + [states + ["FAILED"]]
    assert rows[1][0] == "a…[deadline_s=60.0,no_gain_threshold=2]"  # 39 columns for names
    assert lines[0].split()[:2] == ["scenario", "run_state"]  # the intent column gave way
    assert "intent left out at this width" in lines[7]


@pytest.mark.slow
def test_run_ends_with_one_summary_line_per_failure_naming_file_line_and_difference(
        library: Path) -> None:
    (library / "wrong.yaml").write_text(WRONG, encoding="utf-8")
    proc = _cli("run", str(library), env={"COLUMNS": "300"})
    summary = proc.stdout.split("short summary\n")[1].splitlines()
    assert summary[0] == (f"FAILED wrong ({library / 'wrong.yaml'}:6): release_outcome: "
                          "expected SUCCESS, got FALLBACK")
    assert summary[1].startswith("2 scenario run(s), 1 ok, 1 failed in ")


@pytest.mark.slow
def test_run_is_coloured_only_when_asked_or_on_a_terminal(library: Path) -> None:
    assert "\x1b[" not in _cli("run", str(library)).stdout
    assert "\x1b[" in _cli("run", str(library), env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in _cli("run", str(library),
                               env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def _on_a_terminal(*args: str, quiet: bool = False) -> str:
    """Run the command with standard error on a pseudo-terminal; return what it drew."""
    import pty

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=follower,
                            env={**env, "HARNESS_LAB_PURE": "1", "COLUMNS": "100"})
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    proc.wait(timeout=300)
    os.close(leader)
    return drawn.decode(errors="replace")


@pytest.mark.slow
def test_run_draws_a_progress_bar_counting_runs_on_a_terminal_only(library: Path) -> None:
    (library / "matrix.yaml").write_text(MATRIX, encoding="utf-8")
    drawn = _on_a_terminal("run", str(library))
    assert "scenario runs" in drawn and "5/5" in drawn
    assert "scenario runs" not in _on_a_terminal("run", str(library), "--quiet")
    assert "scenario runs" not in _cli("run", str(library)).stderr


@pytest.mark.parametrize(("suffix", "check"), [
    (".json", lambda text: json.loads(text)[0]["tags"] == []),
    (".csv", lambda text: text.startswith("scenario,file,line,verdict,")),
    (".md", lambda text: text.startswith("| scenario | intent | run_state |")),
    (".html", lambda text: text.startswith("<!DOCTYPE html>") and "<table" in text),
])
def test_out_picks_its_format_from_the_extension_and_the_summary_still_shows(
        library: Path, tmp_path: Path, suffix: str, check: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
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
    proc = _cli("show", "scenarios/outcomes/conclusion-guards-pass.yaml",
                env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and max(map(len, lines)) == 100
    assert any(line.endswith("…") for line in lines)


def test_version_names_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"harness-lab {__version__}\n"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from harness_lab.cli import build_parser

    [action] = [a for a in build_parser()._actions
                if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_option_of_every_command_has_help() -> None:
    missing = [f"{name} {a.option_strings or a.dest}"
               for name, parser in _subparsers().items() for a in parser._actions
               if not a.help]
    assert missing == []


@pytest.mark.parametrize(("command", "absent"), [
    ("validate", ["--out", "--tag"]), ("show", ["--out", "--tag"]),
])
def test_a_command_lists_only_its_own_exit_codes(command: str, absent: list[str]) -> None:
    epilog = _subparsers()[command].epilog or ""
    assert "exit codes:" in epilog
    assert not [word for word in absent if word in epilog]


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["explore", "--help"])
    assert "(default: table)" in " ".join(capsys.readouterr().out.split())


def test_a_missing_optional_package_is_one_line_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    canonical = ROOT / "benchmarks" / "canonical.yaml"
    assert main(["sweep", str(canonical), "--samples", "4", "--scheduler",
                 "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err == ("harness-lab sweep: this needs the optional package 'distributed'; "
                   "install it with: pip install 'harness_lab[dask]'\n")


@pytest.mark.slow
def test_explore_lines_fit_a_hundred_columns() -> None:
    proc = _cli("explore", "--fault", "crash,deadline",
                "scenarios/outcomes/conclusion-guards-pass.yaml", env={"COLUMNS": "100"})
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 36
    assert max(map(len, lines)) <= 100
    assert " conclusion…@before router#1/crash crash " in proc.stdout


def test_a_sweep_table_drops_empty_categories_that_csv_keeps(
        capsys: pytest.CaptureFixture[str]) -> None:
    canonical = str(ROOT / "benchmarks" / "canonical.yaml")
    assert main(["sweep", canonical, "--samples", "10"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in table] == [["release_outcome", "count"],
                                                    ["SUCCESS", "10"]]
    assert main(["sweep", canonical, "--samples", "10", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["release_outcome"], r["count"]) for r in rows] == [
        ("SUCCESS", "10"), ("FALLBACK", "0"), ("FAILED", "0"), ("CANCELLED", "0")]


def test_a_misspelt_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rn", "scenarios"]) == 2
    assert capsys.readouterr().err == ("harness-lab: unknown command 'rn'; did you mean 'run'? "
                                       "(harness-lab --help lists the commands)\n")


def test_validate_takes_a_file_with_a_variant_as_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "listed.yaml"
    path.write_text(LISTED, encoding="utf-8")
    assert main(["validate", f"{path}[quick]"]) == 0
    assert "2 scenario(s) valid" in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_and_report_draw_progress_on_a_terminal(library: Path, tmp_path: Path) -> None:
    canonical = str(ROOT / "benchmarks" / "canonical.yaml")
    assert "sweep chunks" in _on_a_terminal("sweep", canonical, "--samples", "400")
    assert "sweep chunks" not in _on_a_terminal("sweep", canonical, "--samples", "400",
                                                 "--quiet")
    drawn = _on_a_terminal("report", str(library), "--out", str(tmp_path / "r.html"))
    assert "scenario runs" in drawn


@pytest.mark.parametrize("args", [["--help"], ["validate", str(CRASH)], ["run", "--help"]])
def test_help_and_validate_import_no_heavy_package(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness_lab.cli", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HARNESS_LAB_PURE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"pandas", "matplotlib", "sqlalchemy", "joblib", "httpx", "vcr"}


@pytest.mark.parametrize("command", ["run", "validate", "show", "report", "sweep", "explore",
                                     "init"])
def test_each_command_lists_its_exit_codes_in_its_help(command: str) -> None:
    from harness_lab.cli import COMMAND_EXIT_CODES

    epilog = _subparsers()[command].epilog or ""
    assert epilog.startswith("exit codes:\n")
    codes = [int(line.split()[0]) for line in epilog.splitlines()[1:]
             if line[:6].strip().isdigit()]
    assert codes == list(COMMAND_EXIT_CODES[command])


def test_every_help_fits_a_hundred_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_lab.cli import build_parser

    monkeypatch.setenv("COLUMNS", "100")
    helps = {"harness-lab": build_parser().format_help()}
    helps.update({name: p.format_help() for name, p in _subparsers().items()
                  if name in ("run", "validate", "show", "schema", "report", "sweep", "explore",
                              "init")})
    too_wide = {name: line for name, text in helps.items() for line in text.splitlines()
                if len(line) > 100}
    assert too_wide == {}


@pytest.mark.slow
def test_a_coloured_fallback_cell_has_the_html_report_colour_of_its_type(
        library: Path) -> None:
    from harness_lab.report.palette import OUTCOME_COLORS

    colour = OUTCOME_COLORS["FALLBACK:MISSING_REQUIRED_CONTEXT"].lstrip("#")
    rgb = ";".join(str(int(colour[i:i + 2], 16)) for i in (0, 2, 4))
    out = _cli("run", str(library), env={"FORCE_COLOR": "1"}).stdout
    assert f"\x1b[38;2;{rgb}mFALLBACK" in out


@pytest.mark.slow
def test_a_closed_standard_output_ends_run_with_141_and_no_traceback(library: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", "run", str(library)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "HARNESS_LAB_PURE": "1", "FORCE_COLOR": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err
