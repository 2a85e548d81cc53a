"""DiagnosisAgent alone: the progress protocol, saturation, STOP_REQUIRED and budget stops.

The agent runs over a real tool boundary and collection controller with a scripted model;
expected values are those of docs/protocol.md §4 (the per-step progress protocol), §6
(InformationGain, saturation and STOP_REQUIRED) and §7 (the two legal endings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import simpy

from harness_lab.config import HarnessConfig
from harness_lab.core.budget import BudgetLimits
from harness_lab.core.context import RunContext
from harness_lab.diagnosis.agent import DiagnosisAgent, DiagnosisAgentExecution
from harness_lab.diagnosis.collection import CollectionController
from harness_lab.errors import DraftContractError, ModelFailure, SchemaInvalidDraft
from harness_lab.fakes import (
    Evidence,
    NoEvidence,
    ScriptedModel,
    ScriptedTool,
    ToolFailure,
    call_tool,
    draft,
    empty_reply,
    invalid_json,
    progress,
    provider_error,
    report,
    schema_invalid_draft,
)
from harness_lab.ports import ModelReply
from harness_lab.states import (
    CollectionState,
    DiagnosisStopReason,
    InformationGain,
    PreflightReason,
    RunState,
    TraceEventStatus,
    TraceEventType,
)
from harness_lab.tools.boundary import ToolBoundary
from harness_lab.tools.ledger import InvocationLedger

INV1, INV2, INV3 = "run-1-inv-1", "run-1-inv-2", "run-1-inv-3"
SCOPE = {"service": "checkout"}


class Agent:
    """A DiagnosisAgent over logs (evidence), quiet (no evidence), broken (fails) and notes
    (a tool that is not an evidence tool), with thresholds of 3 as the document's defaults."""

    def __init__(self, steps: Sequence[ModelReply | BaseException], *,
                 config: HarnessConfig | None = None) -> None:
        self.env = simpy.Environment()
        self.ctx = RunContext("run-1", "session-1", self.env, config or HarnessConfig())
        self.collection = CollectionController(3, 3)
        tools = {"logs": ScriptedTool("logs", default=Evidence(({"line": "timeout"},))),
                 "quiet": ScriptedTool("quiet", default=NoEvidence()),
                 "broken": ScriptedTool("broken", default=ToolFailure()),
                 "notes": ScriptedTool("notes", default=Evidence(), evidence=False)}
        self.boundary = ToolBoundary(self.ctx, tools, InvocationLedger(), self.collection)
        self.model = ScriptedModel(list(steps))
        self.agent = DiagnosisAgent(self.ctx, self.model, self.boundary, self.collection,
                                    "why is checkout slow?")

    def run(self) -> DiagnosisAgentExecution:
        """Play the agent's loop to its end; its execution, or what it raised."""
        result: DiagnosisAgentExecution = self.env.run(until=self.env.process(self.agent.run()))
        return result

    def gain(self, invocation_id: str) -> InformationGain | None:
        record = self.boundary.record(invocation_id)
        assert record is not None
        return record.information_gain

    def traced(self, type_: TraceEventType) -> list[dict[str, Any]]:
        return [dict(e.detail) for e in self.ctx.tracer.events if e.type is type_]


def facts(execution: DiagnosisAgentExecution) -> list[str]:
    return [f.statement for f in execution.snapshot.facts]


# -- the per-step progress protocol (doc §4) --------------------------------------------------

def test_a_valid_report_assesses_the_pending_observation_and_its_facts_are_kept() -> None:
    a = Agent([call_tool("logs", SCOPE),
               draft(findings=[("timeouts in checkout logs", [INV1])],
                     progress=progress("GAINED", facts=[("db timeouts", [INV1])]))])
    execution = a.run()
    assert execution.draft is not None
    assert a.gain(INV1) is InformationGain.GAINED
    assert facts(execution) == ["db timeouts", "timeouts in checkout logs"]
    assert a.collection.violation_streak == 0


def test_a_missing_report_after_an_observation_is_a_violation_named_in_the_next_notice(
        ) -> None:
    a = Agent([call_tool("logs", SCOPE), call_tool("quiet", SCOPE),
               draft(missing_info=["the deploy time"])])
    a.run()
    third = a.model.requests[2]
    assert third.notice is not None and third.notice.startswith("progress protocol violated")
    assert a.gain(INV1) is None  # a violation gives the pending observation no gain
    assert a.collection.violation_streak == 2


