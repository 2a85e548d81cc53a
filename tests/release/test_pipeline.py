"""ReleasePipeline alone: one test per row of the release decision (docs/protocol.md §8, §10).

Each test builds a run context and a tool boundary holding READY (and ERROR) records, then
hands the pipeline an execution of the agent as the document describes it: Completed with a
draft, or a Controlled Stop with a ProgressSnapshot. Expected outcomes, fallback types and
RunStates are the document's.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import Any

import pytest
import simpy

from harness_lab.config import HarnessConfig, Policy
from harness_lab.core.budget import BudgetLimits
from harness_lab.core.context import RunContext
from harness_lab.diagnosis.agent import DiagnosisAgentExecution
from harness_lab.diagnosis.collection import CollectionController, exhaust_budget
from harness_lab.diagnosis.progress import ProgressSnapshot
from harness_lab.diagnosis.schema import DiagnosisDraft, Fact
from harness_lab.errors import BudgetExceeded, ReleaseFailed, RunAborted
from harness_lab.fakes import (
    Evidence,
    NoEvidence,
    ScriptedRepair,
    ScriptedSemanticGuard,
    ScriptedTool,
    ToolFailure,
    provider_error,
    repaired,
)
from harness_lab.ports import ModelReply, TokenUsage, ToolCallRequest
from harness_lab.release.pipeline import ReleaseDecision, ReleasePipeline
from harness_lab.states import (
    CancellationReason,
    DiagnosisStopReason,
    FallbackType,
    ReleaseOutcome,
    RunState,
    SemanticVerdict,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.tools.boundary import ToolBoundary
from harness_lab.tools.ledger import InvocationLedger

# the invocations the boundary makes, in order: logs (evidence), quiet (no evidence), broken
LOGS, QUIET, BROKEN = "run-1-inv-1", "run-1-inv-2", "run-1-inv-3"
CONCLUSION = "the db connection pool is exhausted"


class Run:
    """One run's context and boundary, its three tool calls made, and a pipeline over them."""

    def __init__(self, *, guard: ScriptedSemanticGuard | None = None,
                 repair: Sequence[Any] = (), config: HarnessConfig | None = None) -> None:
        self.env = simpy.Environment()
        self.ctx = RunContext("run-1", "session-1", self.env, config or HarnessConfig())
        self.collection = CollectionController(3, 3)
        tools = {"logs": ScriptedTool("logs", default=Evidence(({"line": "timeout"},))),
                 "quiet": ScriptedTool("quiet", default=NoEvidence()),
                 "broken": ScriptedTool("broken", default=ToolFailure())}
        self.boundary = ToolBoundary(self.ctx, tools, InvocationLedger(), self.collection)
        self.guard = guard or ScriptedSemanticGuard("SUPPORTED")
        self.repair = ScriptedRepair(list(repair))
        self.pipeline = ReleasePipeline(self.ctx, self.boundary, self.repair, self.guard,
                                        "why is checkout slow?")
        for name in ("logs", "quiet", "broken"):
            self.play(self.boundary.invoke(ToolCallRequest(name, {"service": "checkout"})))

    def play(self, process: Generator[simpy.Event, Any, Any]) -> Any:
        """Run ``process`` on the run's clock; its value, or what it raised."""
        return self.env.run(until=self.env.process(process))

    def release(self, execution: DiagnosisAgentExecution) -> ReleaseDecision:
        """The pipeline's decision for ``execution``."""
        decision: ReleaseDecision = self.play(self.pipeline.release(execution))
        return decision

    def traced(self, type_: TraceEventType) -> list[tuple[TraceEventStatus, dict[str, Any]]]:
        """The status and data of every trace event of ``type_``."""
        return [(e.status, dict(e.detail)) for e in self.ctx.tracer.events if e.type is type_]


def draft_of(conclusion: str | None = None, *, evidence: Sequence[tuple[str, str]] = (),
             findings: Sequence[tuple[str, Sequence[str]]] = (),
             missing_info: Sequence[str] = ()) -> DiagnosisDraft:
    return DiagnosisDraft.model_validate({
        "conclusion": conclusion,
        "evidence": [{"invocation_id": i, "claim": c} for i, c in evidence],
        "findings": [{"statement": s, "citations": list(c)} for s, c in findings],
        "missing_info": list(missing_info)})


