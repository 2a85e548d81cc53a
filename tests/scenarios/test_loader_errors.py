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


@pytest.mark.parametrize(("text", "problem"), [
    # recorded components and cassettes
    pytest.param(BASE + RECORDED,
                 "m.yaml:7: recorded: recorded components need a `cassette:` to replay from; "
                 "without one the run would call the network (record it with `harness-lab "
                 "record`)", id="recorded-block-without-a-cassette"),
    pytest.param(BASE + "cassette: x.yaml\n",
                 "m.yaml:7: cassette: a cassette is replayed for `recorded:` components, and this "
                 "scenario has no `recorded:` block", id="cassette-without-a-recorded-block"),
    # encodings
    pytest.param('name: x\ndescription: "a\x07"\n',
                 "m.yaml:2: <document>: malformed YAML: unacceptable character #x0007: control "
                 "characters are not allowed", id="control-character"),
    # matrix set paths: the set key and its line
    pytest.param(BASE + "matrix:\n  - name: a\n    set: {model.3: {empty: true}}\n",
                 "m.yaml:9: matrix.0.set.model.3: [x[a]] 'model' has 1 item(s), so index 3 is "
                 "past its end (indices start at 0)", id="set-index-past-the-end-of-a-list"),
    pytest.param(BASE + "matrix:\n  - name: a\n    set: {model.first: 1}\n",
                 "m.yaml:9: matrix.0.set.model.first: [x[a]] 'first' is not an index: 'model' is "
                 "a list, so the part after it is a number from 0",
                 id="set-part-that-is-not-an-index-of-a-list"),
    pytest.param(BASE + "matrix:\n  - name: a\n    set: {name.x: 1}\n",
                 "m.yaml:9: matrix.0.set.name.x: [x[a]] 'name' holds a string, not a mapping or "
                 "a list: nothing can be set inside it", id="set-path-through-a-string"),
    # errors inside matrix variants: the line of the value that gives them
    pytest.param(BASE + "matrix:\n  - name: a\n    set: {config.deadlin_s: 3}\n",
                 "m.yaml:9: config.deadlin_s: [x[a]] unknown key; did you mean 'deadline_s'?",
                 id="unknown-key-set-by-a-variant"),
    pytest.param(BASE + "matrix:\n  config.deadline_s:\n    - 5\n    - -1\n",
                 "m.yaml:10: config.deadline_s: [x[config.deadline_s=-1]] Input should be greater "
                 "than 0", id="bad-axis-value"),
    pytest.param(BASE + "matrix:\n  - name: fine\n  - name: a\n    set: {model.0.latency_s: -3}\n",
                 "m.yaml:10: model.0.latency_s: [x[a]] Input should be greater than or equal to 0",
                 id="bad-value-set-inside-a-step"),
    pytest.param(BASE.replace("model:\n", "model:\n  - {tool: logs, latency_s: -3}\n"),
                 "m.yaml:6: model.0.latency_s: Input should be greater than or equal to 0",
                 id="error-of-the-base-document"),
    # duplicate keys: the key and both lines
    pytest.param(BASE + "expect: {tool_calls: 0}\nquery: why?\nexpect: {tool_calls: 1}\n",
                 "m.yaml:9: expect: duplicate key 'expect': given at line 7 and again at line 9",
                 id="key-given-twice"),
    pytest.param(BASE + "config:\n  deadline_s: 3\n  deadline_s: 4\n",
                 "m.yaml:9: config.deadline_s: duplicate key 'deadline_s': given at line 8 and "
                 "again at line 9", id="nested-key-given-twice"),
    # tags
    pytest.param(BASE + "tags:\n  - diagnosis\n  - late result\n",
                 "m.yaml:9: tags.1: Value error, tag 'late result' is not a single word of "
                 "letters, digits, '_', '-' and '.'; `pytest -m` could not select it",
                 id="tag-that-is-not-a-single-word"),
    # problems that would only show at run time
    pytest.param(BASE + ("faults:\n  - kind: crash\n"
                         "    at: {when: before, call: model, tool: logs, n: 2}\n"),
                 "m.yaml:9: faults.0.at.tool: Value error, tool names a tool call, and this is a "
                 "model call; write `call: tool` or leave `tool` out",
                 id="tool-name-at-a-point-that-is-not-a-tool-call"),
    pytest.param(BASE + "matrix: {config.deadline_s: []}\n",
                 "m.yaml:7: matrix.config.deadline_s: List should have at least 1 item after "
                 "validation, not 0", id="empty-matrix-axis"),
    pytest.param(BASE + "matrix:\n  - name: a\n  - name: b\n  - name: a\n",
                 "m.yaml:10: matrix.2.name: variant name 'a' is already used by matrix.0",
                 id="variant-name-given-twice"),
    pytest.param(BASE + ("matrix: {config.deadline_s: [1, 2]}\nexpect_when:\n"
                         "  - when: {config.deadlin_s: 1}\n    expect: {tool_calls: 0}\n"),
                 "m.yaml:9: expect_when.0.when.config.deadlin_s: 'config.deadlin_s' is not a "
                 "matrix axis; the axes are ['config.deadline_s']",
                 id="expect-when-key-that-is-not-a-matrix-axis"),
    pytest.param(BASE + ("matrix: {config.deadline_s: [1, 2]}\nexpect_when:\n"
                         "  - when: {config.deadline_s: 3}\n    expect: {tool_calls: 0}\n"),
                 "m.yaml:9: expect_when.0.when.config.deadline_s: 3 is not a value of the axis "
                 "config.deadline_s [1, 2]: it matches no variant",
                 id="expect-when-value-that-no-variant-has"),
    pytest.param(BASE + "matrix: {config.deadline_s: [1, 2, 1]}\n",
                 "m.yaml:7: matrix.config.deadline_s.2: value 1 appears twice in the axis",
                 id="axis-value-given-twice"),
    # messages that say only what is wrong
    pytest.param(BASE + "router: {intent: DIAGNOSIS, latency_s: -1}\n",
                 "m.yaml:7: router.latency_s: Input should be greater than or equal to 0",
                 id="router-step-with-a-bad-latency"),
    pytest.param(BASE + "router: DIAGNOSI\n",
                 "m.yaml:7: router: Input should be 'SYSTEM_CHAT', 'KNOWLEDGE_QUERY' or "
                 "'DIAGNOSIS'", id="misspelt-router-intent"),
    pytest.param(BASE + "expect:\n  trace_excludes: 0\n",
                 "m.yaml:8: expect.trace_excludes: Input should be a valid list",
                 id="trace-excludes-that-is-not-a-list"),
    pytest.param(BASE + "expect:\n  trace_contains: {type: RUN_STARTED}\n",
                 "m.yaml:8: expect.trace_contains: Input should be a valid list",
                 id="trace-contains-that-is-not-a-list"),
    pytest.param(BASE + "faults:\n  - {kind: store_failure, operation: commit}\n",
                 "m.yaml:8: faults.0.operation: Input should be 'read_session', 'insert_running' "
                 "or 'complete'", id="store-failure-of-an-operation-the-store-does-not-have"),
])
def test_a_malformed_file_is_refused_with_the_one_problem_at_its_line(text: str, problem: str
                                                                     ) -> None:
    assert problems_of(text) == [problem]