def test_a_report_citing_a_failed_invocation_is_ignored_with_its_facts() -> None:
    a = Agent([call_tool("broken", SCOPE),
               report(progress(facts=[("the backend is down", [INV1])])),
               draft(missing_info=["the deploy time"])])
    execution = a.run()
    assert facts(execution) == []
    assert a.collection.violation_streak == 1
    assert a.model.requests[2].notice is not None


def test_a_report_without_the_owed_assessment_is_a_violation() -> None:
    a = Agent([call_tool("logs", SCOPE), report(progress(facts=[("db timeouts", [INV1])])),
               draft(missing_info=["the deploy time"])])
    execution = a.run()
    assert facts(execution) == []
    assert a.gain(INV1) is None
    assert a.collection.violation_streak == 1


def test_a_valid_report_resets_the_violation_streak() -> None:
    a = Agent([call_tool("broken", SCOPE), call_tool("broken", {"service": "cart"}),
               report(progress(next="look at the logs")),
               draft(missing_info=["the deploy time"])])
    a.run()
    assert a.collection.violation_streak == 0


def test_three_consecutive_violations_saturate_with_protocol_violated() -> None:
    a = Agent([call_tool("broken", SCOPE), call_tool("broken", {"service": "a"}),
               call_tool("broken", {"service": "b"}), call_tool("notes", SCOPE),
               report(progress(missing_info=["the deploy time"]))])
    execution = a.run()
    assert a.collection.state is CollectionState.SATURATED
    assert execution.stop_reason is DiagnosisStopReason.PROGRESS_PROTOCOL_VIOLATED
    assert [d["reason"] for d in a.traced(TraceEventType.COLLECTION_STOP)] == [
        "PROGRESS_PROTOCOL_VIOLATED"]


def test_a_violation_never_stops_a_draft_from_being_used() -> None:
    a = Agent([call_tool("logs", SCOPE), draft(missing_info=["the deploy time"])])
    execution = a.run()
    assert execution.draft is not None
    assert execution.draft is not None and execution.draft.missing_info == ("the deploy time",)


# -- InformationGain, saturation and STOP_REQUIRED (doc §6) -----------------------------------

def test_no_evidence_and_exact_duplicates_are_no_gain_decided_by_the_harness() -> None:
    a = Agent([call_tool("quiet", SCOPE), call_tool("logs", SCOPE, progress=progress()),
               call_tool("logs", SCOPE, progress=progress("GAINED")),
               draft(missing_info=["x"], progress=progress())])
    a.run()
    assert [a.gain(i) for i in (INV1, INV2, INV3)] == [
        InformationGain.NO_GAIN, InformationGain.GAINED, InformationGain.NO_GAIN]


def saturating_steps() -> list[ModelReply]:
    """Three NO_EVIDENCE results in a row: the third NO_GAIN saturates collection."""
    return [call_tool("quiet", {"service": "a"}),
            call_tool("quiet", {"service": "b"}, progress=progress()),
            call_tool("quiet", {"service": "c"}, progress=progress())]


def test_three_no_gains_saturate_and_the_next_step_alone_is_told_stop_required() -> None:
    a = Agent([*saturating_steps(), call_tool("notes", SCOPE, progress=progress())])
    execution = a.run()
    assert a.collection.state is CollectionState.SATURATED
    assert [r.stop_required for r in a.model.requests] == [False, False, False, True]
    assert a.model.requests[3].notice is not None and "STOP_REQUIRED" in a.model.requests[3].notice
    # a tool request in the STOP_REQUIRED step, even a non-evidence tool, ends the loop
    assert execution.stop_reason is DiagnosisStopReason.INFORMATION_SATURATED
    assert [(r.tool, r.reason) for r in a.boundary.rejections] == [
        ("notes", PreflightReason.SATURATED)]
    assert len(a.boundary.records) == 3


def test_a_draft_in_the_stop_required_step_completes_the_diagnosis() -> None:
    a = Agent([*saturating_steps(), draft(missing_info=["the deploy time"], progress=progress())])
    execution = a.run()
    assert execution.draft is not None and execution.stop_reason is None


def test_a_report_alone_in_the_stop_required_step_is_a_controlled_stop() -> None:
    a = Agent([*saturating_steps(), report(progress(missing_info=["the deploy time"]))])
    execution = a.run()
    assert (execution.draft, execution.stop_reason) == (
        None, DiagnosisStopReason.INFORMATION_SATURATED)
    assert execution.snapshot.missing_info == ("the deploy time",)


