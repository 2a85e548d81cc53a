"""Malformed scenario files: each problem names the file, the field and the line, no traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness_lab.runner import run_paths, run_scenario
from harness_lab.scenarios import ScenarioError, load_file, load_text
from harness_lab.scenarios.discovery import discover
from harness_lab.scenarios.loader import DuplicateKeyError, PathError, UniqueKeyLoader, set_path
from harness_lab.scenarios.spec import Scenario
from tests.scenarios import TWO_TOOL_DIAGNOSIS, problems_of

ROOT = Path(__file__).resolve().parents[2]

BASE = """\
name: x
description: a one-step diagnosis
tools:
  logs: {}
model:
  - draft: {missing_info: ['which region']}
"""

RECORDED = "recorded: {base_url: 'http://127.0.0.1:18765/v1'}\n"


# -- recorded components and cassettes ------------------------------------------------------------


def test_a_recorded_block_without_a_cassette_is_refused_at_the_recorded_line() -> None:
    assert problems_of(BASE + RECORDED) == [
        "m.yaml:7: recorded: recorded components need a `cassette:` to replay from; without "
        "one the run would call the network (record it with `harness-lab record`)"]


def test_a_cassette_without_a_recorded_block_is_refused_at_the_cassette_line() -> None:
    assert problems_of(BASE + "cassette: x.yaml\n") == [
        "m.yaml:7: cassette: a cassette is replayed for `recorded:` components, and this "
        "scenario has no `recorded:` block"]


def test_a_recorded_scenario_built_in_memory_without_a_cassette_never_calls_the_network(
) -> None:
    sc = Scenario.model_validate(yaml.safe_load(BASE + RECORDED))
    result = run_scenario(sc)
    assert result.error == ("ValueError: scenario 'x': recorded components need a `cassette:` "
                            "to replay from; a replay never calls the network")


def test_the_shipped_recorded_scenarios_give_both_recorded_and_cassette() -> None:
    files = sorted((ROOT / "scenarios" / "recorded").glob("*.yaml"))
    assert files
    for path in files:
        [loaded] = load_file(path)
        assert loaded.scenario.recorded is not None and loaded.scenario.cassette is not None


# -- encodings ------------------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b'name: x\ndescription: "caf\xe9"\n')
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    assert str(info.value) == (f"{path}:2: <document>: the file is not UTF-8: byte 0xe9 at "
                               f"column 18 cannot be decoded; save the file as UTF-8")


def test_a_control_character_names_the_file_and_line() -> None:
    assert problems_of('name: x\ndescription: "a\x07"\n') == [
        "m.yaml:2: <document>: malformed YAML: unacceptable character #x0007: control "
        "characters are not allowed"]


def test_a_file_that_is_not_utf8_is_one_error_row_beside_the_good_files(tmp_path: Path) -> None:
    (tmp_path / "a-latin1.yaml").write_bytes(b'name: x\ndescription: "caf\xe9"\n')
    (tmp_path / "b-good.yaml").write_text(BASE, encoding="utf-8")
    results = list(run_paths([tmp_path]))
    assert [(r.scenario, r.error is None) for r in results] == [("a-latin1", False), ("x", True)]
    assert results[0].error is not None
    assert results[0].error.startswith(f"{tmp_path / 'a-latin1.yaml'}:2: <document>: the file "
                                       f"is not UTF-8")


# -- matrix set paths -----------------------------------------------------------------------------


def test_a_set_index_past_the_end_of_a_list_names_the_set_key_and_line() -> None:
    assert problems_of(BASE + "matrix:\n  - name: a\n    set: {model.3: {empty: true}}\n") == [
        "m.yaml:9: matrix.0.set.model.3: [x[a]] 'model' has 1 item(s), so index 3 is past "
        "its end (indices start at 0)"]


def test_a_set_part_that_is_not_an_index_of_a_list_names_the_set_key_and_line() -> None:
    assert problems_of(BASE + "matrix:\n  - name: a\n    set: {model.first: 1}\n") == [
        "m.yaml:9: matrix.0.set.model.first: [x[a]] 'first' is not an index: 'model' is a "
        "list, so the part after it is a number from 0"]


def test_a_set_path_through_a_string_names_the_set_key_and_line() -> None:
    assert problems_of(BASE + "matrix:\n  - name: a\n    set: {name.x: 1}\n") == [
        "m.yaml:9: matrix.0.set.name.x: [x[a]] 'name' holds a string, not a mapping or a "
        "list: nothing can be set inside it"]


def test_set_path_raises_a_path_error_and_leaves_good_paths_working() -> None:
    data = {"model": [{"tool": "logs"}], "name": "x"}
    set_path(data, "model.0.latency_s", 2)
    set_path(data, "config.deadline_s", 5)
    assert data == {"model": [{"tool": "logs", "latency_s": 2}], "name": "x",
                    "config": {"deadline_s": 5}}
    for dotted in ("model.1", "model.-1", "name.x.y", "config..x"):
        with pytest.raises(PathError):
            set_path(data, dotted, 1)


# -- errors inside matrix variants ----------------------------------------------------------------


def test_an_unknown_key_set_by_a_variant_names_the_key_at_the_set_line() -> None:
    assert problems_of(BASE + "matrix:\n  - name: a\n    set: {config.deadlin_s: 3}\n") == [
        "m.yaml:9: config.deadlin_s: [x[a]] unknown key; did you mean 'deadline_s'?"]


def test_a_bad_axis_value_names_the_field_at_the_line_of_the_value() -> None:
    text = BASE + "matrix:\n  config.deadline_s:\n    - 5\n    - -1\n"
    assert problems_of(text) == [
        "m.yaml:10: config.deadline_s: [x[config.deadline_s=-1]] Input should be greater than 0"]


def test_a_bad_value_set_inside_a_step_names_the_full_path_at_the_set_line() -> None:
    text = BASE + "matrix:\n  - name: fine\n  - name: a\n    set: {model.0.latency_s: -3}\n"
    assert problems_of(text) == [
        "m.yaml:10: model.0.latency_s: [x[a]] Input should be greater than or equal to 0"]


def test_an_error_of_the_base_document_keeps_the_line_of_its_field() -> None:
    text = BASE.replace("model:\n", "model:\n  - {tool: logs, latency_s: -3}\n")
    assert problems_of(text) == [
        "m.yaml:6: model.0.latency_s: Input should be greater than or equal to 0"]


# -- duplicate keys -------------------------------------------------------------------------------


def test_a_key_given_twice_names_the_key_and_both_lines() -> None:
    text = BASE + "expect: {tool_calls: 0}\nquery: why?\nexpect: {tool_calls: 1}\n"
    assert problems_of(text) == [
        "m.yaml:9: expect: duplicate key 'expect': given at line 7 and again at line 9"]


def test_a_nested_key_given_twice_names_its_field_path() -> None:
    text = BASE + "config:\n  deadline_s: 3\n  deadline_s: 4\n"
    assert problems_of(text) == [
        "m.yaml:9: config.deadline_s: duplicate key 'deadline_s': given at line 8 and again "
        "at line 9"]


def test_the_unique_key_loader_refuses_duplicates_and_accepts_merge_keys() -> None:
    merged = yaml.load("base: &b {x: 1}\nmore: {<<: *b, x: 2}\n", Loader=UniqueKeyLoader)
    assert merged == {"base": {"x": 1}, "more": {"x": 2}}
    with pytest.raises(DuplicateKeyError):
        yaml.load("a: 1\na: 2\n", Loader=UniqueKeyLoader)


# -- tags -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["skip", "xfail", "skipif", "parametrize", "usefixtures",
                                 "filterwarnings"])
def test_a_tag_that_is_a_pytest_builtin_marker_is_refused(tag: str) -> None:
    assert problems_of(BASE + f"tags: [diagnosis, {tag}]\n") == [
        f"m.yaml:7: tags.1: Value error, tag {tag!r} is a pytest built-in marker; as a "
        f"scenario tag it would change how pytest runs the scenario"]


def test_a_tag_that_is_not_a_single_word_is_refused() -> None:
    assert problems_of(BASE + "tags:\n  - diagnosis\n  - late result\n") == [
        "m.yaml:9: tags.1: Value error, tag 'late result' is not a single word of letters, "
        "digits, '_', '-' and '.'; `pytest -m` could not select it"]


def test_every_shipped_tag_is_a_valid_tag() -> None:
    tags = {tag for path in discover([ROOT / "scenarios"])
            for loaded in load_file(path) for tag in loaded.scenario.tags}
    assert "outcome-table" in tags
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", tag) for tag in tags)


# -- problems that would only show at run time ----------------------------------------------------


def test_a_tool_name_at_a_point_that_is_not_a_tool_call_is_refused() -> None:
    text = BASE + ("faults:\n  - kind: crash\n"
                   "    at: {when: before, call: model, tool: logs, n: 2}\n")
    assert problems_of(text) == [
        "m.yaml:9: faults.0.at.tool: Value error, tool names a tool call, and this is a model "
        "call; write `call: tool` or leave `tool` out"]


def test_an_empty_matrix_axis_is_refused() -> None:
    assert problems_of(BASE + "matrix: {config.deadline_s: []}\n") == [
        "m.yaml:7: matrix.config.deadline_s: List should have at least 1 item after "
        "validation, not 0"]


def test_a_variant_name_given_twice_is_refused() -> None:
    text = BASE + "matrix:\n  - name: a\n  - name: b\n  - name: a\n"
    assert problems_of(text) == ["m.yaml:10: matrix.2.name: variant name 'a' is already used "
                                 "by matrix.0"]


def test_an_expect_when_key_that_is_not_a_matrix_axis_is_refused() -> None:
    text = BASE + ("matrix: {config.deadline_s: [1, 2]}\n"
                   "expect_when:\n  - when: {config.deadlin_s: 1}\n    expect: {tool_calls: 0}\n")
    assert problems_of(text) == [
        "m.yaml:9: expect_when.0.when.config.deadlin_s: 'config.deadlin_s' is not a matrix "
        "axis; the axes are ['config.deadline_s']"]


def test_an_expect_when_value_that_no_variant_has_is_refused() -> None:
    text = BASE + ("matrix: {config.deadline_s: [1, 2]}\n"
                   "expect_when:\n  - when: {config.deadline_s: 3}\n    expect: {tool_calls: 0}\n")
    assert problems_of(text) == [
        "m.yaml:9: expect_when.0.when.config.deadline_s: 3 is not a value of the axis "
        "config.deadline_s [1, 2]: it matches no variant"]


# -- messages -------------------------------------------------------------------------------------


def test_a_fault_that_never_fired_lists_only_the_calls_at_can_address() -> None:
    text = TWO_TOOL_DIAGNOSIS + ("faults:\n  - kind: crash\n"
                                 "    at: {when: before, call: tool, tool: logs, n: 2}\n")
    [loaded] = load_text(text, "s.yaml")
    error = run_scenario(loaded).error
    assert error == ("s.yaml:17: faults.0: fault 0 crash(before tool:logs#2) never fired: it "
                     "points past the end of the run (calls made: guard=1, model=3, router=1, "
                     "tool=2, tool:logs=1, tool:metrics=1)")


def test_a_router_step_with_a_bad_latency_reports_only_the_latency() -> None:
    assert problems_of(BASE + "router: {intent: DIAGNOSIS, latency_s: -1}\n") == [
        "m.yaml:7: router.latency_s: Input should be greater than or equal to 0"]


def test_a_misspelt_router_intent_reports_only_the_allowed_intents() -> None:
    assert problems_of(BASE + "router: DIAGNOSI\n") == [
        "m.yaml:7: router: Input should be 'SYSTEM_CHAT', 'KNOWLEDGE_QUERY' or 'DIAGNOSIS'"]


def test_an_axis_value_given_twice_is_refused() -> None:
    assert problems_of(BASE + "matrix: {config.deadline_s: [1, 2, 1]}\n") == [
        "m.yaml:7: matrix.config.deadline_s.2: value 1 appears twice in the axis"]


def test_a_misspelt_fault_kind_is_named_at_its_line_with_the_closest_kind() -> None:
    [problem] = problems_of(BASE + "faults:\n  - {kind: user_cancle, at_s: 1.0}\n")
    assert problem.startswith("m.yaml:8: faults.0.kind: unknown kind 'user_cancle'; did you "
                              "mean 'user_cancel'? (one of: client_disconnect, user_cancel, ")
    assert "Input tag" not in problem


def test_a_store_failure_of_an_operation_the_store_does_not_have_is_refused() -> None:
    assert problems_of(BASE + "faults:\n  - {kind: store_failure, operation: commit}\n") == [
        "m.yaml:8: faults.0.operation: Input should be 'read_session', 'insert_running' or "
        "'complete'"]
