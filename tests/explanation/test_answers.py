"""Each outcome-table scenario's explanation names the cause doc §10/§15 gives for it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness_lab.explanation import QUESTIONS, explain
from harness_lab.explanation.answers import limits
from harness_lab.runner.results import ResultSet
from harness_lab.runner.run import run_paths

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="module")
def outcomes() -> dict[str, ResultSet]:
    """The outcome-table scenarios and two fault scenarios, run once, by name."""
    results = run_paths([SCENARIOS / "outcomes", SCENARIOS / "faults" / "user-cancel-at-s.yaml",
                         SCENARIOS / "faults" / "crash-after-tool.yaml"])
    return {r.scenario: r for r in results}  # type: ignore[misc]


EXPECTED = [
    ("conclusion-guards-pass", "outcome", ["diagnosis report", "SemanticGuard judged it SUPPORTED",
                                           "SEMANTIC_GUARD_DECISION t=6.7 OK"]),
    ("conclusion-guards-pass", "stored_status", ["SUCCESS with a conclusion"]),
    ("conclusion-guards-pass", "previous_turn", ["Yes: IntentType DIAGNOSIS, ReleaseOutcome "
                                                 "SUCCESS and a stored published_result"]),
    ("missing-context", "outcome", ["MISSING_REQUIRED_CONTEXT", "without the context it needs"]),
    ("missing-context", "evidence", ["No tool was invoked"]),
    ("insufficient-evidence", "outcome", ["INSUFFICIENT_EVIDENCE", "verified facts",
                                          "not a failed run"]),
    ("insufficient-evidence", "stored_status", [
        "SUCCESS without a conclusion", "maps ReleaseOutcome FALLBACK to diagnosis_run.status "
        "SUCCESS"]),
    ("insufficient-evidence", "previous_turn", ["No: ReleaseOutcome is FALLBACK",
                                                "a fallback never becomes PreviousTurn"]),
    ("saturated-progress", "collection", ["CollectionState SATURATED",
                                          "INFORMATION_SATURATED", "3 consecutive NO_GAIN",
                                          "COLLECTION_STOP t=9.2 OK",
                                          "STOP_REQUIRED was delivered once"]),
    ("protocol-stop-progress", "collection", ["PROGRESS_PROTOCOL_VIOLATED",
                                              "3 consecutive progress-protocol violations",
                                              "TOOL_REQUEST_REJECTED t=9.2 REJECTED"]),
    ("protocol-stop-progress", "evidence", ["traces was refused in preflight (SATURATED"]),
    ("evidence-guard-failed", "outcome", ["EVIDENCE_VALIDATION_FAILED", "the one repair",
                                          "EVIDENCE_GUARD_INITIAL t=5.2 FAILED",
                                          "EVIDENCE_GUARD_RECHECK t=6.2 FAILED"]),
    ("evidence-guard-failed", "evidence", ["db_metrics", "READY with NO_EVIDENCE",
                                           "TOOL_PROGRESS t=4.2 OK",
                                           "never a global negative"]),
    ("semantic-unsupported", "outcome", ["SEMANTIC_UNSUPPORTED", "UNSUPPORTED",
                                         "SEMANTIC_GUARD_DECISION t=3.7 OK"]),
    ("semantic-unavailable", "outcome", ["SEMANTIC_UNAVAILABLE", "technically unavailable",
                                         "SEMANTIC_GUARD_DECISION t=3.7 FAILED"]),
    ("budget-progress", "outcome", ["INSUFFICIENT_EVIDENCE", "RunState stays BUDGET_EXHAUSTED"]),
    ("budget-progress", "limits", ["Budget, not timeout",
                                   "model_calls limit 3 was passed at 4",
                                   "BUDGET_EXHAUSTED t=6.2 OK", "model_calls 0"]),
    ("budget-progress", "collection", ["BUDGET_LIMIT_REACHED",
                                       "CollectionState stays COLLECTING"]),
    ("budget-no-progress", "outcome", ["ReleaseOutcome FAILED", "no verified fact",
                                       "failure event with code ReleaseFailed"]),
    ("budget-no-progress", "limits", ["tokens limit 1000 was passed at 1200",
                                      "56.8 s"]),
    ("timeout-no-content", "limits", ["Timeout, not budget", "deadline at t=4 s",
                                      "0.2 s late", "AGENT_MODEL_STEP t=4.2 DISCARDED"]),
    ("timeout-no-content", "outcome", ["TIMED_OUT", "failure event with code TIMED_OUT"]),
    ("internal-failure", "outcome", ["failed unrecoverably", "INTERNAL_FAILURE",
                                     "model backend returned 500"]),
    ("internal-failure", "stored_status", ["stored status is FAILED, not SUCCESS",
                                           "termination_state FAILED"]),
    ("client-disconnect", "sse_done", ["No done because SseState is DISCONNECTED",
                                       "CLIENT_DISCONNECTED", "RUN_CANCELLED t=1.2 OK"]),
    ("client-disconnect", "outcome", ["ReleaseOutcome CANCELLED is never a public outcome"]),
    ("client-disconnect", "limits", ["Neither", "58.8 s of headroom"]),
    ("fault-user-cancel-at-s", "sse_done", ["USER_REQUESTED",
                                            "ReleaseOutcome CANCELLED is never a public done",
                                            "SseState TERMINAL"]),
    ("fault-user-cancel-at-s", "outcome", ["failure event with code CANCELLED"]),
]


@pytest.mark.parametrize(("scenario", "question", "phrases"), EXPECTED,
                         ids=[f"{s}-{q}" for s, q, _ in EXPECTED])
def test_the_explanation_names_the_documented_cause(outcomes: dict[str, ResultSet],
                                                    scenario: str, question: str,
                                                    phrases: list[str]) -> None:
    text = explain(outcomes[scenario])[question]
    for phrase in phrases:
        assert phrase in text, (phrase, text)


def test_every_outcome_scenario_gets_every_question_answered_in_a_few_sentences(
        outcomes: dict[str, ResultSet]) -> None:
    for name, result in outcomes.items():
        if result.record is None:
            continue
        answers = explain(result).answers
        assert [a.key for a in answers] == list(QUESTIONS), name
        for a in answers:
            assert 1 <= a.text.count(". ") + 1 <= 5, (name, a.key, a.text)


def test_a_crashed_run_is_explained_as_having_no_record(outcomes: dict[str, ResultSet]
                                                        ) -> None:
    crashed = next(r for r in outcomes.values() if r.crashed)
    explained = explain(crashed)
    assert explained.answers == ()
    assert explained.note is not None and explained.note.startswith(
        "No run record to explain: the run crashed")


def test_a_record_explains_itself_and_shows_as_html(outcomes: dict[str, ResultSet]) -> None:
    record = outcomes["semantic-unsupported"].record
    assert record is not None
    explained = explain(record, ("outcome",))
    assert [a.key for a in explained.answers] == ["outcome"]
    assert "<dt><b>Why did the user get this outcome and content?</b></dt>" in \
        explained._repr_html_()


def test_an_unknown_question_is_refused_with_the_known_keys(outcomes: dict[str, ResultSet]
                                                            ) -> None:
    with pytest.raises(KeyError, match="unknown question.*outcome, collection"):
        explain(outcomes["missing-context"], ("why",))


def test_the_report_drill_down_holds_the_same_answers(outcomes: dict[str, ResultSet]) -> None:
    from harness_lab.report.run_html import record_sections

    record = outcomes["client-disconnect"].record
    assert record is not None
    page = record_sections(record)
    assert "why (the troubleshooting questions of doc §15)" in page
    assert "<dt><b>Why is there no SSE done?</b></dt>" in page
    assert "No done because SseState is DISCONNECTED" in page


def test_a_timeout_names_when_it_was_taken_and_the_cancel_that_lost_to_it() -> None:
    # the file: deadline at 5 s, a user cancel at 7 s during a model call until 12.2 s, and
    # the instant policy: the deadline fires at 5 s, so the run ends TIMED_OUT and the
    # cancel at 7 s loses to it
    [result] = run_paths([f"{SCENARIOS / 'late' / 'first-terminal-wins.yaml'}[deadline-first]"])
    assert result.record is not None
    text = limits(result.record)
    assert "deadline at t=5 s was found passed at t=5 s" in text
    assert "0 s late" in text
    assert "CANCELLED (USER_REQUESTED) at t=7 (TERMINATION_REJECTED t=7 REJECTED)" in text


def test_a_path_given_to_explain_is_a_type_error_saying_what_reads_files() -> None:
    with pytest.raises(TypeError, match=r"^explain takes a RunRecord, a ScenarioResult or a log "
                                        r"entry, not str; read_log\(path\) or run_paths"):
        explain("harness_logs/run.jsonl")  # type: ignore[arg-type]


def test_a_run_whose_times_contradict_is_explained_with_a_note_saying_what_contradicts_what(
        outcomes: dict[str, ResultSet]) -> None:
    record = outcomes["conclusion-guards-pass"].record
    assert record is not None and record.stored_row is not None
    assert (record.started_at, record.finished_at) == (0, 6.7)
    assert explain(record).note is None
    backwards = replace(record, finished_at=-3.0,
                        stored_row={**record.stored_row, "finished_at": -3.0})
    explained = explain(backwards, ("limits",))
    assert explained.note == (
        "The run's times contradict each other (times_consistent): the stored finished_at -3 "
        "is before its created_at 0. The times below are quoted as stored.")
    assert explained.text(width=400).splitlines()[1] == explained.note
    assert "at t=-3 s" in explained["limits"]


def test_a_time_too_large_for_milliseconds_is_quoted_in_its_shortest_form(
        outcomes: dict[str, ResultSet]) -> None:
    record = outcomes["conclusion-guards-pass"].record
    assert record is not None and record.stored_row is not None
    far = replace(record, finished_at=1e300,
                  stored_row={**record.stored_row, "finished_at": 1e300})
    text = explain(far, ("limits",))["limits"]
    assert "at t=1e+300 s, with -1e+300 s of headroom" in text
    assert len(text) < 300
