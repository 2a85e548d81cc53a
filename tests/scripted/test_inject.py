"""The fault plan: a scenario's faults as the interceptor, probe and send hook of its run."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from harness_lab.config import HarnessConfig
from harness_lab.errors import ProviderError, StoreError
from harness_lab.fakes import ScriptedRouter
from harness_lab.harness import Harness
from harness_lab.ports import CallKind, RouteRequest
from harness_lab.scenarios.faults import Fault
from harness_lab.scripted.inject import FaultPlan
from harness_lab.states import RunState
from harness_lab.sweep.spec import StochasticFaults
from harness_lab.sweep.stochastic import SampleStream, sampled_faults
from tests.conftest import build

FAULTS = TypeAdapter(list[Fault])


def plan(*data: dict[str, Any]) -> FaultPlan:
    return FaultPlan(FAULTS.validate_python(list(data)))


def test_a_call_a_fault_answers_is_kept_by_the_plan_and_never_reaches_the_fake() -> None:
    p = plan({"kind": "provider_error", "call": "router", "n": 1})
    router = ScriptedRouter("DIAGNOSIS")
    request = RouteRequest("why?", (), None)
    with pytest.raises(ProviderError, match="injected"):
        p.call(CallKind.ROUTER, "router", request, router.route)
    p.call(CallKind.ROUTER, "router", request, router.route)
    assert p.requests[CallKind.ROUTER] == [request, request]
    assert router.requests == [request]  # type: ignore[comparison-overlap]
    assert p.unfired() == []


def test_configuring_applies_the_faults_holding_from_the_start_and_fires_them() -> None:
    p = plan({"kind": "deadline", "at_s": 2.0},
             {"kind": "tool_rejection", "reason": "AUTH", "tool": "metrics"},
             {"kind": "tool_rejection", "reason": "READ_ONLY", "tool": "logs"},
             {"kind": "user_cancel", "at_s": 1.0})
    config = p.configure(HarnessConfig(), ["logs", "metrics"])
    assert (config.deadline_s, config.authorized_tools) == (2.0, frozenset({"logs"}))
    assert (p.read_only("logs", True), p.read_only("metrics", True)) == (False, True)
    assert [i for i, _ in p.unfired()] == [3]  # the cancel waits for its time


def test_a_plan_applied_to_parts_with_sampled_faults_sees_each_call_first() -> None:
    p = plan({"kind": "provider_error", "call": "guard", "n": 1},
             {"kind": "deadline", "at_s": 2.0})
    stream = SampleStream(0, 0, 0)
    sampled = sampled_faults(StochasticFaults(provider_error_p={"guard": 0.5}), stream)
    parts = p.applied_to(build([]).parts.with_(interceptor=sampled))
    assert parts.probe is p and parts.config.deadline_s == 2.0
    assert parts.interceptor is not None
    with pytest.raises(ProviderError, match="injected"):
        parts.interceptor.call(CallKind.GUARD, "guard", None, lambda r: r)
    assert not stream.seeded  # the plan's fault answered before the draw


def test_a_run_submitted_with_the_plan_applied_plays_its_faults() -> None:
    p = plan({"kind": "router_unavailable"})
    h: Harness = build([])
    handle = h.submit("why?", parts=p.applied_to(h.parts))
    p.arm(h, handle)
    h.run_all()
    assert handle.record.run_state is RunState.FAILED
    assert h.parts.components.router.requests == []  # type: ignore[attr-defined]
    assert len(p.requests[CallKind.ROUTER]) == 1
    assert p.unfired() == []


def test_a_store_failure_refuses_the_operation_it_names_and_lets_the_others_through() -> None:
    p = plan({"kind": "store_failure", "operation": "insert_running", "message": "disk full"})
    assert p.persist("read_session", lambda: "history") == "history"
    with pytest.raises(StoreError, match=r"^disk full \(injected\)$"):
        p.persist("insert_running", lambda: pytest.fail("the refused write was made"))
    assert p.persist("complete", lambda: {"status": "SUCCESS"}) == {"status": "SUCCESS"}
    assert p.unfired() == []


def test_a_store_failure_of_an_operation_the_run_never_makes_is_reported() -> None:
    p = plan({"kind": "store_failure", "operation": "read_session"},
             {"kind": "store_failure", "operation": "complete"})
    with pytest.raises(StoreError, match="store unavailable"):
        p.persist("read_session", lambda: None)
    [(index, message)] = p.unfired()
    assert index == 1
    assert message.startswith("fault 1 store_failure(operation=complete, message=store "
                              "unavailable) never fired")


def test_a_run_whose_running_row_the_plan_refuses_ends_failed_with_nothing_stored() -> None:
    p = plan({"kind": "store_failure", "operation": "insert_running", "message": "disk full"})
    h: Harness = build([])
    handle = h.submit("why?", parts=p.applied_to(h.parts))
    record = h.run_all()[0]
    assert (record.run_state, record.stored_row, record.error) == (
        RunState.FAILED, None, "StoreError: disk full (injected)")
    assert h.store.get_run(handle.run_id) is None
    assert h.parts.components.router.requests == []  # type: ignore[attr-defined]
    assert p.unfired() == []
