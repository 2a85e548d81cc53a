"""The pytest plugin collects scenario files as test items."""

from __future__ import annotations

import pytest

import harness_lab.store.sql  # noqa: F401  (see below)
from tests.scenarios import missing_context
from tests.scenarios.hostile import write

pytest_plugins = ["pytester"]
# pytester runs pytest in this process and then forgets the modules the inner run imported;
# a run imports the SQL store (SQLAlchemy) lazily, and SQLAlchemy imported twice in one process
# breaks. Importing it here first keeps one copy for every inner run.

GOOD = missing_context("good", header="tags: [smoke]\n",
                       rest="expect: {release_outcome: FALLBACK}\n")


def test_a_passing_scenario_is_a_passing_item(pytester: pytest.Pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "good.yaml").write_text(GOOD, encoding="utf-8")
    result = pytester.runpytest("scenarios")
    result.assert_outcomes(passed=1)


def _run_wrong(pytester: pytest.Pytester) -> pytest.RunResult:
    """pytest run on ``scenarios/wrong.yaml``: GOOD expecting a SUCCESS it does not get."""
    pytester.mkdir("scenarios")
    wrong = GOOD.replace("release_outcome: FALLBACK", "release_outcome: SUCCESS")
    pytester.path.joinpath("scenarios", "wrong.yaml").write_text(wrong, encoding="utf-8")
    return pytester.runpytest("scenarios")


def test_a_failing_scenario_shows_expected_observed_and_the_timeline(
        pytester: pytest.Pytester) -> None:
    result = _run_wrong(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*release_outcome: expected SUCCESS, got FALLBACK*",
        "*timeline:*",
        "*RUN_FINISHED*",
    ])


def test_a_failing_scenario_names_the_file_and_line_of_the_expectation_like_the_cli(
        pytester: pytest.Pytester) -> None:
    result = _run_wrong(pytester)
    result.stdout.fnmatch_lines([
        "scenario good (scenarios/wrong.yaml:7): a missing-context fallback",
        "  scenarios/wrong.yaml:7: release_outcome: expected SUCCESS, got FALLBACK*",
    ])


FAILED_RUN = """\
name: router-fails
description: the router fails, so nothing falls back
faults:
  - {kind: provider_error, call: router}
expect:
  run_state: FAILED
  release_outcome: SUCCESS
"""


def test_a_state_the_run_does_not_have_reads_none_as_in_scenario_files(
        pytester: pytest.Pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "failed.yaml").write_text(FAILED_RUN, encoding="utf-8")
    result = pytester.runpytest("scenarios")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["observed: run_state=FAILED release_outcome=FAILED "
                                 "fallback_type=none db_status=FAILED"])
    result.stdout.no_fnmatch_line("*=None*")

def _smoke_and_slow(pytester: pytest.Pytester) -> None:
    """``scenarios/`` holding ``good`` tagged smoke and ``other`` tagged slow."""
    pytester.mkdir("scenarios")
    scenarios = pytester.path.joinpath("scenarios")
    scenarios.joinpath("good.yaml").write_text(GOOD, encoding="utf-8")
    scenarios.joinpath("other.yaml").write_text(
        GOOD.replace("name: good", "name: other").replace("[smoke]", "[slow]"),
        encoding="utf-8")


def test_tags_select_scenarios_with_dash_m(pytester: pytest.Pytester) -> None:
    _smoke_and_slow(pytester)
    result = pytester.runpytest("scenarios", "-m", "smoke")
    result.assert_outcomes(passed=1, deselected=1)


def test_the_scenario_tag_option_selects_by_tag(pytester: pytest.Pytester) -> None:
    _smoke_and_slow(pytester)
    result = pytester.runpytest("scenarios",
                                "--scenario-tag", "slow")
    result.assert_outcomes(passed=1)


def test_a_malformed_file_is_one_failing_item_naming_the_problem(
        pytester: pytest.Pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "bad.yaml").write_text(
        "name: bad\ndescription: x\nmodle: []\n", encoding="utf-8")
    result = pytester.runpytest("scenarios")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bad.yaml:3: modle: unknown key*"])


@pytest.mark.parametrize("family", ["alias bomb in a tool scope", "FIFO named x.yaml",
                                    "symlink to /dev/zero"])
def test_a_hostile_file_is_one_failing_item_and_the_good_file_beside_it_passes(
        pytester: pytest.Pytester, family: str) -> None:
    scenarios = pytester.mkdir("scenarios")
    scenarios.joinpath("good.yaml").write_text(GOOD, encoding="utf-8")
    write(family, scenarios)
    result = pytester.runpytest("scenarios")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*malformed scenario file:*", f"*{scenarios / 'x.yaml'}*"])
    assert "Traceback" not in result.stdout.str()


