"""Running scenarios: expectations, faults that never fire, crashes, ERROR rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness_lab.runner import run_paths, run_scenario
from harness_lab.scenarios import load_text
from tests.conftest import LIBRARY
from tests.scenarios import TWO_TOOL_DIAGNOSIS as BASE


def run_text(text: str) -> object:
    [loaded] = load_text(text, "s.yaml")
    return run_scenario(loaded)


BASE_SCRIPT = "".join("    " + line + "\n" for line in BASE.split("model:\n")[1].splitlines())
"""BASE's model script, indented to be an earlier turn's."""

FALLBACK_SCRIPT = "      - draft: {missing_info: [which service]}\n"
"""An earlier turn's model script that asks which service: a missing-context fallback."""


def _with_earlier_turn(turn_extra: str = "", script: str = BASE_SCRIPT) -> str:
    """BASE after an earlier turn whose model plays ``script`` (BASE's own unless told), with
    ``turn_extra`` lines."""
    earlier = "turns:\n  - query: first\n    model:\n" + script + turn_extra
    return BASE.replace("model:\n", earlier + "model:\n", 1)


def test_a_scenario_whose_expectations_hold_is_ok() -> None:
    r = run_text(BASE + "expect: {run_state: SUCCESS, release_outcome: SUCCESS, tool_calls: 2}\n")
    assert r.ok is True  # type: ignore[attr-defined]
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]


def test_a_wrong_expectation_is_reported_with_expected_and_observed() -> None:
    r = run_text(BASE + "expect: {run_state: TIMED_OUT}\n")
    assert r.ok is False  # type: ignore[attr-defined]
    assert r.row()["expected"] == "run_state: expected TIMED_OUT, got SUCCESS"  # type: ignore


def test_a_run_without_observing_keeps_no_observation_but_checks_what_the_file_expects() -> None:
    from harness_lab.runner.run import ScenarioRun

    [plain] = load_text(BASE, "s.yaml")
    unobserved = ScenarioRun(plain, observe=False).run()
    assert unobserved.ok and unobserved.observation is None
    assert ScenarioRun(plain).run().observation is not None  # observed unless told
    [expecting] = load_text(BASE + "expect: {statuses: [ROUTING]}\n", "s.yaml")
    checked = ScenarioRun(expecting, observe=False).run()
    assert not checked.ok and {m.field.split("[")[0] for m in checked.mismatches} == {"statuses"}
    assert checked.observation is not None


def test_a_case_key_supplies_the_documented_outcome() -> None:
    r = run_text(BASE + "case: semantic_unsupported\n")
    assert r.row()["expected"] == (  # type: ignore[attr-defined]
        "release_outcome: expected FALLBACK, got SUCCESS; "
        "fallback_type: expected SEMANTIC_UNSUPPORTED, got none")


def test_a_fault_that_points_past_the_end_of_the_run_is_an_error_naming_file_and_line() -> None:
    text = BASE + "faults:\n  - kind: provider_error\n    call: model\n    n: 9\n"
    r = run_text(text)
    assert r.error is not None  # type: ignore[attr-defined]
    assert r.error.startswith("s.yaml:17: faults.0: fault 0 provider_error(")  # type: ignore
    assert "never fired" in r.error  # type: ignore[attr-defined]


def test_a_client_disconnect_at_a_virtual_instant_cancels_the_run() -> None:
    r = run_text(BASE + "faults: [{kind: client_disconnect, at_s: 2.5}]\n"
                 "expect: {run_state: CANCELLED, release_outcome: CANCELLED, db_status: CANCELLED,"
                 " discarded: 1, sse_state: DISCONNECTED}\n")
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]


def test_a_server_shutdown_cancels_the_run_and_tells_a_connected_client_why() -> None:
    faults = ("config: {policy: {user_cancel_notice: silent}}\n"
              "faults: [{kind: server_shutdown, at_s: 2.5}]\n")
    r = run_text(BASE + faults + "expect: {run_state: CANCELLED, termination_reason: "
                 "SERVER_SHUTDOWN, failure_code: CANCELLED, done_outcome: none}\n")
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    wrong = run_text(BASE + faults + "expect: {failure_code: none}\n")
    assert wrong.row()["expected"] == "failure_code: expected none, got CANCELLED"  # type: ignore


def test_timed_faults_at_one_instant_act_in_the_order_the_file_lists_them() -> None:
    cancel, leave = "{kind: user_cancel, at_s: 0}", "{kind: client_disconnect, at_s: 0}"
    first = run_text(BASE + f"faults: [{cancel}, {leave}]\n")
    second = run_text(BASE + f"faults: [{leave}, {cancel}]\n")
    assert first.record.termination_reason == "USER_REQUESTED"  # type: ignore[attr-defined]
    assert second.record.termination_reason == "CLIENT_DISCONNECTED"  # type: ignore


