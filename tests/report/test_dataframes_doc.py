"""docs/dataframes.md against the code: every public frame function documented, with the
columns and dtypes it returns on real scenarios of the library."""

from __future__ import annotations

import inspect
import re
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

import harness_lab.report as report
from harness_lab.record import RunRecord
from harness_lab.runner import run_paths
from harness_lab.runner.run import ScenarioResult, run_scenario
from harness_lab.scenarios.loader import load_file
from harness_lab.store.sql import SqlRunStore

DOC = Path(__file__).resolve().parents[2] / "docs" / "dataframes.md"
SCENARIOS = ("scenarios/faults/tool-rejection-auth.yaml", "scenarios/faults/crash-after-tool.yaml",
             "scenarios/outcomes/conclusion-guards-pass.yaml")
ROOT = DOC.parents[1]


def documented_tables() -> dict[str, list[list[str]]]:
    """Each ``## name`` section of the page -> the rows of its table (header included)."""
    sections: dict[str, list[list[str]]] = {}
    current: str | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        elif current is not None and line.startswith("|") and not line.startswith("|---"):
            sections[current].append([c.strip() for c in line.strip().strip("|").split("|")])
    return sections


def documented_columns(name: str) -> dict[str, str]:
    """The ``column -> dtype`` rows of a function's section."""
    header, *rows = documented_tables()[name]
    assert header[:2] == ["column", "dtype"], f"{name}: a column | dtype | meaning table"
    return {row[0].strip("`"): row[1] for row in rows}


def dtype_name(dtype: object) -> str:
    return "category" if isinstance(dtype, pd.CategoricalDtype) else str(dtype)


def returned_columns(frame: pd.DataFrame) -> dict[str, str]:
    return {str(name): dtype_name(dtype) for name, dtype in frame.dtypes.items()}


def public_frame_functions() -> set[str]:
    """The public functions of harness_lab.report whose return annotation names a DataFrame."""
    names = set()
    for name in report.__all__:
        value = getattr(report, name)
        if inspect.isfunction(value):
            returns = inspect.signature(value).return_annotation
            if "DataFrame" in str(returns):
                names.add(name)
    return names


@cache
def library_results() -> tuple[ScenarioResult, ...]:
    return tuple(run_paths([ROOT / path for path in SCENARIOS]))


def records() -> list[RunRecord]:
    return [r.record for r in library_results() if r.record is not None]


@cache
def stored() -> SqlRunStore:
    """The first scenario's run written to an in-memory run store."""
    store = SqlRunStore("sqlite://")
    for scenario in load_file(ROOT / SCENARIOS[0]):
        run_scenario(scenario, store=store)
    return store


ROW_FRAMES = {
    "runs_frame": lambda: report.runs_frame(library_results()),
    "trace_frame": lambda: report.trace_frame(records()),
    "invocations_frame": lambda: report.invocations_frame(records()),
    "rejections_frame": lambda: report.rejections_frame(records()),
    "sse_frame": lambda: report.sse_frame(records()),
    "mapping_table": lambda: report.mapping_table(library_results()),
    "read_runs": lambda: report.read_runs(stored()),
    "read_trace": lambda: report.read_trace(stored()),
    "read_invocations": lambda: report.read_invocations(stored()),
    "status_mapping_check": lambda: report.status_mapping_check(report.read_runs(stored())),
}


def test_every_public_frame_function_has_a_section_of_the_page() -> None:
    assert public_frame_functions() <= set(documented_tables())


def test_the_page_documents_no_function_the_package_does_not_export() -> None:
    assert set(documented_tables()) <= public_frame_functions()


def test_every_frame_function_is_checked_against_its_section() -> None:
    assert public_frame_functions() == {*ROW_FRAMES, "categorize", "crosstab", "state_crosstabs"}


@pytest.mark.parametrize("name", sorted(ROW_FRAMES))
def test_the_documented_columns_are_those_the_function_returns_in_order(name: str) -> None:
    frame = ROW_FRAMES[name]()
    assert len(frame) > 0, f"{name} returned no rows on the library's scenarios"
    assert list(documented_columns(name).items()) == list(returned_columns(frame).items())


def test_categorize_is_documented_as_keeping_the_input_columns() -> None:
    frame = report.runs_frame(library_results())
    plain = frame.astype({"run_state": "str"})
    assert list(report.categorize(plain).columns) == list(frame.columns)
    assert list(documented_columns("categorize")) == ["the input's columns"]


def test_the_crosstab_axes_are_named_by_the_columns_counted() -> None:
    table = report.crosstab(report.runs_frame(library_results()), "intent", "db_status")
    header, *rows = documented_tables()["crosstab"]
    assert header[0] == "axis"
    documented = {row[0]: row[1] for row in rows}
    assert (table.index.name, table.columns.name) == ("intent", "db_status")
    assert documented == {"index": dtype_name(table.index.dtype),
                          "columns": dtype_name(table.columns.dtype),
                          "cells": str(set(table.dtypes.astype(str)).pop())}


def test_state_crosstabs_lists_its_tables_with_their_axes() -> None:
    tables = report.state_crosstabs(report.runs_frame(library_results()))
    header, *rows = documented_tables()["state_crosstabs"]
    assert header == ["table", "index", "columns"]
    documented = {row[0].strip("`"): (row[1].strip("`"), re.sub(r"` .*", "", row[2]).strip("`"))
                  for row in rows}
    assert documented == {name: (t.index.name, t.columns.name) for name, t in tables.items()}