def assessed_no_gains() -> list[ModelReply]:
    """Three evidence results the agent assesses NO_GAIN; the third assessment saturates."""
    return [call_tool("logs", {"service": "a"}),
            call_tool("logs", {"service": "b"}, progress=progress("NO_GAIN")),
            call_tool("logs", {"service": "c"}, progress=progress("NO_GAIN"))]


def test_an_evidence_tool_requested_once_saturated_is_rejected_without_a_record() -> None:
    a = Agent([*assessed_no_gains(),
               call_tool("logs", {"service": "d"}, progress=progress("NO_GAIN")),
               report(progress())])
    execution = a.run()
    assert [(r.tool, r.reason) for r in a.boundary.rejections] == [
        ("logs", PreflightReason.SATURATED)]
    assert len(a.boundary.records) == 3
    assert [r.stop_required for r in a.model.requests] == [False, False, False, False, True]
    assert execution.stop_reason is DiagnosisStopReason.INFORMATION_SATURATED


def test_a_tool_that_is_not_an_evidence_tool_still_runs_once_saturated() -> None:
    a = Agent([*assessed_no_gains(), call_tool("notes", SCOPE, progress=progress("NO_GAIN")),
               report(progress())])
    a.run()
    assert a.boundary.rejections == []
    assert [r.tool for r in a.boundary.records] == ["logs", "logs", "logs", "notes"]


# -- budget stops and failures ----------------------------------------------------------------

def test_a_model_call_past_the_budget_is_a_controlled_stop_that_exhausts_the_run() -> None:
    a = Agent([call_tool("logs", SCOPE), report(progress("GAINED"))],
              config=HarnessConfig(budget=BudgetLimits(model_calls=1)))
    execution = a.run()
    assert execution.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert a.ctx.state is RunState.BUDGET_EXHAUSTED
    assert a.collection.state is CollectionState.COLLECTING  # a budget never saturates
    assert a.traced(TraceEventType.BUDGET_EXHAUSTED) == [
        {"kind": "model_calls", "value": 2, "limit": 1}]
    assert len(a.model.requests) == 1


def test_a_tool_call_past_the_budget_is_rejected_and_exhausts_the_run() -> None:
    a = Agent([call_tool("logs", SCOPE), call_tool("logs", {"service": "cart"},
                                                   progress=progress("GAINED"))],
              config=HarnessConfig(budget=BudgetLimits(tool_calls=1)))
    execution = a.run()
    assert execution.stop_reason is DiagnosisStopReason.BUDGET_LIMIT_REACHED
    assert [r.reason for r in a.boundary.rejections] == [PreflightReason.BUDGET]
    assert a.ctx.budget.usage().tool_calls == 1


def test_a_model_provider_error_fails_the_diagnosis_naming_the_step() -> None:
    a = Agent([call_tool("logs", SCOPE), provider_error("model down")])
    with pytest.raises(ModelFailure, match="step 2"):
        a.run()
    failed = [(e.status, dict(e.detail)) for e in a.ctx.tracer.events
              if e.type is TraceEventType.AGENT_MODEL_STEP][-1]
    assert failed == (TraceEventStatus.FAILED, {"step": 2, "error": "model down"})


# -- protocol problems in the trace ------------------------------------------------------------

def steps_traced(a: Agent) -> list[tuple[TraceEventStatus, dict[str, Any]]]:
    return [(e.status, dict(e.detail)) for e in a.ctx.tracer.events
            if e.type is TraceEventType.AGENT_MODEL_STEP]


def test_a_reply_carrying_a_tool_request_and_a_draft_is_traced_refused_with_its_reason() -> None:
    both = call_tool("logs", SCOPE)
    both = ModelReply(tool_call=both.tool_call,
                      payload={"draft": {"missing_info": ["the deploy time"]}})
    a = Agent([both])
    with pytest.raises(SchemaInvalidDraft):
        a.run()
    status, detail = steps_traced(a)[-1]
    assert status is TraceEventStatus.REJECTED
    assert detail["action"] == "refused" and detail["kind"] == "SCHEMA_INVALID"
    assert detail["step"] == 1 and "a draft or an action, not both" in detail["reason"]
    assert a.traced(TraceEventType.TOOL_INVOCATION) == []  # no tool ran


