"""Scenario specs built into scripted components: model steps expand ``inv-N`` per run."""

from __future__ import annotations

from typing import Any

from harness_lab.ports import AgentRequest, ModelReply
from harness_lab.scenarios.spec import ModelStepSpec
from harness_lab.scripted.build import build_model


def step(**fields: Any) -> ModelStepSpec:
    return ModelStepSpec.model_validate(fields)


def play(spec: ModelStepSpec, run_id: str) -> ModelReply:
    model = build_model([spec])
    return model.step(AgentRequest(run_id, "why?", 1, (), (), False))


CITING = step(draft={"conclusion": "the pool is exhausted",
                     "evidence": [{"invocation_id": "inv-1", "claim": "timeouts"},
                                  {"invocation_id": "inv-3", "claim": "pool at 100%"}],
                     "recommendations": ["raise the pool size"]},
              progress={"assessment": "GAINED",
                        "facts": [{"statement": "db timeouts", "citations": ["inv-1"]}]})


def test_a_draft_citing_invocations_names_the_run_that_plays_it() -> None:
    payload = play(CITING, "run-7").payload
    assert payload is not None
    assert [e["invocation_id"] for e in payload["draft"]["evidence"]] == [
        "run-7-inv-1", "run-7-inv-3"]
    assert payload["progress"]["facts"][0]["citations"] == ["run-7-inv-1"]


def test_the_parts_naming_no_invocation_are_kept_as_written() -> None:
    payload = play(CITING, "run-7").payload
    assert payload is not None
    draft = payload["draft"]
    assert draft["conclusion"] == "the pool is exhausted"
    assert draft["recommendations"] == ["raise the pool size"]
    assert [e["claim"] for e in draft["evidence"]] == ["timeouts", "pool at 100%"]
    assert payload["progress"]["assessment"] == "GAINED"


def test_two_runs_of_the_same_step_get_their_own_ids_and_containers() -> None:
    first, second = play(CITING, "run-1").payload, play(CITING, "run-2").payload
    assert first is not None and second is not None
    assert first["draft"]["evidence"][0]["invocation_id"] == "run-1-inv-1"
    assert second["draft"]["evidence"][0]["invocation_id"] == "run-2-inv-1"
    assert first["draft"]["evidence"] is not second["draft"]["evidence"]


def test_a_tool_scope_naming_an_invocation_is_expanded_too() -> None:
    reply = play(step(tool="logs", scope={"service": "checkout", "after": "inv-2"}), "run-4")
    assert reply.tool_call is not None
    assert reply.tool_call.name == "logs"
    assert dict(reply.tool_call.scope) == {"service": "checkout", "after": "run-4-inv-2"}


def test_a_step_naming_no_invocation_plays_alike_in_every_run() -> None:
    plain = step(tool="logs", scope={"service": "checkout"})
    first, second = play(plain, "run-1"), play(plain, "run-2")
    assert first == second
    assert first.tool_call is not None
    assert dict(first.tool_call.scope) == {"service": "checkout"}