# -- recorded components and cassettes ------------------------------------------------------------


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


def test_a_file_that_is_not_utf8_is_one_error_row_beside_the_good_files(tmp_path: Path) -> None:
    (tmp_path / "a-latin1.yaml").write_bytes(b'name: x\ndescription: "caf\xe9"\n')
    (tmp_path / "b-good.yaml").write_text(BASE, encoding="utf-8")
    results = list(run_paths([tmp_path]))
    assert [(r.scenario, r.error is None) for r in results] == [("a-latin1", False), ("x", True)]
    assert results[0].error is not None
    assert results[0].error.startswith(f"{tmp_path / 'a-latin1.yaml'}:2: <document>: the file "
                                       f"is not UTF-8")


# -- matrix set paths -----------------------------------------------------------------------------


def test_set_path_raises_a_path_error_and_leaves_good_paths_working() -> None:
    data = {"model": [{"tool": "logs"}], "name": "x"}
    set_path(data, "model.0.latency_s", 2)
    set_path(data, "config.deadline_s", 5)
    assert data == {"model": [{"tool": "logs", "latency_s": 2}], "name": "x",
                    "config": {"deadline_s": 5}}
    for dotted in ("model.1", "model.-1", "name.x.y", "config..x"):
        with pytest.raises(PathError):
            set_path(data, dotted, 1)


# -- duplicate keys -------------------------------------------------------------------------------


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


def test_every_shipped_tag_is_a_valid_tag() -> None:
    tags = {tag for path in discover([ROOT / "scenarios"])
            for loaded in load_file(path) for tag in loaded.scenario.tags}
    assert "outcome-table" in tags
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", tag) for tag in tags)


# -- messages -------------------------------------------------------------------------------------


def test_a_fault_that_never_fired_lists_only_the_calls_at_can_address() -> None:
    text = TWO_TOOL_DIAGNOSIS + ("faults:\n  - kind: crash\n"
                                 "    at: {when: before, call: tool, tool: logs, n: 2}\n")
    [loaded] = load_text(text, "s.yaml")
    error = run_scenario(loaded).error
    assert error == ("s.yaml:17: faults.0: fault 0 crash(before tool:logs#2) never fired: it "
                     "points past the end of the run (calls made: guard=1, model=3, router=1, "
                     "tool=2, tool:logs=1, tool:metrics=1)")


def test_a_misspelt_fault_kind_is_named_at_its_line_with_the_closest_kind() -> None:
    [problem] = problems_of(BASE + "faults:\n  - {kind: user_cancle, at_s: 1.0}\n")
    assert problem.startswith("m.yaml:8: faults.0.kind: unknown kind 'user_cancle'; did you "
                              "mean 'user_cancel'? (one of: client_disconnect, user_cancel, ")
    assert "Input tag" not in problem


def test_a_run_log_given_as_a_scenario_file_names_the_commands_that_read_logs(
        tmp_path: Path) -> None:
    from tests.conftest import outcomes_log

    log = outcomes_log(tmp_path)
    with pytest.raises(ScenarioError) as info:
        load_file(log)
    assert [str(p) for p in info.value.problems] == [
        f"{log}: <document>: a JSON Lines file (a run log?), not a scenario file: explain, "
        "diff, audit and report --compare read run logs"]
