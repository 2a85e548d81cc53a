"""The JSON Schema editors use: shipped, current, described, and named by every shipped file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from harness_lab.cli import main
from harness_lab.scenarios import faults, spec
from harness_lab.scenarios.discovery import discover
from harness_lab.scenarios.schema import SCHEMA_FILE, modeline, scenario_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / SCHEMA_FILE
SCENARIO_FILES = discover([ROOT / "scenarios"])  # not cassettes, not snapshots


def test_the_shipped_schema_file_is_what_harness_lab_schema_prints(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert SHIPPED.read_text(encoding="utf-8") == printed, (
        "scenarios/scenario.schema.json is stale: run "
        "`harness-lab schema --out scenarios/scenario.schema.json`")


def test_schema_out_writes_the_file_and_refuses_a_missing_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["schema", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == schema_text()
    assert main(["schema", "--out", str(tmp_path / "no" / "s.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_every_property_of_the_scenario_models_is_described() -> None:
    schema = scenario_schema()
    modules = (spec.__name__, faults.__name__)
    ours = {name for name in schema["$defs"]
            if getattr(getattr(spec, name, getattr(faults, name, None)), "__module__", None)
            in modules}
    assert {"Expect", "ModelStepSpec", "ToolSpec", "UserCancel", "At"} <= ours
    models = [("Scenario", schema), *((n, schema["$defs"][n]) for n in sorted(ours))]
    undescribed = [f"{name}.{prop}" for name, model in models
                   for prop, value in model.get("properties", {}).items()
                   if not value.get("description")]
    assert undescribed == []


def test_the_schema_key_is_a_property_editors_accept() -> None:
    assert "$schema" in scenario_schema()["properties"]


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_shipped_scenario_names_the_schema_in_its_first_line(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    relative = os.path.relpath(SHIPPED, path.parent)
    assert first == modeline(relative)
    assert (path.parent / relative).resolve() == SHIPPED


def test_every_shipped_scenario_is_valid_under_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(scenario_schema())
    problems = {str(p.relative_to(ROOT)): [e.message for e in validator.iter_errors(
        yaml.safe_load(p.read_text(encoding="utf-8")))] for p in SCENARIO_FILES}
    assert {k: v for k, v in problems.items() if v} == {}
