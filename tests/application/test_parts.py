"""RunParts: a run's own parts, bound once when it is submitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness_lab.application.parts import RunParts
from harness_lab.config import HarnessConfig
from harness_lab.fakes import ScriptedTool
from harness_lab.ports import CallKind, RouteRequest
from harness_lab.tools.ledger import InvocationLedger
from tests.conftest import scripted_components


class Counting:
    """An interceptor counting the calls it lets through."""

    def __init__(self) -> None:
        self.calls = 0

    def call(self, kind: CallKind, name: str, request: Any,
             proceed: Callable[[Any], Any]) -> Any:
        self.calls += 1
        return proceed(request)

    def validate(self, tool: str, scope: Any, proceed: Callable[[Any], Any]) -> Any:
        return proceed(scope)

    def read_only(self, tool: str, read_only: bool) -> bool:
        return read_only

    def keep(self, stage: str, record: Any, proceed: Callable[[Any], bool]) -> bool:
        return proceed(record)

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        return proceed()


def parts(**kw: Any) -> RunParts:
    components = scripted_components(tools=[ScriptedTool("logs")])
    return RunParts(components, HarnessConfig(), InvocationLedger(), **kw)


def test_parts_without_an_interceptor_are_bound_as_they_are() -> None:
    given = parts()
    assert given.bound() is given  # the run calls its components directly


def test_bound_parts_call_through_the_interceptor_and_keep_everything_else() -> None:
    counting = Counting()
    given = parts(interceptor=counting)
    bound = given.bound()
    bound.components.router.route(RouteRequest("why?", (), None))
    assert counting.calls == 1
    assert given.components.router.requests != []  # type: ignore[attr-defined]
    assert bound.interceptor is None  # applied once, not again
    assert bound.ledger is not given.ledger
    assert (bound.config, bound.latency, bound.probe, bound.before_send) == (
        given.config, given.latency, given.probe, given.before_send)
    assert list(bound.components.tools) == ["logs"]


def test_with_changes_only_the_parts_named() -> None:
    given = parts()
    config = HarnessConfig(deadline_s=5.0)
    changed = given.with_(config=config)
    assert changed.config is config
    assert changed.components is given.components and changed.ledger is given.ledger

