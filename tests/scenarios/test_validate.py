"""``validate`` finds everything ``run`` would refuse, every problem of a file at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.scenarios import load_text
from harness_lab.scenarios.validate import validate_files
from tests.scenarios import TWO_TOOL_DIAGNOSIS, problems_of

RECORDED = ("recorded: {base_url: 'http://127.0.0.1:18765/v1'}\n"
            "cassette: cassettes/missing.yaml\n")


def test_a_scenario_name_given_by_two_files_is_refused_at_the_second_files_name_line(
        tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(TWO_TOOL_DIAGNOSIS, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(TWO_TOOL_DIAGNOSIS, encoding="utf-8")
    found = validate_files([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert found.scenarios == 1
    assert [str(p) for p in found.problems[str(tmp_path / "b.yaml")]] == [
        f"{tmp_path / 'b.yaml'}:1: name: scenario name 'base' is already used by "
        f"{tmp_path / 'a.yaml'}:1; `run` refuses the second file of a name"]


def test_a_missing_cassette_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(TWO_TOOL_DIAGNOSIS + RECORDED, encoding="utf-8")
    found = validate_files([path])
    assert [str(p) for p in found.problems[str(path)]] == [
        f"{path}:17: cassette: the cassette {tmp_path / 'cassettes' / 'missing.yaml'} does "
        f"not exist: a replay cannot start (record it with `harness-lab record {path}`)"]


def test_an_existing_cassette_passes(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "missing.yaml").write_text("interactions: []\n", encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text(TWO_TOOL_DIAGNOSIS + RECORDED, encoding="utf-8")
    assert validate_files([path]).ok


def test_an_unknown_cassette_matcher_is_refused() -> None:
    text = TWO_TOOL_DIAGNOSIS + RECORDED.replace("}", ", match_on: [method, nosuch]}", 1)
    [problem] = problems_of(text)
    assert problem.startswith("m.yaml:16: recorded.match_on.1: Input should be 'method', "
                              "'uri', 'url', 'scheme', 'host', 'port', 'path', 'query', 'raw_body'")


def test_the_matchers_the_format_accepts_are_the_ones_a_replay_knows() -> None:
    from harness_lab.recorded.cassette import build_vcr
    from harness_lab.scenarios.spec import MATCHERS

    assert set(MATCHERS) == set(build_vcr().matchers)


@pytest.mark.parametrize(("fault", "field"), [
    ("{kind: deadline, at_s: .inf}", "faults.0.at_s"),
    ("{kind: user_cancel, at_s: .inf}", "faults.0.at_s"),
    ("{kind: client_disconnect, at_s: .nan}", "faults.0.at_s"),
    ("{kind: latency_spike, call: tool, latency_s: .inf}", "faults.0.latency_s"),
])
def test_an_infinite_or_nan_fault_time_is_refused_like_any_other(fault: str, field: str) -> None:
    assert problems_of(TWO_TOOL_DIAGNOSIS + f"faults:\n  - {fault}\n") == [
        f"m.yaml:17: {field}: Input should be a finite number"]


def test_an_infinite_deadline_and_a_negative_budget_are_refused() -> None:
    text = TWO_TOOL_DIAGNOSIS + "config:\n  deadline_s: .inf\n  budget: {bytes: -1}\n"
    assert problems_of(text) == [
        "m.yaml:17: config.deadline_s: Input should be a finite number",
        "m.yaml:18: config.budget.bytes: Input should be greater than or equal to 0"]


def test_schema_errors_and_unknown_tools_are_reported_together_with_hints() -> None:
    text = TWO_TOOL_DIAGNOSIS.replace("  - tool: metrics", "  - tool: metrix") + (
        "config: {deadlin_s: 3}\n")
    assert problems_of(text) == [
        "m.yaml:16: config.deadlin_s: unknown key; did you mean 'deadline_s'?",
        "m.yaml:9: model.1.tool: unknown tool 'metrix'; the scenario's tools are "
        "['logs', 'metrics']; did you mean 'metrics'?"]


def test_a_misspelt_key_of_a_fault_suggests_the_key_of_that_fault_kind() -> None:
    text = TWO_TOOL_DIAGNOSIS + "faults:\n  - {kind: tool_error, error: size, tol: logs}\n"
    assert "m.yaml:17: faults.0.tol: unknown key; did you mean 'tool'?" in problems_of(text)


@pytest.mark.parametrize("text", [
    "expect: {fallback_type: NONE, run_state: success}\n",
    "expect: {fallback_type: none, run_state: SUCCESS}\n",
    "expect: {fallback_type: None, run_state: Success}\n",
])
def test_enum_values_are_read_in_any_case(text: str) -> None:
    [loaded] = load_text(TWO_TOOL_DIAGNOSIS + text, "m.yaml")
    assert loaded.scenario.expect.fallback_type == "none"
    assert loaded.scenario.expect.run_state is not None
    assert loaded.scenario.expect.run_state.value == "SUCCESS"


def test_a_fault_kind_is_read_in_any_case() -> None:
    [loaded] = load_text(TWO_TOOL_DIAGNOSIS + "faults:\n  - {kind: User_Cancel, at_s: 1}\n",
                         "m.yaml")
    assert loaded.scenario.faults[0].kind == "user_cancel"


def test_a_schema_key_is_accepted_and_kept_for_editors() -> None:
    [loaded] = load_text("$schema: ../scenario.schema.json\n" + TWO_TOOL_DIAGNOSIS, "m.yaml")
    assert loaded.scenario.schema_url == "../scenario.schema.json"


def test_validate_without_a_path_checks_the_scenarios_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "a.yaml").write_text(TWO_TOOL_DIAGNOSIS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 0
    assert capsys.readouterr().out == "1 scenario(s) valid, 0 file(s) with problems\n"


def test_validate_reports_a_duplicate_name_it_would_refuse_under_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(TWO_TOOL_DIAGNOSIS, encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / 'b.yaml'}:1: name: scenario name 'base' is already used by "
        f"{tmp_path / 'a.yaml'}:1; `run` refuses the second file of a name",
        "1 scenario(s) valid, 1 file(s) with problems"]


def test_a_broken_cassette_is_refused_naming_the_cassettes_problem(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "missing.yaml").write_text("version: 1\n", encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text(TWO_TOOL_DIAGNOSIS + RECORDED, encoding="utf-8")
    [problem] = validate_files([path]).problems[str(path)]
    assert (problem.line, problem.field) == (17, "cassette")
    assert problem.message.startswith(
        f"a replay cannot read it: cassette {tmp_path / 'cassettes' / 'missing.yaml'}")
    assert "interactions" in problem.message