def fact(statement: str, *citations: str) -> Fact:
    return Fact.model_validate({"statement": statement, "citations": list(citations)})


def completed(draft: DiagnosisDraft, snapshot: ProgressSnapshot | None = None
              ) -> DiagnosisAgentExecution:
    return DiagnosisAgentExecution(draft, None, snapshot or ProgressSnapshot())


def stopped(reason: DiagnosisStopReason, snapshot: ProgressSnapshot
            ) -> DiagnosisAgentExecution:
    return DiagnosisAgentExecution(None, reason, snapshot)


VALID = draft_of(CONCLUSION, evidence=[(LOGS, "timeouts in the logs")])


def fallback_facts(decision: ReleaseDecision) -> list[str]:
    return [f["statement"] for f in decision.content["facts"]]


# -- Completed, with a conclusion -------------------------------------------------------------

def test_a_conclusion_with_valid_evidence_that_the_guard_supports_is_released_as_a_report(
        ) -> None:
    run = Run()
    decision = run.release(completed(VALID))
    assert (decision.outcome, decision.fallback_type) == (ReleaseOutcome.SUCCESS, None)
    assert decision.run_state is RunState.SUCCESS
    assert decision.content["contentType"] == "diagnosis_report"
    assert decision.conclusion == CONCLUSION
    assert (decision.verdict, decision.repaired) == (SemanticVerdict.SUPPORTED, False)
    assert run.repair.requests == []


def test_invalid_evidence_gets_exactly_one_repair_and_a_valid_repair_is_released() -> None:
    bad = draft_of(CONCLUSION, evidence=[(QUIET, "nothing in the logs")])
    run = Run(repair=[repaired(CONCLUSION, [(LOGS, "timeouts in the logs")])])
    decision = run.release(completed(bad))
    assert (decision.outcome, decision.repaired) == (ReleaseOutcome.SUCCESS, True)
    assert len(run.repair.requests) == 1
    assert [s for s, _ in run.traced(TraceEventType.EVIDENCE_GUARD_RECHECK)] == [
        TraceEventStatus.OK]


def test_a_repair_that_still_cites_bad_evidence_ends_evidence_validation_failed() -> None:
    bad = draft_of(CONCLUSION, evidence=[(BROKEN, "the backend failed")],
                   findings=[("timeouts in checkout logs", [LOGS])])
    run = Run(repair=[repaired(CONCLUSION, [(QUIET, "still nothing")])])
    decision = run.release(completed(bad))
    assert decision.outcome is ReleaseOutcome.FALLBACK
    assert decision.fallback_type is FallbackType.EVIDENCE_VALIDATION_FAILED
    assert decision.run_state is RunState.SUCCESS
    assert len(run.repair.requests) == 1  # one repair, never a second
    assert "conclusion" not in decision.content
    assert fallback_facts(decision) == ["timeouts in checkout logs"]


def test_a_repair_answered_as_text_is_read_whether_it_wraps_the_draft_or_not() -> None:
    bad = draft_of(CONCLUSION, evidence=[(QUIET, "nothing in the logs")])
    good = {"conclusion": CONCLUSION, "evidence": [{"invocation_id": LOGS, "claim": "timeouts"}]}
    for text in (json.dumps(good), json.dumps({"draft": good})):
        run = Run(repair=[ModelReply(content=text)])
        assert run.release(completed(bad)).outcome is ReleaseOutcome.SUCCESS


def test_a_repair_reply_without_a_valid_draft_says_why_and_is_not_rechecked() -> None:
    bad = draft_of(CONCLUSION, evidence=[(QUIET, "nothing in the logs")])
    for text, why in (("{not json", "repair output is not JSON (Expecting property name "
                                    "enclosed in double quotes)"),
                      ("[" * 100_000, "repair output is not JSON (nested too deeply to "
                                      "decode)"),
                      ('{"draft": {"conclusion": 1' + "0" * 5000 + "}}",
                       "repair output is not JSON (a number too long to decode)"),
                      ('{"draft": null}', "repair returned nothing"),
                      ('{"draft": {"conclusion": 7}}',
                       "repaired draft invalid at conclusion: Input should be a valid string")):
        run = Run(repair=[ModelReply(content=text)])
        decision = run.release(completed(bad))
        assert decision.fallback_type is FallbackType.EVIDENCE_VALIDATION_FAILED
        assert run.traced(TraceEventType.EVIDENCE_REPAIR)[-1] == (
            TraceEventStatus.FAILED, {"error": why})
        assert run.traced(TraceEventType.EVIDENCE_GUARD_RECHECK) == []


