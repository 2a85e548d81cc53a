import simpy

from harness_lab.config import HarnessConfig
from harness_lab.core.context import RunContext
from harness_lab.diagnosis.collection import CollectionController
from harness_lab.ports import ToolCallRequest, ToolOutput
from harness_lab.states import (
    CancellationReason,
    EvidenceStatus,
    InvocationStatus,
    PreflightReason,
    RunState,
    ToolErrorCode,
    TraceEventStatus,
)
from harness_lab.tools.boundary import ToolBoundary
from harness_lab.tools.ledger import InvocationLedger


class LogTool:
    name = "logs"
    read_only = True
    evidence = True

    def __init__(self, items, latency=2.0):
        self.items, self.latency = items, latency

    def validate(self, scope):
        return None if "service" in scope else "scope needs a service"

    def invoke(self, request):
        return ToolOutput(tuple(self.items), size_bytes=10, latency_s=self.latency)


def run_one(tool, request, *, ledger=None, cancel_at=None):
    env = simpy.Environment()
    ctx = RunContext("r1", "s1", env, HarnessConfig())
    boundary = ToolBoundary(ctx, {"logs": tool}, ledger or InvocationLedger(),
                            CollectionController(3, 3))
    out = {}

    def proc():
        try:
            out["obs"] = yield from boundary.invoke(request)
        except Exception as exc:  # the test inspects what was raised
            out["exc"] = exc

    def canceller():
        yield env.timeout(cancel_at)
        ctx.cancel(CancellationReason.USER_REQUESTED)

    env.process(proc())
    if cancel_at is not None:
        env.process(canceller())
    env.run()
    return ctx, boundary, out


def test_a_tool_with_items_ends_ready_with_evidence_found_after_its_virtual_latency():
    ctx, b, out = run_one(LogTool([{"line": "oom"}]), ToolCallRequest("logs", {"service": "a"}))
    rec = b.records[0]
    assert (rec.status, rec.evidence_status) == (InvocationStatus.READY,
                                                 EvidenceStatus.EVIDENCE_FOUND)
    assert rec.finished_at == 2.0 and out["obs"].needs_assessment


def test_an_empty_result_is_ready_with_no_evidence():
    _, b, _ = run_one(LogTool([]), ToolCallRequest("logs", {"service": "a"}))
    assert b.records[0].evidence_status is EvidenceStatus.NO_EVIDENCE


def test_an_invalid_request_is_rejected_before_any_canonical_record():
    _, b, out = run_one(LogTool([]), ToolCallRequest("logs", {}))
    assert b.records == [] and b.rejections[0].reason is PreflightReason.REQUEST
    assert out["obs"].invocation_id is None


class RefusingLedger:
    """A canonical store that refuses to begin any record."""

    def begin(self, record):
        return False

    def complete(self, record):
        return True


def test_a_store_that_refuses_begin_leaves_no_canonical_record():
    _, b, _ = run_one(LogTool([]), ToolCallRequest("logs", {"service": "a"}),
                      ledger=RefusingLedger())
    assert b.records == [] and b.rejections[0].reason is PreflightReason.STORE


def test_a_cancel_during_the_call_discards_the_late_result():
    ctx, b, out = run_one(LogTool([{"x": 1}]), ToolCallRequest("logs", {"service": "a"}),
                          cancel_at=1.0)
    assert ctx.state is RunState.CANCELLED
    assert type(out["exc"]).__name__ == "RunAborted"
    assert ctx.tracer.events[-2].status is TraceEventStatus.DISCARDED
    assert b.records[0].status is InvocationStatus.ERROR
    assert b.records[0].error_code is ToolErrorCode.ABORTED



def test_a_request_made_after_the_run_ended_is_rejected_for_the_run_and_aborts():
    env = simpy.Environment()
    ctx = RunContext("r1", "s1", env, HarnessConfig())
    boundary = ToolBoundary(ctx, {"logs": LogTool([{"x": 1}])}, InvocationLedger(),
                            CollectionController(3, 3))
    ctx.cancel(CancellationReason.USER_REQUESTED)
    raised = []

    def proc():
        try:
            yield from boundary.invoke(ToolCallRequest("logs", {"service": "a"}))
        except Exception as exc:  # the test inspects what was raised
            raised.append(type(exc).__name__)

    env.process(proc())
    env.run()
    assert raised == ["RunAborted"]
    assert [r.reason for r in boundary.rejections] == [PreflightReason.RUN]
    assert boundary.records == []


class FailingTool(LogTool):
    """A tool whose backend raises ``exc`` instead of answering."""

    def __init__(self, exc):
        super().__init__([])
        self.exc = exc

    def invoke(self, request):
        raise self.exc


def test_a_connection_error_of_the_backend_is_an_execution_error_observed_by_the_agent():
    ctx, b, out = run_one(FailingTool(ConnectionResetError("socket reset")),
                          ToolCallRequest("logs", {"service": "a"}))
    rec = b.records[0]
    assert (rec.status, rec.error_code) == (InvocationStatus.ERROR, ToolErrorCode.EXECUTION)
    assert rec.error == "ConnectionResetError: socket reset"
    assert out["obs"].evidence_status is EvidenceStatus.ERROR and "exc" not in out
    assert ctx.state is RunState.RUNNING


def test_a_bug_in_the_tool_is_raised_after_its_record_is_closed_as_an_error():
    ctx, b, out = run_one(FailingTool(KeyError("items")),
                          ToolCallRequest("logs", {"service": "a"}))
    assert isinstance(out["exc"], KeyError)
    rec = b.records[0]
    assert (rec.status, rec.error_code) == (InvocationStatus.ERROR, ToolErrorCode.EXECUTION)
    assert rec.error == "KeyError: 'items'"
