"""What the commands share: usage errors checked before anything runs, nothing selected,
each command's own exit codes, and help that shows the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.cli.common import COMMAND_EXIT_CODES
from tests.cli.conftest import subparsers


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


@pytest.mark.parametrize("command", ["run", "validate", "report"])
def test_an_empty_directory_exits_five(tmp_path: Path, command: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "emptydir"
    empty.mkdir()
    assert main([command, str(empty), *(["--out", str(tmp_path / "r")] * (command != "validate"))
                 ]) == 5
    assert f"no scenario selected under {empty}" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("command", "absent"), [
    ("validate", ["--out", "--tag"]), ("show", ["--out", "--tag"]),
])
def test_a_command_lists_only_its_own_exit_codes(command: str, absent: list[str]) -> None:
    epilog = subparsers()[command].epilog or ""
    assert "exit codes:" in epilog
    assert not [word for word in absent if word in epilog]


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "(default: table)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["run", "validate", "show", "report", "sweep", "explore",
                                     "init"])
def test_each_command_lists_its_exit_codes_in_its_help(command: str) -> None:
    epilog = subparsers()[command].epilog or ""
    assert epilog.startswith("exit codes:\n")
    codes = [int(line.split()[0]) for line in epilog.splitlines()[1:]
             if line[:6].strip().isdigit()]
    assert codes == list(COMMAND_EXIT_CODES[command])


def test_an_out_that_cannot_be_written_is_said_and_the_rows_go_to_standard_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli.common import emit

    target = tmp_path / "rows.csv"
    target.mkdir()  # a directory: writing it fails
    assert emit("run", "a,b\n", str(target), or_stdout=True) == 2
    out, err = capsys.readouterr()
    assert out == "a,b\n"
    assert err.startswith(f"harness-lab run: cannot write --out {target}: ")
    assert err.endswith("; the rows follow on standard output\n")
    assert emit("schema", "{}\n", str(target)) == 2
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("argv", [
    ["serve", "--scenario", "scenarios/outcomes/conclusion-guards-pass.yaml", "--port", "99999"],
    ["providers", "scenarios/outcomes/conclusion-guards-pass.yaml", "--port", "-1"],
    ["conform", "--serve", "--providers-port", "65536", "scenarios/outcomes"],
])
def test_a_port_outside_0_to_65535_is_a_usage_error_naming_the_range(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert "a port is 0 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize(("typed", "meant"), [
    ("missing-context", "missing-context.yaml"),
    ("missing-contxt.yaml", "missing-context.yaml"),
    ("missing-context[deadline]", "missing-context.yaml[deadline]"),
    ("outcome", "outcomes"),
])
def test_a_missing_path_one_typo_from_an_entry_beside_it_is_named(
        tmp_path: Path, typed: str, meant: str) -> None:
    from harness_lab.cli.common import nearest_path

    (tmp_path / "missing-context.yaml").write_text("name: x\n", encoding="utf-8")
    (tmp_path / "outcomes").mkdir()
    assert nearest_path(str(tmp_path / typed)) == str(tmp_path / meant)


def test_a_mistyped_variant_path_written_with_a_dot_keeps_its_variant(tmp_path: Path) -> None:
    from harness_lab.cli.common import nearest_path

    (tmp_path / "missing-context.yaml").write_text("name: x\n", encoding="utf-8")
    assert nearest_path(f"{tmp_path}/./missing-context[deadline]") == (
        f"{tmp_path}/missing-context.yaml[deadline]")


def test_a_missing_path_like_nothing_beside_it_gets_no_guess(tmp_path: Path) -> None:
    from harness_lab.cli.common import nearest_path

    (tmp_path / "missing-context.yaml").write_text("name: x\n", encoding="utf-8")
    assert nearest_path(str(tmp_path / "budget.yaml")) is None
    assert nearest_path(str(tmp_path / "gone" / "missing-context.yaml")) is None


def test_the_usage_error_of_a_mistyped_path_says_what_was_meant(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "scenarios/outcomes/missing-contxt.yaml", "--no-log"]) == 2
    assert capsys.readouterr().err == (
        "harness-lab run: no such file or directory: scenarios/outcomes/missing-contxt.yaml "
        "(did you mean scenarios/outcomes/missing-context.yaml?)\n")


def test_a_mistyped_tag_that_selects_nothing_is_answered_with_the_tag_meant(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "scenarios/outcomes", "--tag", "outcome_tabel", "--no-log"]) == 5
    assert capsys.readouterr().err == (
        "harness-lab run: no scenario selected under scenarios/outcomes with the tag(s) "
        "outcome_tabel; did you mean --tag outcome-table? (exit 5)\n")
    assert main(["run", "scenarios/outcomes", "--tag", "zzzz", "--no-log"]) == 5
    assert "did you mean" not in capsys.readouterr().err


@pytest.mark.parametrize(("args", "says"), [
    (["report", "scenarios/outcomes", "--out", "{tmp}/r.csv"],
     "harness-lab report: --out {tmp}/r.csv: this writes html, not the csv a .csv file holds"),
    (["sweep", "scenarios/outcomes/missing-context.yaml", "--samples", "2", "--out",
      "{tmp}/s.md"],
     "harness-lab sweep: --out {tmp}/s.md: this writes csv or json, not the markdown a .md "
     "file holds"),
])
def test_an_out_whose_extension_names_a_format_the_command_does_not_write_is_refused_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str) -> None:
    assert main([a.format(tmp=tmp_path) for a in args]) == 2
    assert capsys.readouterr().err.startswith(says.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_sweep_out_named_json_holds_json_rows(tmp_path: Path) -> None:
    import json

    assert main(["sweep", "scenarios/outcomes/missing-context.yaml", "--samples", "3",
                 "--out", str(tmp_path / "s.json")]) == 0
    rows = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [(r["sample"], r["release_outcome"]) for r in rows] == [
        (0, "FALLBACK"), (1, "FALLBACK"), (2, "FALLBACK")]


def test_schema_and_calibrate_refuse_an_out_named_for_another_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--out", str(tmp_path / "schema.md")]) == 2
    assert "this writes json, not the markdown a .md file holds" in capsys.readouterr().err
    assert main(["calibrate", "scenarios", "--out", str(tmp_path / "block.json")]) == 2
    assert "this writes yaml, not the json a .json file holds" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_error_wraps_to_the_terminal_and_stays_one_line_when_piped(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_lab.cli.common import fail

    message = ("/tmp/none.jsonl: no such file (give a run log, a JSON Lines export, OTLP "
               "JSON or a database URL such as sqlite:///runs.db)")
    assert fail("audit", message) == 2
    assert capsys.readouterr().err == f"harness-lab audit: {message}\n"
    monkeypatch.setenv("COLUMNS", "80")
    fail("audit", message)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and max(map(len, lines)) <= 80 and lines[1].startswith("  ")
    assert " ".join(line.strip() for line in lines) == f"harness-lab audit: {message}"
