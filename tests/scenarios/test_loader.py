"""Loading scenario files: every problem names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.scenarios import ScenarioError, load_file, load_text
from tests.scenarios import problems_of

GOOD = """\
name: ok
description: a minimal diagnosis
tools:
  logs: {}
model:
  - tool: logs
    scope: {service: checkout}
  - draft: {missing_info: ['which region']}
    progress: {assessment: GAINED}
"""


def test_a_valid_file_loads_one_scenario() -> None:
    [loaded] = load_text(GOOD, "good.yaml")
    assert loaded.scenario.name == "ok"
    assert loaded.scenario.model[0].tool == "logs"


@pytest.mark.parametrize(("text", "problem"), [
    pytest.param("name: x\ndescription: [unclosed\n",
                 "m.yaml:3: <document>: malformed YAML: did not find expected ',' or ']'",
                 id="malformed-yaml"),
    pytest.param(GOOD.replace("  - tool: logs\n", "  - tool: logs\n    scop: {}\n"),
                 "m.yaml:7: model.0.scop: unknown key; did you mean 'scope'?",
                 id="unknown-key-by-its-field-path"),
    pytest.param(GOOD + "config:\n  deadline_s: soon\n",
                 "m.yaml:11: config.deadline_s: Input should be a valid number, unable to parse "
                 "string as a number", id="wrong-type"),
    pytest.param(GOOD.replace("  - tool: logs\n", "  - tool: metrics\n"),
                 "m.yaml:6: model.0.tool: unknown tool 'metrics'; the scenario's tools are "
                 "['logs']", id="unknown-tool-in-a-model-step"),
    pytest.param("name: x\n", "m.yaml:1: description: required field is missing",
                 id="missing-required-field"),
    pytest.param(GOOD + ("matrix:\n  - name: short\n    set: {config.deadline_s: 1}\n"
                         "    expect: {tool_cals: 1}\n"),
                 "m.yaml:13: matrix.0.expect.tool_cals: unknown key; did you mean 'tool_calls'?",
                 id="unknown-key-in-a-matrix-variant-by-the-variant-field-alone"),
])
def test_a_problem_names_the_file_the_line_and_the_field(text: str, problem: str) -> None:
    assert problems_of(text) == [problem]


@pytest.mark.parametrize(("text", "start"), [
    pytest.param(GOOD + "expect:\n  run_state: DONE\n",
                 "m.yaml:11: expect.run_state: Input should be 'RUNNING', ",
                 id="unknown-enum-value-lists-the-allowed-values"),
    pytest.param(GOOD.replace("  - draft: {missing_info: ['which region']}\n",
                              "  - draft: {missing_info: ['which region']}\n    empty: true\n"),
                 "m.yaml:8: model.1: Value error, a model step needs exactly one",
                 id="step-with-two-actions"),
    pytest.param(GOOD + "case: happy_path\n", "m.yaml:10: case: unknown case 'happy_path'",
                 id="unknown-case"),
])
def test_a_problem_with_a_longer_message_starts_with_its_line_and_field(text: str, start: str
                                                                        ) -> None:
    [message] = problems_of(text)
    assert message.startswith(start)


def test_an_unknown_fault_kind_is_refused() -> None:
    text = GOOD + "faults:\n  - kind: meteor\n"
    [message] = problems_of(text)
    assert message.startswith("m.yaml:11: faults.0")
    assert "meteor" in message


def test_a_tool_request_with_a_draft_loads_as_one_reply_carrying_both() -> None:
    text = GOOD.replace("  - draft: {missing_info: ['which region']}\n",
                        "  - draft: {missing_info: ['which region']}\n    tool: logs\n")
    [loaded] = load_text(text, "both.yaml")
    step = loaded.scenario.model[1]
    assert (step.tool, step.draft is not None) == ("logs", True)


def test_a_matrix_list_expands_into_named_variants() -> None:
    text = GOOD + ("matrix:\n  - name: short\n    set: {config.deadline_s: 1}\n"
                   "  - name: long\n    set: {config.deadline_s: 100}\n")
    names = [x.scenario.name for x in load_text(text, "m.yaml")]
    deadlines = [x.scenario.config.deadline_s for x in load_text(text, "m.yaml")]
    assert names == ["ok[short]", "ok[long]"]
    assert deadlines == [1.0, 100.0]


def test_a_product_matrix_applies_expect_when_to_matching_variants() -> None:
    text = GOOD + ("matrix:\n  config.deadline_s: [1, 100]\n  config.no_gain_threshold: [2, 3]\n"
                   "expect_when:\n  - when: {config.deadline_s: 1}\n"
                   "    expect: {run_state: TIMED_OUT}\n")
    loaded = load_text(text, "m.yaml")
    assert [x.scenario.name for x in loaded] == [
        "ok[config.deadline_s=1,config.no_gain_threshold=2]",
        "ok[config.deadline_s=1,config.no_gain_threshold=3]",
        "ok[config.deadline_s=100,config.no_gain_threshold=2]",
        "ok[config.deadline_s=100,config.no_gain_threshold=3]"]
    assert [x.scenario.expect.run_state for x in loaded] == ["TIMED_OUT", "TIMED_OUT",
                                                              None, None]


def test_a_file_that_cannot_be_read_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(tmp_path / "missing.yaml")
    assert str(info.value).startswith(f"{tmp_path / 'missing.yaml'}: <document>: cannot read")