def test_a_repair_that_fails_technically_ends_evidence_validation_failed() -> None:
    bad = draft_of(CONCLUSION, evidence=[(QUIET, "nothing in the logs")])
    run = Run(repair=[provider_error("repair model down")])
    decision = run.release(completed(bad))
    assert decision.fallback_type is FallbackType.EVIDENCE_VALIDATION_FAILED
    assert run.traced(TraceEventType.EVIDENCE_REPAIR)[-1] == (
        TraceEventStatus.FAILED, {"error": "repair model down"})


def test_a_conclusion_the_guard_finds_unsupported_ends_semantic_unsupported() -> None:
    run = Run(guard=ScriptedSemanticGuard("UNSUPPORTED"))
    decision = run.release(completed(VALID))
    assert (decision.outcome, decision.fallback_type) == (
        ReleaseOutcome.FALLBACK, FallbackType.SEMANTIC_UNSUPPORTED)
    assert decision.verdict is SemanticVerdict.UNSUPPORTED
    assert CONCLUSION not in str(decision.content)


def test_a_guard_that_is_technically_unavailable_ends_semantic_unavailable() -> None:
    run = Run(guard=ScriptedSemanticGuard("UNAVAILABLE"))
    decision = run.release(completed(VALID))
    assert decision.fallback_type is FallbackType.SEMANTIC_UNAVAILABLE
    assert decision.verdict is SemanticVerdict.UNAVAILABLE
    assert run.traced(TraceEventType.SEMANTIC_GUARD_DECISION) == [
        (TraceEventStatus.FAILED,
         {"verdict": "UNAVAILABLE", "error": "semantic guard unavailable"})]


# -- Completed, without a conclusion ----------------------------------------------------------

def test_a_draft_without_conclusion_but_verified_findings_ends_insufficient_evidence() -> None:
    run = Run()
    decision = run.release(completed(draft_of(
        findings=[("timeouts in checkout logs", [LOGS]), ("the backend failed", [BROKEN])])))
    assert decision.fallback_type is FallbackType.INSUFFICIENT_EVIDENCE
    assert fallback_facts(decision) == ["timeouts in checkout logs"]  # ERROR is not verified
    assert run.guard.requests == []  # no guard chain without a conclusion


def test_a_draft_with_only_missing_information_ends_missing_required_context() -> None:
    run = Run()
    decision = run.release(completed(draft_of(missing_info=["the deploy time"])))
    assert decision.fallback_type is FallbackType.MISSING_REQUIRED_CONTEXT
    assert decision.content["missingInfo"] == ["the deploy time"]
    assert decision.content["facts"] == []


def test_a_draft_without_conclusion_facts_or_missing_information_fails() -> None:
    run = Run()
    with pytest.raises(ReleaseFailed):
        run.release(completed(draft_of(findings=[("the backend failed", [BROKEN])])))
    assert run.traced(TraceEventType.RELEASE_DECISION)[0][0] is TraceEventStatus.FAILED


# -- Controlled Stop (and the snapshot path) --------------------------------------------------

def test_a_controlled_stop_with_verified_facts_ends_insufficient_evidence() -> None:
    run = Run()
    snapshot = ProgressSnapshot((fact("timeouts in checkout logs", LOGS),), ("the deploy time",))
    decision = run.release(stopped(DiagnosisStopReason.INFORMATION_SATURATED, snapshot))
    assert (decision.outcome, decision.fallback_type, decision.run_state) == (
        ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE, RunState.SUCCESS)
    assert decision.content["missingInfo"] == ["the deploy time"]


def test_a_controlled_stop_with_only_missing_information_fails() -> None:
    run = Run()
    snapshot = ProgressSnapshot((fact("the backend failed", BROKEN),), ("the deploy time",))
    with pytest.raises(ReleaseFailed):
        run.release(stopped(DiagnosisStopReason.PROGRESS_PROTOCOL_VIOLATED, snapshot))


# -- budget stops: the run stays BUDGET_EXHAUSTED ---------------------------------------------

def budget_stop(run: Run, snapshot: ProgressSnapshot) -> DiagnosisAgentExecution:
    exhaust_budget(run.ctx, run.collection, BudgetExceeded("model_calls", 5, 4))
    return stopped(DiagnosisStopReason.BUDGET_LIMIT_REACHED, snapshot)