@pytest.mark.parametrize(("reply", "kind"), [
    (invalid_json(), "INVALID_JSON"), (empty_reply(), "EMPTY_DRAFT"),
    (schema_invalid_draft(), "SCHEMA_INVALID")])
def test_each_draft_contract_error_is_traced_with_its_kind_and_step(
        reply: ModelReply, kind: str) -> None:
    a = Agent([call_tool("logs", SCOPE, progress=progress()), reply])
    with pytest.raises(DraftContractError):
        a.run()
    status, detail = steps_traced(a)[-1]
    assert (status, detail["step"], detail["kind"]) == (TraceEventStatus.REJECTED, 2, kind)


@pytest.mark.parametrize(("text", "why"), [
    ("[" * 100_000, "nested too deeply to decode"),
    ('{"draft": {"conclusion": 1' + "0" * 5000 + "}}", "a number too long to decode")],
    ids=["nested-100000-deep", "a-5000-digit-number"])
def test_json_no_parser_takes_whole_is_refused_as_output_that_is_not_json(
        text: str, why: str) -> None:
    a = Agent([call_tool("logs", SCOPE, progress=progress()), invalid_json(text)])
    with pytest.raises(DraftContractError):
        a.run()
    status, detail = steps_traced(a)[-1]
    assert (status, detail["kind"]) == (TraceEventStatus.REJECTED, "INVALID_JSON")
    assert detail["reason"] == f"step 2: output is not JSON ({why})"


def test_an_accepted_tool_request_is_traced_ok_with_its_tool() -> None:
    a = Agent([call_tool("logs", SCOPE), draft(missing_info=["the deploy time"],
                                              progress=progress("GAINED"))])
    a.run()
    assert steps_traced(a) == [
        (TraceEventStatus.OK, {"step": 1, "action": "tool", "tool": "logs",
                               "stop_required": False}),
        (TraceEventStatus.OK, {"step": 2, "action": "reply", "tool": None,
                               "stop_required": False})]


def test_a_refused_draft_keeps_the_verified_progress_its_own_step_reported() -> None:
    a = Agent([call_tool("logs", SCOPE),
               ModelReply(payload={"progress": {"assessment": "GAINED", "facts": [
                   {"statement": "db timeouts", "citations": [INV1]}]},
                   "draft": {"conclusion": 42}})])
    with pytest.raises(SchemaInvalidDraft) as raised:
        a.run()
    assert [f.statement for f in raised.value.progress.facts] == ["db timeouts"]


@pytest.mark.parametrize(("steps", "kind"), [
    ([call_tool("logs", SCOPE), call_tool("quiet", SCOPE)], "MISSING_REPORT"),
    ([call_tool("logs", SCOPE), report({"assessment": "MAYBE"})], "INVALID_REPORT"),
    ([call_tool("broken", SCOPE), report(progress(facts=[("down", [INV1])]))],
     "UNVERIFIED_CITATION"),
    ([call_tool("logs", SCOPE), report(progress(facts=[("db timeouts", [INV1])]))],
     "MISSING_ASSESSMENT")])
def test_each_progress_protocol_violation_is_traced_with_its_kind_and_step(
        steps: list[ModelReply], kind: str) -> None:
    a = Agent([*steps, draft(missing_info=["the deploy time"])])
    a.run()
    violations = a.traced(TraceEventType.PROGRESS_PROTOCOL_VIOLATION)
    assert [(v["kind"], v["step"], v["violation_streak"]) for v in violations][:1] == [
        (kind, 2, 1)]
    assert violations[0]["problem"]


def test_the_violation_that_saturates_is_traced_before_the_collection_stop() -> None:
    a = Agent([call_tool("broken", SCOPE), call_tool("broken", {"service": "a"}),
               call_tool("broken", {"service": "b"}), call_tool("notes", SCOPE),
               report(progress(missing_info=["the deploy time"]))])
    a.run()
    order = [e.type for e in a.ctx.tracer.events
             if e.type in (TraceEventType.PROGRESS_PROTOCOL_VIOLATION,
                           TraceEventType.COLLECTION_STOP)]
    assert order[:4] == [TraceEventType.PROGRESS_PROTOCOL_VIOLATION] * 3 + [
        TraceEventType.COLLECTION_STOP]
    assert [v["violation_streak"] for v in a.traced(
        TraceEventType.PROGRESS_PROTOCOL_VIOLATION)][:3] == [1, 2, 3]
