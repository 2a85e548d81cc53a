"""How values read in the HTML views: never None, nan or <NA>."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness_lab.report.cells import MISSING, cell, detail_text, duration, text, variant_parts
from harness_lab.states import RunState


@pytest.mark.parametrize("value", [None, math.nan, pd.NA, pd.NaT, float("nan")])
def test_every_kind_of_missing_value_reads_as_a_dash(value: object) -> None:
    assert text(value) == MISSING == "–"


def test_values_read_as_people_say_them() -> None:
    assert text(RunState.TIMED_OUT) == "TIMED_OUT"
    assert (text(True), text(False)) == ("yes", "no")
    assert text(0.1 + 0.2) == "0.3"
    assert text({"a": [1, None]}) == '{"a": [1, null]}'
    assert cell("<b>") == "&lt;b&gt;"


def test_a_trace_detail_reads_as_key_value_pairs_with_a_dash_for_a_missing_value() -> None:
    assert detail_text({"tool": "logs", "fallback_type": None, "ok": True}) == (
        "tool=logs  fallback_type=–  ok=yes")


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.0, "0 s"), (0.25, "250 ms"), (6.2, "6.2 s"), (125.0, "2 min 5 s"), (None, "–")])
def test_durations_read_in_the_unit_that_fits(seconds: float | None, shown: str) -> None:
    assert duration(seconds) == shown


@pytest.mark.parametrize(("name", "parts"), [
    ("plain-name", ("plain-name", ())),
    ("first-terminal-wins[cancel-first]", ("first-terminal-wins", ("cancel-first",))),
    ("policy-x[config.deadline_s=6.5,config.no_gain_threshold=2]",
     ("policy-x", ("deadline_s=6.5", "no_gain_threshold=2"))),
    ("sweep[sweep.latency.tool={'uniform': [0.2, 1.0]},config.deadline_s=4]",
     ("sweep", ("tool={'uniform': [0.2, 1.0]}", "deadline_s=4"))),
])
def test_a_matrix_variant_splits_into_its_base_name_and_readable_parameters(
        name: str, parts: tuple[str, tuple[str, ...]]) -> None:
    assert variant_parts(name) == parts
