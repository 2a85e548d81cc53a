"""The property search: generated scenarios, seeded defects found, reproducers that fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from harness_lab.defects import Defect
from harness_lab.explore.property_search import (
    ILLEGAL_OUTCOME,
    SearchResult,
    property_failures,
    run_data,
    search,
)
from harness_lab.explore.strategies import UNGENERATED, faults, scenarios
from harness_lab.runner import run_paths
from harness_lab.scenarios import load_text
from harness_lab.scenarios.faults import FAULT_KINDS
from harness_lab.scenarios.spec import Scenario

QUICK = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck))


@QUICK
@given(scenarios())
def test_every_generated_scenario_is_a_valid_scenario_file(data: dict[str, Any]) -> None:
    Scenario.model_validate(data)
    assert load_text(yaml.safe_dump(data))[0].scenario.name == "search-example"


@QUICK
@given(faults())
def test_every_generated_fault_is_one_of_the_format_kinds(fault: dict[str, Any]) -> None:
    assert fault["kind"] in FAULT_KINDS
    assert fault["kind"] not in UNGENERATED


@pytest.mark.slow
def test_the_harness_without_defects_keeps_the_property_on_150_examples() -> None:
    result = search(max_examples=150)
    assert result.found is False
    assert result.scenario is None and result.failures == ()


DEFECT_CASES = [
    (Defect.LATE_SUCCESS_OVERRIDES_CANCEL, "single_termination"),
    (Defect.EVIDENCE_TOOL_AFTER_SATURATION, "no_evidence_tool_after_saturation"),
    (Defect.SECOND_CONTENT_EVENT, "sse_protocol"),
    (Defect.FALLBACK_AS_PREVIOUS_TURN, "stored_axes_distinct"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("defect", "invariant"), DEFECT_CASES,
                         ids=[d.value for d, _ in DEFECT_CASES])
def test_the_search_finds_each_seeded_defect_and_its_reproducer_fails_under_run(
        defect: Defect, invariant: str, tmp_path: Path) -> None:
    # under the default boundary deadline detection a cancel past the deadline ends the run
    # CANCELLED alone, so a late success overriding a cancel shows on fewer generated runs
    examples = 400 if defect is Defect.LATE_SUCCESS_OVERRIDES_CANCEL else 150
    result = search(max_examples=examples, defects=[defect.value], only={invariant})
    assert result.found is True
    assert invariant in result.broken
    run, _ = run_data(result.scenario or {})
    assert run.plan is None or all(run.plan.fired)
    path = result.write_reproducer(tmp_path / "repro" / "minimal.yaml")
    [outcome] = run_paths([path])
    assert outcome.ok is False
    assert invariant in outcome.unexpected


def test_a_seeded_search_is_repeatable() -> None:
    first = search(max_examples=50, seed=7, defects=[Defect.SECOND_CONTENT_EVENT.value])
    second = search(max_examples=50, seed=7, defects=[Defect.SECOND_CONTENT_EVENT.value])
    assert first.scenario == second.scenario
    assert first.to_yaml() == second.to_yaml()


def test_property_failures_name_each_broken_invariant_and_illegal_outcomes() -> None:
    data = {"name": "two-contents", "description": "d",
            "config": {"defects": ["second_content_event"]},
            "model": [{"draft": {"missing_info": ["the deploy time"]}}]}
    assert [f.name for f in property_failures(data)] == ["sse_protocol"]
    data["config"] = {"defects": ["late_success_overrides_cancel"]}
    data["faults"] = [{"kind": "client_disconnect", "sse_event": 5}]
    names = {f.name for f in property_failures(data)}
    assert {"single_termination", ILLEGAL_OUTCOME} <= names


def test_a_reproducer_of_an_outcome_outside_the_table_expects_the_closest_row(
        tmp_path: Path) -> None:
    data = {"name": "late-cancel", "description": "d",
            "config": {"defects": ["late_success_overrides_cancel"]},
            "model": [{"draft": {"missing_info": ["the deploy time"]}}],
            "faults": [{"kind": "client_disconnect", "sse_event": 5}]}
    result = SearchResult(data, tuple(property_failures(data)), 1, 0.0, None,
                          ("late_success_overrides_cancel",))
    written = yaml.safe_load(result.to_yaml())
    assert written["name"] == "search-late_success_overrides_cancel-derandomized"
    assert written["expect"] == {"run_state": "SUCCESS", "release_outcome": "FALLBACK",
                                 "fallback_type": "MISSING_REQUIRED_CONTEXT",
                                 "db_status": "SUCCESS"}
    [outcome] = run_paths([result.write_reproducer(tmp_path / "repro.yaml")])
    assert outcome.ok is False
    assert [m.field for m in outcome.mismatches] == ["run_state"]
    assert "single_termination" in outcome.unexpected
