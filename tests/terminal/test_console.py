"""Colour and width as the environment asks."""

from __future__ import annotations

import io

import pytest

from harness_lab.terminal.console import UNBOUNDED, colour_wanted, cut, width_of


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
