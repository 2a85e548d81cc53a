"""Colour and width as the environment asks, and text from files made safe to print."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness_lab.terminal.console import UNBOUNDED, colour_wanted, cut, printable, width_of
from tests.conftest import OUTCOMES


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def test_a_terminal_gets_colour_and_a_pipe_does_not() -> None:
    assert colour_wanted(Tty()) and not colour_wanted(io.StringIO())


def test_force_color_colours_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour_wanted(io.StringIO())


def test_no_color_wins_over_a_terminal_and_over_force_color(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Tty())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not colour_wanted(io.StringIO())


def test_columns_sets_the_width_and_a_pipe_without_it_is_unbounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert width_of(io.StringIO()) == UNBOUNDED
    monkeypatch.setenv("COLUMNS", "100")
    assert width_of(io.StringIO()) == 100


def test_a_line_is_cut_to_the_width_ending_in_an_ellipsis() -> None:
    assert cut("abcdef", 4) == "abc…"
    assert cut("abcd", 4) == "abcd"


@pytest.mark.parametrize(("text", "shown"), [
    ("red\x1b[31m", "red\\x1b[31m"),
    ("ok\rFAILED", "ok\\rFAILED"),
    ("a\tb\x00c\x7fd\x9b", "a\\tb\\x00c\\x7fd\\x9b"),
    ("abc\u202edef\u2066", "abc\\u202edef\\u2066"),
    ("line\nbreak, é, 日本, emoji \U0001f600", "line\nbreak, é, 日本, emoji \U0001f600"),
], ids=["escape sequence", "carriage return", "other controls", "bidi controls", "kept"])
def test_control_characters_are_written_as_their_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_a_scenario_named_with_escape_sequences_cannot_rewrite_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    source = (OUTCOMES / "conclusion-guards-pass.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(source.replace("name: conclusion-guards-pass",
                                      'name: "ok\\x1b[2K\\rFAKE\\u202e"'), encoding="utf-8")
    logs = tmp_path / "logs"
    for command in (["run", str(hostile), "--log-dir", str(logs)],
                    ["run", str(hostile), "--no-log", "--format", "markdown"],
                    ["show", str(hostile)]):
        main(command)
        out = capsys.readouterr().out
        assert "ok\\x1b[2K" in out, command
        assert not {"\x1b", "\r", "\u202e"} & set(out), command
    (log,) = logs.glob("*.jsonl")
    main(["explain", str(log)])
    out = capsys.readouterr().out
    assert out.startswith("== ok\\x1b[2K\\rFAKE\\u202e / run run-000001\n")


def test_a_file_problem_naming_a_hostile_key_is_printed_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    source = (OUTCOMES / "conclusion-guards-pass.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(source + '"bad\\x1b[31mkey": 1\n', encoding="utf-8")
    for command in ("validate", "sweep"):
        assert main([command, str(hostile)]) == 2
        err = capsys.readouterr().err
        assert "bad\\x1b[31mkey: unknown key" in err, command
        assert "\x1b" not in err, command
