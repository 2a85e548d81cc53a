"""The harness-lab command line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

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
    assert out[0].split() == ["scenario", "intent", "run_state", "release_outcome",
                              "fallback_type", "db_status", "expected", "invariants"]
    assert out[2].split() == ["good", "DIAGNOSIS", "SUCCESS", "FALLBACK",
                              "MISSING_REQUIRED_CONTEXT", "SUCCESS", "ok", "ok"]


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
        ["scenario", "intent", "run_state", "release_outcome", "fallback_type", "db_status",
         "expected", "invariants"],
        ["good", "DIAGNOSIS", "SUCCESS", "FALLBACK", "MISSING_REQUIRED_CONTEXT", "SUCCESS", "ok",
         "ok"],
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
    assert rows[0]["expected"].endswith("broken.yaml:3: modle: unknown key")
    assert rows[1]["expected"] == "ok"


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
