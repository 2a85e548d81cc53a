"""An audit's sums: runs by state, violations by invariant, only the runs that are not clean
kept."""

from __future__ import annotations

from harness_lab.audit.checked import AuditedRun
from harness_lab.audit.tally import AuditTally

RUNS = [
    AuditedRun("r-1", "checked", unchecked=("sse_protocol",)),
    AuditedRun("r-2", "checked", (("single_termination", "2 RUN_FINISHED events"),
                                  ("stored_axes_distinct", "stored status FAILED"))),
    AuditedRun("r-3", "incomplete", note="RUNNING with no RUN_FINISHED: not finished yet"),
    AuditedRun("r-4", "checked", (("single_termination", "2 RUN_FINISHED events"),)),
    AuditedRun("r-5", "unreadable", note="ValueError: 'X' is not a valid RunState"),
]


def _tally(runs: list[AuditedRun]) -> AuditTally:
    tally = AuditTally()
    for run in runs:
        tally.add(run)
    return tally


def test_the_tally_counts_runs_by_state_and_violations_by_invariant() -> None:
    assert _tally(RUNS).counts() == {
        "runs": 5, "checked": 3, "incomplete": 1, "orphaned": 0, "unreadable": 1,
        "runs with violations": 2,
        "single_termination": 2, "stored_axes_distinct": 1}


def test_the_tally_keeps_only_the_runs_that_are_not_clean_in_order() -> None:
    tally = _tally(RUNS)
    assert [r.run_id for r in tally.not_clean] == ["r-2", "r-3", "r-4", "r-5"]
    assert tally.unchecked == {"sse_protocol"}


def test_clean_and_incomplete_runs_pass_while_a_violation_or_an_unreadable_run_fails() -> None:
    assert _tally(RUNS[:1] + RUNS[2:3]).ok
    assert not _tally(RUNS[:2]).ok
    assert not _tally(RUNS[4:]).ok


def test_the_json_of_a_tally_lists_the_runs_that_are_not_clean() -> None:
    data = _tally(RUNS[2:4]).to_dict("runs.db")
    assert data == {"source": "runs.db", "ok": False, "counts": {
        "runs": 2, "checked": 1, "incomplete": 1, "orphaned": 0, "unreadable": 0,
        "runs with violations": 1,
        "single_termination": 1}, "ran_again": 0, "runs": [
        {"run_id": "r-3", "scenario": None, "state": "incomplete",
         "note": "RUNNING with no RUN_FINISHED: not finished yet", "unchecked": [],
         "violations": []},
        {"run_id": "r-4", "scenario": None, "state": "checked", "note": None, "unchecked": [],
         "violations": [{"invariant": "single_termination",
                         "message": "2 RUN_FINISHED events"}]}]}


def test_a_run_still_running_whose_server_is_gone_is_counted_orphaned_not_incomplete() -> None:
    tally = AuditTally(orphans={"r-lost"})
    tally.add(AuditedRun("r-lost", "incomplete", note="RUNNING with no RUN_FINISHED"))
    tally.add(AuditedRun("r-going", "incomplete", note="RUNNING with no RUN_FINISHED"))
    counts = tally.counts()
    assert (counts["incomplete"], counts["orphaned"]) == (1, 1)
    assert [(r.run_id, r.state) for r in tally.not_clean] == [
        ("r-lost", "orphaned"), ("r-going", "incomplete")]
    assert tally.ok
