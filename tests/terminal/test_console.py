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


def test_text_from_a_scenario_file_cannot_rewrite_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    source = (OUTCOMES / "conclusion-guards-pass.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(source.replace(
        "conclusion: The checkout database connection pool is exhausted.",
        'conclusion: "pool exhausted\\x1b[2K\\rFAKE\\u202e"').replace(
        "description: A conclusion whose evidence and semantics pass both guards is released "
        "as a report.", 'description: "\\x1b[8mhidden\\x1b[0m A conclusion"'),
        encoding="utf-8")
    logs = tmp_path / "logs"
    assert main(["show", str(hostile)]) == 0
    shown = capsys.readouterr().out
    assert main(["run", str(hostile), "-q", "--log-dir", str(logs)]) == 0
    capsys.readouterr()
    (log,) = logs.glob("*.jsonl")
    assert main(["explain", str(log), "--question", "stored_status"]) == 0
    explained = capsys.readouterr().out
    assert "\\x1b[8mhidden\\x1b[0m A conclusion" in shown
    assert "pool exhausted\\x1b[2K\\rFAKE\\u202e" in explained
    for out in (shown, explained):
        assert not {"\x1b", "\r", "\u202e"} & set(out)


def test_a_name_with_a_control_character_is_refused_naming_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    source = (OUTCOMES / "conclusion-guards-pass.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(source.replace("name: conclusion-guards-pass", 'name: "ok\\x1b[2K"'),
                       encoding="utf-8")
    assert main(["validate", str(hostile)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{hostile}:2: name: Value error, the name holds the control character '\\x1b' "
        "(character 3); it is printed on terminals and in test ids: write it in plain text")


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
