"""conform and time: a live run's times count from its own start, on the simulated run's
timeline, and times and durations match within a tolerance; states, outcomes and the order of
events never do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from harness_lab.live.conform import Tolerance
from harness_lab.runner.run import plan_paths, run_scenario

LATE_CANCEL = """\
name: late-cancel-times
description: A deadline at 5 s wins; a user cancel at 7 s loses to it, traced when it was tried.
latency: {router: 0.2, model: 1.0, tool: 1.0}
config: {policy: {deadline_detection: instant}}
tools:
  logs: {}
model:
  - {tool: logs, scope: {service: checkout}}
  - draft: {missing_info: [arrives after both]}
    progress: {assessment: GAINED}
faults:
  - {kind: deadline, at_s: 5.0}
  - {kind: latency_spike, call: model, n: 2, latency_s: 10.0}
  - {kind: user_cancel, at_s: 7.0}
expect:
  run_state: TIMED_OUT
  trace_contains:
    - {type: RUN_STARTED, t: 0.0}
    - {type: TERMINATION_REJECTED, t: 7.0, detail: {at: 7.0, lost_to_at: 5.0}}
  row: {duration_ms: 12200.0, created_at: 0.0, finished_at: 12.2}
"""
"""Times stated from the run's start (t=0): the false failure ``TERMINATION_REJECTED t
expected 7.0, got 30.37`` counted them from the server's start, and ``duration_ms`` was
compared exactly."""

SECOND_TURN = """\
name: second-turn-times
description: The second turn of a session starts when the first ended, at 12.7 s.
session_id: session-second
latency: {router: 0.2, model: 1.0, tool: 1.0, guard: 0.5}
tools:
  logs:
    latency_s: 10.0
    default: {evidence: [{line: "10:02 checkout: db timeout after 30s"}]}
turns:
  - query: Why is checkout slow?
    model:
      - {tool: logs, scope: {service: checkout}}
      - draft:
          conclusion: Database timeouts make checkout slow.
          evidence: [{invocation_id: inv-1, claim: "db timeouts in the checkout logs"}]
        progress: {assessment: GAINED}
query: And what should I do about it?
model:
  - draft: {missing_info: [whether a pool resize is allowed]}
expect:
  release_outcome: FALLBACK
  trace_contains:
    - {type: RUN_STARTED, t: 12.7}
    - {type: RUN_FINISHED, t: 13.9}
  sse: [{kind: metadata, t: 12.7}, {kind: status, t: 12.7}, {kind: status, t: 12.9},
        {kind: status, t: 13.9}, {kind: content, t: 13.9}, {kind: done, t: 13.9}]
  row: {created_at: 12.7, finished_at: 13.9, duration_ms: 1200.0}
"""
"""A run that starts at a non-zero virtual instant: after its session's first turn."""


def _conform(tmp_path: Path, files: dict[str, str], capsys: pytest.CaptureFixture[str],
             *options: str) -> tuple[int, dict[str, Any]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code = main(["conform", "--serve", "--format", "json", *options, str(tmp_path)])
    return code, json.loads(capsys.readouterr().out)


def _verdicts(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {r["scenario"]: (r["verdict"], r["reasons"]) for r in report["results"]}


def test_the_scenarios_state_the_simulated_runs_own_times(tmp_path: Path) -> None:
    for name, text in (("late.yaml", LATE_CANCEL), ("second.yaml", SECOND_TURN)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    plan = plan_paths([str(tmp_path)], tags=[])
    assert [run_scenario(p.loaded).ok for p in plan if p.loaded is not None] == [True, True]


@pytest.mark.live
@pytest.mark.slow
def test_live_times_count_from_the_runs_start_and_durations_match_within_the_tolerance(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _conform(tmp_path, {"late.yaml": LATE_CANCEL, "second.yaml": SECOND_TURN},
                            capsys)
    assert _verdicts(report) == {"late-cancel-times": ("pass", []),
                                 "second-turn-times": ("pass", [])}
    assert code == 0
    assert report["tolerance"] == {"seconds": 2.5, "share": 0.05}


@pytest.mark.live
@pytest.mark.slow
def test_a_time_or_a_duration_beyond_the_tolerance_still_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    off = (LATE_CANCEL.replace("t: 7.0, detail", "t: 12.0, detail")
           .replace("duration_ms: 12200.0", "duration_ms: 4000.0"))
    code, report = _conform(tmp_path, {"late.yaml": off}, capsys)
    verdict, reasons = _verdicts(report)["late-cancel-times"]
    assert (code, verdict) == (1, "fail")
    assert [r.split(", got")[0] for r in reasons[:-1]] == [
        "row.duration_ms: expected 4000.0", "trace[TERMINATION_REJECTED].t: expected 12.0"]
    assert reasons[-1] == ("live times count from the run's start and match within "
                           "2.5 s + 5% of its time so far (--tolerance)")


@pytest.mark.live
@pytest.mark.slow
def test_no_tolerance_hides_a_different_state_or_event_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = LATE_CANCEL.index("expect:")
    wrong = LATE_CANCEL[:expect] + """\
expect:
  run_state: CANCELLED
  model_calls: 3
  trace_contains:
    - {type: RUN_FINISHED, t: 12.2}
    - {type: TERMINATION_REJECTED, t: 7.0}
  sse: [metadata, status, failure, status, done]
  row: {duration_ms: 4000.0}
"""
    code, report = _conform(tmp_path, {"late.yaml": wrong}, capsys,
                            "--tolerance", "1000+100%")
    verdict, reasons = _verdicts(report)["late-cancel-times"]
    assert (code, verdict) == (1, "fail")
    assert report["tolerance"] == {"seconds": 1000.0, "share": 1.0}
    assert reasons == [  # row.duration_ms 4000 against about 12200 is within 1000 s
        "run_state: expected CANCELLED, got TIMED_OUT",
        "sse[2]: expected failure, got status",
        "trace: expected {type: TERMINATION_REJECTED, t: 7.0} after trace[RUN_FINISHED], got "
        "only before it, at trace[TERMINATION_REJECTED]",
        "model_calls: expected 3, got 2"]


def test_a_tolerance_is_seconds_and_a_percentage_of_the_time_so_far() -> None:
    assert Tolerance.parse("0.5+5%") == Tolerance(seconds=0.5, share=0.05)
    assert Tolerance.parse(" 2 + 2.5% ") == Tolerance(seconds=2.0, share=0.025)
    assert Tolerance.parse("0") == Tolerance(seconds=0.0, share=0.0)
    within = Tolerance(seconds=0.25, share=0.05)
    assert within.allows(4.0, 4.4, elapsed=4.0, unit=1.0)
    assert not within.allows(4.0, 4.5, elapsed=4.0, unit=1.0)
    assert within.allows(4000.0, 4275.9, elapsed=4000.0, unit=1000.0)
    assert str(within) == "0.25 s + 5%"


@pytest.mark.parametrize("text", ["5x", "-1", "5%", "1+", "nan"])
def test_a_tolerance_in_another_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"give SECONDS or SECONDS\+PERCENT%"):
        Tolerance.parse(text)


def test_conform_refuses_a_malformed_tolerance_as_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "late.yaml").write_text(LATE_CANCEL, encoding="utf-8")
    assert main(["conform", "--serve", "--tolerance", "2s", str(tmp_path)]) == 2
    assert "--tolerance '2s': give SECONDS or SECONDS+PERCENT% (e.g. 0.5+5%)" in (
        capsys.readouterr().err)
