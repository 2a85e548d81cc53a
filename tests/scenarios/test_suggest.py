"""'Did you mean' hints: the keys accepted where an unknown key stands, and the closest one."""

from __future__ import annotations

import pytest

from harness_lab.scenarios.spec import Scenario
from harness_lab.scenarios.suggest import accepted_keys, did_you_mean


def test_the_closest_choice_is_offered_and_nothing_when_none_is_close() -> None:
    assert did_you_mean("latncy_s", ["latency_s", "evidence"]) == "; did you mean 'latency_s'?"
    assert did_you_mean("zzz", ["latency_s", "evidence"]) == ""


@pytest.mark.parametrize(("loc", "expected"), [
    ((), {"name", "description", "model", "$schema"}),
    (("tools", "logs"), {"evidence", "read_only", "script", "by_scope", "default"}),
    (("router", "list[RouteStepSpec]", 0), {"intent", "error", "latency_s", "usage"}),
    (("matrix", "list[Variant]", 0), {"name", "set", "expect"}),
    (("faults", 0, "user_cancel"), {"kind", "at_s", "at", "note"}),
    (("config", "budget"), {"model_calls", "tool_calls", "tokens", "bytes"}),
])
def test_the_keys_accepted_at_a_location_are_those_of_its_model(
        loc: tuple[int | str, ...], expected: set[str]) -> None:
    keys = accepted_keys(Scenario, loc)
    assert expected <= keys
    if loc and loc[0] in ("faults", "matrix", "router"):
        assert keys == expected
