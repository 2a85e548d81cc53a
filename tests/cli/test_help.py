"""Every ``--help`` of ``harness-lab`` read on a terminal of 80 and 100 columns."""

from __future__ import annotations

import re

import pytest

from harness_lab.cli.dispatch import build_parser
from tests.cli.conftest import subparsers


def helps(monkeypatch: pytest.MonkeyPatch, columns: int) -> dict[str, str]:
    """The help of ``harness-lab`` and of each command, rendered ``columns`` wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    texts = {"harness-lab": build_parser().format_help()}
    texts.update({name: parser.format_help() for name, parser in subparsers().items()})
    return texts


def exit_code_rows(text: str) -> list[list[str]]:
    """The rows of a help's ``exit codes:`` section, each its lines (a code's line, then
    the lines that continue it)."""
    section = text.split("exit codes:\n", 1)[1].splitlines()
    rows: list[list[str]] = []
    for line in section:
        if re.match(r"  \d", line):
            rows.append([line])
        elif line.strip():
            rows[-1].append(line)
    return rows


def test_no_line_of_any_help_is_wider_than_80_columns(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    too_wide = {(name, line) for name, text in helps(monkeypatch, 80).items()
                for line in text.splitlines() if len(line) > 80}
    assert too_wide == set()


@pytest.mark.parametrize("columns", [80, 100])
def test_wrapping_splits_no_word_and_breaks_at_no_hyphen(monkeypatch: pytest.MonkeyPatch,
                                                        columns: int) -> None:
    unwrapped = helps(monkeypatch, 10_000)
    wrapped = helps(monkeypatch, columns)
    assert {name: text.split() for name, text in wrapped.items()} == {
        name: text.split() for name, text in unwrapped.items()}


@pytest.mark.parametrize("columns", [80, 100])
def test_each_exit_code_continues_under_its_text_on_lines_filled_as_far_as_they_go(
        monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    width = columns - 2  # argparse leaves two columns free
    for name, text in helps(monkeypatch, columns).items():
        if "exit codes:\n" not in text:
            continue
        for row in exit_code_rows(text):
            hang = re.match(r"  \d+\s+", row[0])
            assert hang is not None, (name, row)
            for line, after in zip(row, row[1:], strict=False):
                assert after[:hang.end()].isspace() and after[hang.end()] != " ", (name, row)
                next_word = after.split()[0]
                assert len(line) + 1 + len(next_word) > width, (name, row)


def test_the_top_level_exit_codes_read_as_whole_sentences_at_80_columns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = exit_code_rows(helps(monkeypatch, 80)["harness-lab"])
    two = " ".join(" ".join(rows[2]).split())
    assert two.startswith("2 usage error: a missing path, or an --out that is a directory "
                          "or lies in a directory that does not exist")
    assert two.endswith("a missing optional package (the message names the extra to install)")


def test_no_option_states_its_default_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    twice = [(name, line.strip()) for name, text in helps(monkeypatch, 10_000).items()
             for line in text.splitlines() if len(re.findall(r"\bdefault\b", line)) > 1]
    assert twice == []