def test_yaml_outside_a_scenarios_directory_is_not_collected(pytester: pytest.Pytester) -> None:
    pytester.mkdir("cassettes")
    pytester.path.joinpath("cassettes", "x.yaml").write_text("interactions: []\n",
                                                             encoding="utf-8")
    result = pytester.runpytest("cassettes")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_scenario_file_named_on_the_command_line_is_collected_wherever_it_lies(
        pytester: pytest.Pytester) -> None:
    evals = pytester.mkdir("evals")
    evals.joinpath("good.yaml").write_text(GOOD, encoding="utf-8")
    evals.joinpath("other.yaml").write_text(GOOD.replace("name: ", "name: other-"),
                                            encoding="utf-8")
    assert pytester.runpytest("evals").ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result = pytester.runpytest("evals/good.yaml")
    result.assert_outcomes(passed=1)


def test_yaml_outside_the_scenario_directories_is_not_collected(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project = pytester.mkdir("scenarios") / "proj"
    project.mkdir()
    project.joinpath("docker-compose.yml").write_text("services: {}\n", encoding="utf-8")
    project.joinpath("test_app.py").write_text("def test_app() -> None:\n    pass\n",
                                               encoding="utf-8")
    monkeypatch.chdir(project)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_a_scenario_below_the_rootdir_is_still_collected_from_a_subdirectory(
        pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "good.yaml").write_text(GOOD, encoding="utf-8")
    result = pytester.runpytest(str(pytester.path / "scenarios" / "good.yaml"))
    result.assert_outcomes(passed=1)


def test_a_cassette_inside_a_scenario_directory_is_not_collected(
        pytester: pytest.Pytester) -> None:
    scenarios = pytester.mkdir("scenarios")
    scenarios.joinpath("good.yaml").write_text(GOOD, encoding="utf-8")
    scenarios.joinpath("cassettes").mkdir()
    scenarios.joinpath("cassettes", "good.yaml").write_text("interactions: []\nversion: 1\n",
                                                            encoding="utf-8")
    result = pytester.runpytest("scenarios")
    result.assert_outcomes(passed=1)


def test_snapshot_update_writes_the_snapshots_the_next_session_compares_with(
        pytester: pytest.Pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.path.joinpath("scenarios", "good.yaml").write_text(GOOD + "snapshot: true\n",
                                                                encoding="utf-8")
    pytester.runpytest("scenarios").assert_outcomes(failed=1)
    pytester.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=1)
    assert pytester.path.joinpath("scenarios", "__snapshots__", "good.snap.yaml").is_file()
    pytester.runpytest("scenarios").assert_outcomes(passed=1)


def _a_snapshot_no_scenario_uses(pytester: pytest.Pytester) -> None:
    """A snapshot written for scenarios/good.yaml, whose file then drops ``snapshot: true``."""
    pytester.mkdir("scenarios")
    good = pytester.path.joinpath("scenarios", "good.yaml")
    good.write_text(GOOD + "snapshot: true\n", encoding="utf-8")
    pytester.runpytest("scenarios", "--snapshot-update")
    good.write_text(GOOD, encoding="utf-8")


UNUSED = ["1 snapshot(s) no scenario uses (remove them with --snapshot-update):",
          "*scenarios/__snapshots__/good.snap.yaml [[]good[]]"]


def test_a_snapshot_no_scenario_uses_is_listed_after_the_session(
        pytester: pytest.Pytester) -> None:
    _a_snapshot_no_scenario_uses(pytester)
    pytester.runpytest("scenarios").stdout.fnmatch_lines(UNUSED)


@pytest.mark.slow  # two pytest sessions in interpreters of their own, with workers
def test_under_xdist_a_snapshot_no_scenario_uses_is_listed_and_removed_too(
        pytester: pytest.Pytester) -> None:
    _a_snapshot_no_scenario_uses(pytester)
    xdist = ("-p", "no:cacheprovider", "-n", "2", "--no-scenario-log")
    pytester.runpytest_subprocess("scenarios", *xdist).stdout.fnmatch_lines(UNUSED)
    pytester.runpytest_subprocess("scenarios", "--snapshot-update", *xdist)
    assert not pytester.path.joinpath("scenarios", "__snapshots__", "good.snap.yaml").exists()


def test_the_starter_readmes_pytest_command_collects_every_starter_scenario(
        pytester: pytest.Pytester) -> None:
    from harness_lab.cli import main

    main(["init", "evals"])
    readme = (pytester.path / "evals" / "README.md").read_text(encoding="utf-8")
    command = next(line.split("#")[0].split() for line in readme.splitlines()
                   if "-m pytest " in line)
    assert command[-1] == "evals/*.yaml"
    result = pytester.runpytest(*sorted(str(p.relative_to(pytester.path))
                                        for p in pytester.path.glob(command[-1])))
    result.assert_outcomes(passed=4)
