"""The agent's schemas: what a refusal says."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness_lab.diagnosis.schema import DiagnosisDraft, ProgressReport, refusal


def refused(model: type, raw: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(raw)
    return caught.value


def test_a_refusal_names_every_problem_at_its_field_in_the_schemas_order() -> None:
    exc = refused(DiagnosisDraft, {"conclusion": 42, "findings": [{"statement": "x"}]})
    assert refusal(exc, "draft") == (
        "at conclusion: Input should be a valid string; "
        "at findings.0.citations: Field required")


def test_a_problem_with_the_whole_value_is_at_the_root_named() -> None:
    assert refusal(refused(ProgressReport, 7), "progress") == (
        "at progress: Input should be a valid dictionary or instance of ProgressReport")


def test_a_blank_string_is_stripped_and_then_refused_as_empty() -> None:
    exc = refused(DiagnosisDraft, {"conclusion": "   "})
    assert refusal(exc, "draft") == "at conclusion: String should have at least 1 character"
    assert DiagnosisDraft.model_validate({"conclusion": " the pool "}).conclusion == "the pool"