def test_a_crash_leaves_a_running_row_and_no_record() -> None:
    r = run_text(BASE + "faults: [{kind: crash, at: {call: tool, n: 2}}]\n"
                 "expect: {crashed: true, db_status: RUNNING}\n")
    assert r.record is None and r.crashed is True  # type: ignore[attr-defined]
    assert r.row()["db_status"] == "RUNNING"  # type: ignore[attr-defined]
    assert r.ok is True  # type: ignore[attr-defined]


def test_an_earlier_published_success_is_the_previous_turn_of_the_next() -> None:
    text = _with_earlier_turn()
    text += "expect: {previous_turn: run-000001, release_outcome: SUCCESS}\n"
    r = run_text(text)
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    assert len(r.turns) == 1  # type: ignore[attr-defined]


def test_an_earlier_fallback_is_not_the_previous_turn() -> None:
    text = _with_earlier_turn(script=FALLBACK_SCRIPT)
    text += "expect: {previous_turn: run-000001}\n"
    r = run_text(text)
    assert r.row()["expected"] == "previous_turn: expected run-000001, got none"  # type: ignore


def test_a_broken_file_becomes_an_error_row_and_the_others_still_run(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(BASE, encoding="utf-8")
    (tmp_path / "b.yaml").write_text("name: b\ndescription: [\n", encoding="utf-8")
    results = run_paths([tmp_path])
    assert [r.scenario for r in results] == ["base", "b"]
    assert results[0].ok is True
    assert results[1].row()["expected"].startswith(f"ERROR: {tmp_path / 'b.yaml'}:")


def test_a_scenario_name_used_twice_is_an_error_row(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(BASE, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(BASE, encoding="utf-8")
    results = run_paths([tmp_path])
    assert results[0].ok is True
    assert results[1].error == (f"{tmp_path / 'b.yaml'}: scenario name 'base' is already "
                                f"used by {tmp_path / 'a.yaml'}")


def test_an_earlier_turns_expectations_are_checked_and_named() -> None:
    r = run_text(_with_earlier_turn("    expect: {release_outcome: SUCCESS}\n", FALLBACK_SCRIPT))
    assert r.row()["expected"] == (  # type: ignore[attr-defined]
        "turns.0.release_outcome: expected SUCCESS, got FALLBACK")


def test_public_failure_code_done_outcome_and_gains_can_be_expected() -> None:
    r = run_text(BASE + "expect: {done_outcome: SUCCESS, failure_code: none, "
                 "gains: [GAINED, GAINED], stop_required_delivered: false}\n")
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    wrong = run_text(BASE + "expect: {done_outcome: FALLBACK}\n")
    assert wrong.row()["expected"] == "done_outcome: expected FALLBACK, got SUCCESS"  # type: ignore


def test_an_unscripted_repair_returns_the_draft_unchanged_so_validation_fails() -> None:
    text = BASE.replace("evidence: [{invocation_id: inv-1, claim: timeouts}]",
                        "evidence: [{invocation_id: inv-9, claim: made up}]")
    r = run_text(text + "expect: {release_outcome: FALLBACK, "
                 "fallback_type: EVIDENCE_VALIDATION_FAILED}\n")
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    assert r.record.trace_types().count("EVIDENCE_GUARD_RECHECK") == 1  # type: ignore


def test_an_earlier_turns_fault_cancels_that_turn_and_its_expectations_are_checked() -> None:
    text = _with_earlier_turn(
        "    faults: [{kind: user_cancel, at: {when: after, call: tool}}]\n"
        "    expect: {run_state: CANCELLED, release_outcome: CANCELLED, published_result: false}\n")
    text += "expect: {previous_turn: none, release_outcome: SUCCESS}\n"
    r = run_text(text)
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    assert r.turns[0].run_state.value == "CANCELLED"  # type: ignore[attr-defined]


def test_an_earlier_turns_expectation_that_its_fault_breaks_is_reported_by_turn() -> None:
    text = _with_earlier_turn(
        "    faults: [{kind: client_disconnect, at_s: 1.0}]\n"
        "    expect: {run_state: SUCCESS}\n")
    r = run_text(text)
    assert r.row()["expected"] == (  # type: ignore[attr-defined]
        "turns.0.run_state: expected SUCCESS, got CANCELLED")


def test_an_earlier_turns_fault_that_never_fires_is_an_error_naming_the_turn() -> None:
    r = run_text(_with_earlier_turn(
        "    faults: [{kind: provider_error, call: model, n: 9}]\n"))
    assert r.error is not None  # type: ignore[attr-defined]
    assert r.error.startswith("s.yaml:")  # type: ignore[attr-defined]
    assert ": turns.0.faults.0: fault 0 provider_error(" in r.error  # type: ignore
    assert "never fired" in r.error  # type: ignore[attr-defined]


def test_an_earlier_turns_faults_do_not_reach_the_scenarios_own_run() -> None:
    text = _with_earlier_turn("    faults: [{kind: deadline, at_s: 0.5}]\n"
                              "    expect: {run_state: TIMED_OUT}\n")
    text += "expect: {run_state: SUCCESS, release_outcome: SUCCESS, tool_calls: 2}\n"
    r = run_text(text)
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]


def test_a_crash_in_an_earlier_turn_is_expected_there_and_the_session_goes_on() -> None:
    text = _with_earlier_turn("    faults: [{kind: crash, at: {when: after, call: tool}}]\n"
                              "    expect: {crashed: true, db_status: RUNNING}\n")
    text += "expect: {previous_turn: none, release_outcome: SUCCESS}\n"
    r = run_text(text)
    assert r.row()["expected"] == "ok"  # type: ignore[attr-defined]
    assert r.record.run_id == "run-000002"  # type: ignore[attr-defined]
    assert r.observation["turns"][0]["crashed"] is True  # type: ignore[attr-defined]
    assert r.observation["turns"][0]["row"]["status"] == "RUNNING"  # type: ignore


def test_a_crash_in_an_earlier_turn_that_its_expect_does_not_state_fails_naming_the_turn(
) -> None:
    r = run_text(_with_earlier_turn(
        "    faults: [{kind: crash, at: {when: after, call: tool}}]\n"))
    assert r.row()["expected"] == (  # type: ignore[attr-defined]
        "turns.0.crashed: expected false, got true")


def test_an_earlier_turn_expected_to_crash_that_does_not_fails_naming_the_turn() -> None:
    r = run_text(_with_earlier_turn("    expect: {crashed: true}\n"))
    assert r.row()["expected"] == (  # type: ignore[attr-defined]
        "turns.0.crashed: expected true, got false")




@pytest.mark.slow  # the library twice, once on a database
def test_the_library_on_a_database_gives_the_records_of_the_default_in_memory_store() -> None:
    from harness_lab.explore.seeded import load_library
    from harness_lab.store.sql import SqlRunStore

    library = load_library()
    assert len(library) > 150
    for item in library:
        on_database = run_scenario(item, store=SqlRunStore("sqlite://"))
        in_memory = run_scenario(item)
        assert on_database.ok and in_memory.ok, item.scenario.name
        assert [t.to_dict() for t in on_database.turns] == [
            t.to_dict() for t in in_memory.turns], item.scenario.name
        assert on_database.stored_row == in_memory.stored_row, item.scenario.name


def test_a_path_given_to_run_scenario_is_a_type_error_naming_run_paths() -> None:
    from harness_lab.runner import run_scenario

    with pytest.raises(TypeError, match=r"^run_scenario takes a loaded scenario .* not str; "
                                        r"run_paths\(\[path\]\) runs files$"):
        run_scenario("scenarios/outcomes/conclusion-guards-pass.yaml")  # type: ignore[arg-type]


def test_a_result_checked_again_is_itself_when_its_record_breaks_only_what_it_expected() -> None:
    results = run_paths([LIBRARY / "faults" / "store-refuses-failed-completion.yaml"])
    assert len(results) == 2
    for result in results:
        assert result.ok and [v.invariant for v in result.violations] == ["stored_axes_distinct"]
        assert result.rechecked() is result


def test_a_result_whose_record_now_breaks_an_invariant_it_did_not_expect_fails_checked_again(
        ) -> None:
    [result] = run_paths([LIBRARY / "outcomes" / "conclusion-guards-pass.yaml"])
    assert result.record is not None and result.record.stored_row is not None
    assert (result.record.started_at, result.record.finished_at) == (0, 6.7)
    edited = replace(result, record=replace(
        result.record, stored_row={**result.record.stored_row, "duration_ms": 5.0}))
    again = edited.rechecked()
    assert (result.ok, again.ok) == (True, False)
    assert again.unexpected == ("times_consistent",)
    assert [v.message for v in again.violations] == [
        "the stored duration_ms 5 is not finished_at - created_at, 6700 ms"]
