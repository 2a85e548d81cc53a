"""Tables that fit the terminal."""

from __future__ import annotations

import io

import pytest

from harness_lab.terminal.tables import (
    MIN_NAME_WIDTH,
    Column,
    human,
    print_table,
    shorten,
    shorten_all,
)

NAME = "policy-deadline-x-no-gain-threshold[config.deadline_s=6.5,config.no_gain_threshold=2]"


def test_a_name_that_fits_is_kept_whole() -> None:
    assert shorten("conclusion-guards-pass", 22) == "conclusion-guards-pass"


def test_a_matrix_variant_keeps_its_variant_and_loses_dotted_key_prefixes_first() -> None:
    assert shorten(NAME, 80) == ("policy-deadline-x-no-gain-threshold"
                                 "[deadline_s=6.5,no_gain_threshold=2]")
    assert shorten(NAME, 71) == ("policy-deadline-x-no-gain-threshold"
                                 "[deadline_s=6.5,no_gain_threshold=2]")


def test_a_variant_then_loses_its_keys_and_the_base_name_its_end() -> None:
    assert shorten(NAME, 50) == "policy-deadline-x-no-gain-threshold[6.5,2]"
    short = shorten(NAME, 20)
    assert short == "policy-deadl…[6.5,2]"
    assert len(short) == 20


def test_a_name_too_long_for_its_variant_part_loses_its_middle() -> None:
    name = "a[" + ",".join(f"k{i}=value-{i}" for i in range(6)) + "]"
    short = shorten(name, 20)
    assert short == "a[value-0,…,value-5]"


def test_names_that_would_read_alike_are_shown_where_they_differ() -> None:
    names = ["fault-budget-model-calls", "fault-budget-tool-calls", "fault-budget-bytes"]
    assert shorten([names[0]][0], 12) == shorten(names[1], 12)  # alone, two read alike
    assert shorten_all(names, 12) == ["…et-model-c…", "…et-tool-ca…", "fault-…bytes"]


@pytest.mark.parametrize(("value", "text"), [
    (0.000548632102457155, "0.000549"), (0.8766666666666667, "0.877"), (12.345, "12.3"),
    (16739, "16,739"), (2.0, "2"), (None, "-"), (float("nan"), "-"), (True, "True"),
    ("a\nb", "a; b"),
])
def test_numbers_are_rounded_for_people(value: object, text: str) -> None:
    assert human(value) == text


def test_a_table_fits_the_columns_and_keeps_every_state_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    buf = io.StringIO()
    rows = [{"name": NAME, "state": "BUDGET_EXHAUSTED",
             "fallback": "EVIDENCE_VALIDATION_FAILED"}]
    print_table(rows, [Column("name", "name", name=True), Column("state", "state"),
                       Column("fallback", "fallback")], buf)
    lines = buf.getvalue().splitlines()
    assert max(map(len, lines)) <= 60
    assert lines[1].split()[1:] == ["BUDGET_EXHAUSTED", "EVIDENCE_VALIDATION_FAILED"]
    assert "…" in lines[1].split()[0]


def test_the_name_column_never_goes_under_its_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "20")
    buf = io.StringIO()
    print_table([{"name": NAME, "state": "BUDGET_EXHAUSTED"}],
                [Column("name", "name", name=True), Column("state", "state")], buf)
    row = buf.getvalue().splitlines()[1]
    assert row.split() == [shorten(NAME, MIN_NAME_WIDTH), "BUDGET_EXHAUSTED"]


def test_a_pipe_without_columns_keeps_whole_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    buf = io.StringIO()
    print_table([{"name": NAME}], [Column("name", "name", name=True)], buf)
    assert buf.getvalue().splitlines()[1] == NAME


def _optional_table() -> list[str]:
    buf = io.StringIO()
    rows = [{"name": "fault-client-disconnect-at-start", "intent": "KNOWLEDGE_QUERY",
             "state": "BUDGET_EXHAUSTED"}]
    print_table(rows, [Column("name", "name", name=True),
                       Column("intent", "intent", optional=True),
                       Column("state", "state")], buf)
    return buf.getvalue().splitlines()


def test_an_optional_column_is_left_out_before_names_are_cut_and_a_line_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "52")
    lines = _optional_table()
    assert lines[0].split() == ["name", "state"]
    assert lines[1].split() == ["fault-client-disconnect-at-start", "BUDGET_EXHAUSTED"]
    assert " ".join(lines[2:]).startswith("(intent left out at this width")


def test_an_optional_column_stays_when_the_names_have_room(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "70")
    lines = _optional_table()
    assert lines[1].split() == ["fault-client-disconnect-at-start", "KNOWLEDGE_QUERY",
                                "BUDGET_EXHAUSTED"]
    assert len(lines) == 2
