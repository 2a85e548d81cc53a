"""The oracle: the SPEC §4 row prescribed from the fault and the base run alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_lab.explore.boundaries import BaseRun, record_base
from harness_lab.explore.oracle import (
    ANY_LEGAL,
    CRASH,
    Observed,
    Prescription,
    judge,
    legal_problem,
    prescribe,
)
from harness_lab.scenarios.loader import load_file, load_text
from tests.explore.helpers import REPORT, SATURATED

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture(scope="module")
def base() -> BaseRun:
    return record_base(load_file(REPORT)[0])


def at(when: str, call: str, n: int = 1, tool: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"when": when, "call": call, "n": n}
    if tool is not None:
        out["tool"] = tool
    return out


@pytest.mark.parametrize(("fault", "case"), [
    ({"kind": "client_disconnect", "at": at("before", "tool", 1, "logs")}, "client_disconnect"),
    ({"kind": "user_cancel", "at": at("after", "guard")}, "client_disconnect"),
    ({"kind": "client_disconnect", "sse_event": 4}, "client_disconnect"),
    ({"kind": "client_disconnect", "sse_event": 5}, "conclusion_guards_pass"),
    ({"kind": "client_disconnect", "sse_event": 6}, "conclusion_guards_pass"),
    ({"kind": "user_cancel", "at_s": 2.2}, "client_disconnect"),
    ({"kind": "deadline", "at": at("after", "model", 2)}, "timeout_no_content"),
    ({"kind": "deadline", "at_s": 6.45}, "timeout_no_content"),
    ({"kind": "latency_spike", "call": "guard", "n": 1, "latency_s": 60.0},
     "timeout_no_content"),
    ({"kind": "crash", "at": at("after", "tool", 1, "metrics")}, CRASH),
    ({"kind": "provider_error", "call": "router", "n": 1}, "internal_failure"),
    ({"kind": "router_unavailable"}, "internal_failure"),
    ({"kind": "provider_error", "call": "model", "n": 2}, "internal_failure"),
    ({"kind": "provider_error", "call": "guard", "n": 1}, "semantic_unavailable"),
    ({"kind": "semantic_guard", "verdict": "UNAVAILABLE"}, "semantic_unavailable"),
    ({"kind": "semantic_guard", "verdict": "UNSUPPORTED"}, "semantic_unsupported"),
    ({"kind": "invalid_draft", "form": "empty", "n": 3}, "insufficient_evidence"),
    ({"kind": "invalid_draft", "form": "invalid_json", "n": 2}, "internal_failure"),
    ({"kind": "tool_error", "error": "execution", "tool": "logs"}, ANY_LEGAL),
    ({"kind": "protocol_violation", "n": 2}, ANY_LEGAL),
])
def test_the_fault_decides_the_prescribed_case(base: BaseRun, fault: dict[str, Any],
                                               case: str) -> None:
    assert prescribe(fault, base).case == case


@pytest.mark.parametrize(("fault", "case"), [
    ({"kind": "budget_exhausted", "budget": "model_calls"}, "budget_no_progress"),
    ({"kind": "budget_exhausted", "budget": "model_calls", "at": at("after", "model", 1)},
     "budget_no_progress"),
    ({"kind": "budget_exhausted", "budget": "model_calls", "at": at("after", "model", 2)},
     "budget_progress"),
    ({"kind": "budget_exhausted", "budget": "tool_calls", "at": at("after", "tool", 1, "logs")},
     "budget_progress"),
    ({"kind": "budget_exhausted", "budget": "bytes", "at": at("after", "tool", 1, "logs")},
     "budget_no_progress"),
    ({"kind": "budget_exhausted", "budget": "bytes", "at": at("before", "model", 2)},
     "budget_progress"),
    ({"kind": "budget_exhausted", "budget": "tokens", "at": at("before", "guard")},
     "conclusion_guards_pass"),
    ({"kind": "budget_exhausted", "budget": "tool_calls", "at": at("before", "model", 3)},
     "conclusion_guards_pass"),
])
def test_a_budget_runs_out_where_it_is_next_checked(base: BaseRun, fault: dict[str, Any],
                                                    case: str) -> None:
    assert prescribe(fault, base).case == case


def test_the_timeout_policy_prescribes_the_progress_fallback_when_facts_exist() -> None:
    text = REPORT.read_text(encoding="utf-8").replace(
        "latency:", "config: {policy: {timeout_progress_fallback: true}}\nlatency:")
    base = record_base(load_text(text)[0])
    late = prescribe({"kind": "deadline", "at": at("before", "model", 3)}, base)
    early = prescribe({"kind": "deadline", "at": at("before", "model", 1)}, base)
    assert late.text == "timeout_progress_fallback: TIMED_OUT/FALLBACK/INSUFFICIENT_EVIDENCE"
    assert early.text == "timeout_no_content: TIMED_OUT/FAILED/-"


def test_a_point_the_base_run_never_reaches_is_any_legal(base: BaseRun) -> None:
    p = prescribe({"kind": "deadline", "at": at("before", "repair")}, base)
    assert p.case == ANY_LEGAL
    assert p.text == "any legal"


def test_a_fault_where_the_base_has_its_own_is_any_legal() -> None:
    base = record_base(load_file(SATURATED)[0])
    assert prescribe({"kind": "crash", "at": at("before", "model", 1)}, base).case == CRASH
    text = SATURATED.read_text(encoding="utf-8").replace(
        "expect:", "faults: [{kind: user_cancel, at: {when: after, call: model, n: 3}}]\n"
                   "expect:").replace("case: saturated_progress", "case: client_disconnect")
    own = record_base(load_text(text.split("expect:")[0])[0])
    p = prescribe({"kind": "deadline", "at": at("after", "model", 3)}, own)
    assert p.case == ANY_LEGAL


def test_judge_accepts_the_prescribed_row_and_names_a_different_one(base: BaseRun) -> None:
    p = prescribe({"kind": "client_disconnect", "sse_event": 2}, base)
    ok = Observed("CANCELLED", "CANCELLED", None, "CANCELLED")
    bad = Observed("CANCELLED", "FALLBACK", "INSUFFICIENT_EVIDENCE", "SUCCESS")
    assert judge(p, ok) is None
    assert judge(p, bad) == ("prescribed CANCELLED/CANCELLED/- db CANCELLED, observed "
                             "CANCELLED/FALLBACK/INSUFFICIENT_EVIDENCE db SUCCESS")


def test_any_legal_accepts_every_table_row_and_refuses_others() -> None:
    p = Prescription(ANY_LEGAL, None, "")
    assert judge(p, Observed("BUDGET_EXHAUSTED", "FALLBACK", "INSUFFICIENT_EVIDENCE",
                             "SUCCESS")) is None
    assert judge(p, Observed("TIMED_OUT", "FALLBACK", "INSUFFICIENT_EVIDENCE", "SUCCESS")) == (
        "TIMED_OUT/FALLBACK/INSUFFICIENT_EVIDENCE is no SPEC §4 row")
    assert judge(p, Observed("TIMED_OUT", "FALLBACK", "INSUFFICIENT_EVIDENCE", "SUCCESS"),
                 timeout_progress_fallback=True) is None


def test_the_stored_status_must_follow_the_release_outcome() -> None:
    o = Observed("SUCCESS", "FALLBACK", "SEMANTIC_UNSUPPORTED", "FAILED")
    assert legal_problem(o) == "stored status FAILED, §12.2 maps FALLBACK to SUCCESS"


def test_a_prescribed_crash_needs_a_crash_that_left_the_running_row() -> None:
    p = Prescription(CRASH, None, "")
    assert judge(p, Observed(None, None, None, "RUNNING", crashed=True)) is None
    assert judge(p, Observed(None, None, None, "FAILED", crashed=True)) == (
        "a crashed run left stored status FAILED, not RUNNING")
    assert judge(p, Observed("SUCCESS", "SUCCESS", None, "SUCCESS")) == (
        "prescribed a crash, observed SUCCESS/SUCCESS/- db SUCCESS")


def _slow_tool_base(detection: str) -> BaseRun:
    """A tool call from t=1 to t=11 past a 5 s deadline, no fault of its own."""
    text = (LIBRARY / "policy" / "deadline-detection.yaml").read_text(encoding="utf-8")
    text = text.split("faults:")[0].replace(
        "config: {deadline_s: 5.0}",
        f"config: {{deadline_s: 5.0, policy: {{deadline_detection: {detection}}}}}")
    return record_base(load_text(text)[0])


@pytest.mark.parametrize(("detection", "fault", "case"), [
    ("boundary", {"kind": "client_disconnect", "at_s": 7.0}, "client_disconnect"),
    ("instant", {"kind": "client_disconnect", "at_s": 7.0}, "timeout_no_content"),
    ("boundary", {"kind": "user_cancel", "at_s": 5.0}, "client_disconnect"),
    ("instant", {"kind": "user_cancel", "at_s": 5.0}, "timeout_no_content"),
    ("boundary", {"kind": "client_disconnect", "at_s": 3.0}, "client_disconnect"),
    ("instant", {"kind": "client_disconnect", "at_s": 3.0}, "client_disconnect"),
    ("boundary", {"kind": "client_disconnect", "at": at("after", "tool", 1, "logs")},
     "client_disconnect"),
    ("instant", {"kind": "client_disconnect", "at": at("after", "tool", 1, "logs")},
     "timeout_no_content")])
def test_a_cancel_past_the_deadline_follows_the_deadline_detection_policy(
        detection: str, fault: dict[str, Any], case: str) -> None:
    base = _slow_tool_base(detection)
    assert base.record.run_state.value == "TIMED_OUT"
    p = prescribe(fault, base)
    assert p.case == case
    from harness_lab.explore.property_search import run_data

    data = {**base.data, "faults": [fault]}
    observed = Observed.of(run_data(data)[1])
    assert judge(p, observed) is None


def test_a_refused_completion_releases_failed_what_would_have_been_released() -> None:
    from harness_lab.explore.oracle import refused_completion

    assert refused_completion(("SUCCESS", "SUCCESS", None)) == ("SUCCESS", "FAILED", None)
    assert refused_completion(("BUDGET_EXHAUSTED", "FALLBACK", "INSUFFICIENT_EVIDENCE")) == (
        "BUDGET_EXHAUSTED", "FAILED", None)
    assert refused_completion(("CANCELLED", "CANCELLED", None)) == (
        "CANCELLED", "CANCELLED", None)


def test_under_a_store_that_refuses_the_completion_only_the_release_it_makes_is_legal() -> None:
    from harness_lab.explore.oracle import Observed, legal_problem

    refused = Observed("SUCCESS", "FAILED", None, None)
    assert legal_problem(refused, stored=False, refused=True) is None
    assert legal_problem(refused) == "stored status None, §12.2 maps FAILED to FAILED"
    assert legal_problem(refused, stored=False) == "SUCCESS/FAILED/- is no SPEC §4 row"
    released = Observed("SUCCESS", "SUCCESS", None, None)
    assert legal_problem(released, stored=False, refused=True) == (
        "SUCCESS/SUCCESS/- is no SPEC §4 row")