def test_a_budget_stop_with_verified_facts_releases_insufficient_evidence_and_stays_exhausted(
        ) -> None:
    run = Run()
    execution = budget_stop(run, ProgressSnapshot((fact("timeouts in checkout logs", LOGS),)))
    assert run.pipeline.may_release(execution)
    decision = run.release(execution)
    assert (decision.outcome, decision.fallback_type) == (
        ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE)
    assert decision.run_state is RunState.BUDGET_EXHAUSTED
    assert run.ctx.state is RunState.BUDGET_EXHAUSTED


def test_a_budget_stop_without_verified_facts_fails() -> None:
    run = Run()
    execution = budget_stop(run, ProgressSnapshot((), ("the deploy time",)))
    with pytest.raises(ReleaseFailed):
        run.release(execution)
    assert run.ctx.state is RunState.BUDGET_EXHAUSTED


def test_a_guard_reply_past_the_token_budget_exhausts_the_run_and_releases_the_snapshot(
        ) -> None:
    run = Run(guard=ScriptedSemanticGuard("SUPPORTED", usage=TokenUsage(60, 60)),
              config=HarnessConfig(budget=BudgetLimits(tokens=100)))
    snapshot = ProgressSnapshot((fact("timeouts in checkout logs", LOGS),))
    decision = run.release(completed(VALID, snapshot))
    assert run.ctx.state is RunState.BUDGET_EXHAUSTED
    assert (decision.outcome, decision.fallback_type, decision.run_state) == (
        ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE, RunState.BUDGET_EXHAUSTED)
    assert decision.conclusion is None and CONCLUSION not in str(decision.content)
    assert run.collection.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert [d for _, d in run.traced(TraceEventType.BUDGET_EXHAUSTED)] == [
        {"kind": "tokens", "value": 120, "limit": 100}]


def test_a_repair_whose_reply_spends_the_token_budget_was_still_asked_for() -> None:
    bad = draft_of(CONCLUSION, evidence=[(QUIET, "nothing in the logs")])
    run = Run(repair=[repaired(CONCLUSION, [(LOGS, "timeouts in the logs")],
                               usage=TokenUsage(60, 60))],
              config=HarnessConfig(budget=BudgetLimits(tokens=100)))
    snapshot = ProgressSnapshot((fact("timeouts in checkout logs", LOGS),))
    decision = run.release(completed(bad, snapshot))
    assert decision.run_state is RunState.BUDGET_EXHAUSTED
    assert decision.repaired
    assert run.guard.requests == []


# -- a run that ended before release ----------------------------------------------------------

def test_a_run_that_was_cancelled_is_not_released() -> None:
    run = Run()
    run.ctx.cancel(CancellationReason.CLIENT_DISCONNECTED, "client left")
    execution = stopped(DiagnosisStopReason.INFORMATION_SATURATED,
                        ProgressSnapshot((fact("timeouts in checkout logs", LOGS),)))
    assert not run.pipeline.may_release(execution)
    assert not run.pipeline.may_release(completed(VALID))
    with pytest.raises(RunAborted):
        run.release(completed(VALID))
    assert run.guard.requests == []


def test_a_budget_stop_of_a_run_the_client_ended_first_is_not_released() -> None:
    run = Run()
    run.ctx.cancel(CancellationReason.CLIENT_DISCONNECTED, "client left")
    execution = budget_stop(run, ProgressSnapshot((fact("timeouts in checkout logs", LOGS),)))
    assert run.ctx.state is RunState.CANCELLED
    assert not run.pipeline.may_release(execution)


def test_the_timeout_fallback_releases_verified_facts_and_the_run_stays_timed_out() -> None:
    run = Run(config=HarnessConfig(policy=Policy(timeout_progress_fallback=True)))
    run.ctx.cancellation.cancel(CancellationReason.DEADLINE_EXCEEDED, "deadline")
    decision = run.pipeline.timeout_fallback(
        ProgressSnapshot((fact("timeouts in checkout logs", LOGS),)))
    assert (decision.outcome, decision.fallback_type, decision.run_state) == (
        ReleaseOutcome.FALLBACK, FallbackType.INSUFFICIENT_EVIDENCE, RunState.TIMED_OUT)
