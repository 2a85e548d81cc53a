"""The command line as a whole: the parser, unknown commands, a closed pipe, a missing
optional package, and a start that stays light."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.cli.dispatch import build_parser
from tests.cli.conftest import ROOT, subparsers

CRASH = ROOT / "scenarios" / "faults" / "crash-before-guard.yaml"


def test_version_names_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"harness-lab {__version__}\n"


def test_every_option_of_every_command_has_help() -> None:
    missing = [f"{name} {a.option_strings or a.dest}"
               for name, parser in subparsers().items() for a in parser._actions
               if not a.help]
    assert missing == []


def test_a_bare_command_line_lists_the_commands_as_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: harness-lab [-h] [--version] COMMAND ...\n")
    listed = [line.split()[0] for line in err.splitlines() if line.startswith("    ")]
    assert listed[:4] == ["run", "validate", "show", "schema"]
    assert {"explore", "audit", "serve", "conform"} <= set(listed)


def test_a_misspelt_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rn", "scenarios"]) == 2
    assert capsys.readouterr().err == ("harness-lab: unknown command 'rn'; did you mean 'run'? "
                                       "(harness-lab --help lists the commands)\n")


def test_a_misspelt_option_is_reported_by_its_command_with_the_option_it_looks_like(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "scenarios", "--fromat", "json"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: harness-lab run ")
    assert err.endswith("harness-lab run: error: unrecognized arguments: --fromat json; "
                        "did you mean --format?\n")


def test_an_option_like_none_of_the_commands_gets_no_guess(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(CRASH), "--runs", "2000"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "harness-lab sweep: error: unrecognized arguments: --runs 2000\n")


@pytest.mark.parametrize("command", ["validate", "show", "explore", "report", "record",
                                     "sweep", "providers", "conform --serve"])
def test_every_command_that_reads_a_scenario_file_names_a_missing_one_alike(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nosuch.yaml")
    assert main([*command.split(), missing]) == 2
    assert capsys.readouterr().err == (f"harness-lab {command.split()[0]}: no such file or "
                                       f"directory: {missing}\n")


@pytest.mark.parametrize("command", ["run", "validate", "report", "conform --serve"])
def test_a_command_run_where_there_is_no_scenarios_directory_says_how_to_make_one(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(command.split()) == 2
    assert capsys.readouterr().err == (
        f"harness-lab {command.split()[0]}: no such file or directory: scenarios; name "
        "scenario files or directories, or make a starter directory with `harness-lab init`\n")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_optional_package_is_one_line_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    canonical = ROOT / "benchmarks" / "canonical.yaml"
    assert main(["sweep", str(canonical), "--samples", "4", "--scheduler",
                 "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err == ("harness-lab sweep: this needs the optional package 'distributed'; "
                   "install it with: pip install 'harness_lab[dask]'\n")


@pytest.mark.parametrize("args", [["--help"], ["validate", str(CRASH)], ["run", "--help"]])
def test_help_and_validate_import_no_heavy_package(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness_lab.cli", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HARNESS_LAB_PURE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"pandas", "matplotlib", "sqlalchemy", "joblib", "httpx", "vcr"}


def test_every_help_fits_a_hundred_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    helps = {"harness-lab": build_parser().format_help()}
    helps.update({name: p.format_help() for name, p in subparsers().items()
                  if name in ("run", "validate", "show", "schema", "report", "sweep", "explore",
                              "init")})
    too_wide = {name: line for name, text in helps.items() for line in text.splitlines()
                if len(line) > 100}
    assert too_wide == {}


def test_ctrl_c_inside_a_command_ends_it_with_130_and_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import harness_lab.scenarios.validate as validate

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt  # what Ctrl-C raises wherever the command is

    monkeypatch.setattr(validate, "validate_files", interrupted)
    try:
        code = main(["validate", str(CRASH)])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C left the command line as a KeyboardInterrupt")
    assert code == 130
    assert capsys.readouterr().err == "harness-lab validate: interrupted\n"


def test_ctrl_c_while_serve_starts_ends_it_without_a_traceback(tmp_path: Path) -> None:
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "harness_lab", "serve", "--scenario", str(CRASH), "--port", "0",
         "--db", str(tmp_path / "runs.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(0.3)  # past the interpreter's start, inside the command's own imports
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    # 0 once it listens; 130 before; a shell reads an end by SIGINT itself as 130 too, which
    # the interpreter chooses now and then when the interrupt landed inside an import
    assert proc.returncode in (0, 130, -signal.SIGINT), (proc.returncode, out, err)


def test_a_closed_standard_output_ends_show_quietly() -> None:
    path = ROOT / "scenarios" / "outcomes" / "saturated-progress.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", "show", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_a_closed_standard_output_ends_run_with_141_and_no_traceback(library: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", "run", str(library)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "HARNESS_LAB_PURE": "1", "FORCE_COLOR": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err


def test_the_console_script_and_both_module_forms_start_the_dispatcher() -> None:
    import importlib
    import tomllib

    from harness_lab import __version__
    from harness_lab.cli import dispatch

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module, _, name = project["scripts"]["harness-lab"].partition(":")
    assert getattr(importlib.import_module(module), name) is dispatch.main
    for form in ("harness_lab", "harness_lab.cli"):
        done = subprocess.run([sys.executable, "-m", form, "--version"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, f"harness-lab {__version__}\n")


def _ascii_only(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``harness-lab ARGS`` writing to streams whose encoding is ASCII (a legacy console,
    ``PYTHONIOENCODING``), 80 columns wide."""
    return subprocess.run([sys.executable, "-m", "harness_lab", *args], cwd=ROOT,
                          capture_output=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "80"})


def test_a_console_that_is_not_utf8_gets_escapes_rather_than_a_traceback() -> None:
    done = _ascii_only("--help")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "doc \\xa715" in done.stdout.decode("ascii")  # the section sign, escaped


def test_a_table_on_an_ascii_console_marks_a_shortened_name_with_a_tilde_and_stays_aligned(
        ) -> None:
    done = _ascii_only("run", "scenarios/outcomes", "--no-log", "-q")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    rows = done.stdout.decode("ascii").splitlines()
    assert "conclusio~ards-pass" in done.stdout.decode("ascii")
    table = [row for row in rows[1:] if row.endswith(" ok")]
    assert len(table) == 13
    assert {row.rindex(" ok") + 1 for row in table} == {rows[0].index("result")}
