import pytest

from harness_lab.config import HarnessConfig
from harness_lab.errors import ScriptExhausted, ToolExecutionError
from harness_lab.fakes import (
    Evidence,
    NoEvidence,
    Oversize,
    ScriptedTool,
    ToolFailure,
    Unprojectable,
    json_size,
    scope_key,
)
from harness_lab.ports import Tool, ToolInput, ToolOutput


def call(scope: dict | None = None, n: int = 1) -> ToolInput:
    return ToolInput("r1", f"r1-inv-{n}", "logs", {"service": "checkout"} if scope is None
                     else scope)


def lines(output: ToolOutput) -> list[str]:
    return [item["line"] for item in output.items]


# behaviours


def test_evidence_by_default_is_one_line_sized_by_its_compact_json():
    output = Evidence().output(call())
    assert output == ToolOutput(({"line": "evidence"},), size_bytes=21, latency_s=None)


def test_evidence_carries_its_items_size_and_latency_when_given():
    output = Evidence([{"line": "oom"}, {"line": "restart"}], size_bytes=99,
                      latency_s=2.0).output(call())
    assert output == ToolOutput(({"line": "oom"}, {"line": "restart"}), size_bytes=99,
                                latency_s=2.0)


def test_evidence_is_not_changed_by_mutating_the_items_it_was_given():
    item = {"line": "oom"}
    behaviour = Evidence([item])
    item["line"] = "changed"
    assert lines(behaviour.output(call())) == ["oom"]


def test_json_size_counts_the_utf8_bytes_of_the_compact_json_array():
    assert json_size([{"b": 1, "a": "é"}]) == 18


def test_no_evidence_returns_no_items_and_zero_bytes():
    assert NoEvidence(latency_s=1.0).output(call()) == ToolOutput((), size_bytes=0,
                                                                  latency_s=1.0)


def test_a_tool_failure_raises_a_tool_execution_error_with_its_message_and_latency():
    with pytest.raises(ToolExecutionError) as caught:
        ToolFailure("backend timed out", latency_s=4.0).output(call())
    assert (str(caught.value), caught.value.latency_s) == ("backend timed out", 4.0)


def test_a_tool_failure_without_a_latency_leaves_it_to_the_latency_model():
    with pytest.raises(ToolExecutionError) as caught:
        ToolFailure().output(call())
    assert (str(caught.value), caught.value.latency_s) == ("backend error", None)


def test_an_oversize_result_claims_ten_megabytes_by_default():
    output = Oversize().output(call())
    assert (output.size_bytes, len(output.items)) == (10_000_000, 1)


def test_an_oversize_result_exceeds_the_default_projection_limit():
    assert Oversize().output(call()).size_bytes > HarnessConfig().projection_max_bytes


def test_an_unprojectable_result_is_marked_not_projectable():
    output = Unprojectable(latency_s=0.5).output(call())
    assert (output.projectable, output.items, output.latency_s) == (False, (), 0.5)


# ScriptedTool attributes and validation


def test_a_scripted_tool_is_a_tool():
    assert isinstance(ScriptedTool("logs"), Tool)


def test_a_scripted_tool_is_a_read_only_evidence_tool_by_default():
    tool = ScriptedTool("logs")
    assert (tool.name, tool.read_only, tool.evidence) == ("logs", True, True)


def test_a_scripted_tool_takes_its_read_only_and_evidence_flags():
    tool = ScriptedTool("restart", read_only=False, evidence=False)
    assert (tool.read_only, tool.evidence) == (False, False)


def test_validate_accepts_a_scope_holding_every_required_key():
    assert ScriptedTool("logs", required=["service"]).validate({"service": "a"}) is None


def test_validate_names_the_missing_required_key():
    message = ScriptedTool("logs", required=["service"]).validate({"since": "1h"})
    assert message == "tool 'logs': scope is missing required key(s) 'service'"


def test_validate_names_every_missing_required_key():
    message = ScriptedTool("logs", required=["service", "since"]).validate({})
    assert message == "tool 'logs': scope is missing required key(s) 'service', 'since'"


def test_validate_refuses_a_scope_that_is_not_a_mapping():
    message = ScriptedTool("logs").validate(["service"])  # type: ignore[arg-type]
    assert message == "tool 'logs': scope must be an object, not list"


# ScriptedTool lookup


def test_a_scripted_tool_plays_its_script_call_by_call():
    tool = ScriptedTool("logs", [Evidence([{"line": "oom"}]), NoEvidence()])
    assert lines(tool.invoke(call(n=1))) == ["oom"]
    assert tool.invoke(call(n=2)).items == ()


def test_a_scripted_tool_records_every_request_it_received():
    tool = ScriptedTool("logs", [NoEvidence(), NoEvidence()])
    tool.invoke(call(n=1))
    tool.invoke(call(n=2))
    assert [r.invocation_id for r in tool.requests] == ["r1-inv-1", "r1-inv-2"]


def test_a_scripted_tool_that_runs_out_names_the_tool_and_the_step():
    tool = ScriptedTool("logs", [NoEvidence(), NoEvidence()])
    tool.invoke(call(n=1))
    tool.invoke(call(n=2))
    with pytest.raises(ScriptExhausted) as caught:
        tool.invoke(call(n=3))
    assert str(caught.value) == (
        "ScriptedTool(logs): script exhausted at step 3 (it holds 2 step(s))")
    assert (caught.value.component, caught.value.step) == ("ScriptedTool(logs)", 3)


def test_a_scripted_tool_uses_name_for_errors_when_it_runs_out():
    tool = ScriptedTool("logs", name_for_errors="logs backend")
    with pytest.raises(ScriptExhausted) as caught:
        tool.invoke(call())
    assert (caught.value.component, caught.value.step) == ("logs backend", 1)


def test_a_scripted_tool_counts_its_remaining_script_steps():
    tool = ScriptedTool("logs", [NoEvidence(), NoEvidence()])
    tool.invoke(call())
    assert tool.remaining == 1


def test_a_scripted_tool_plays_a_tool_failure_by_raising():
    tool = ScriptedTool("logs", [ToolFailure("index offline", latency_s=1.0)])
    with pytest.raises(ToolExecutionError) as caught:
        tool.invoke(call())
    assert (str(caught.value), caught.value.latency_s) == ("index offline", 1.0)


def test_a_tool_output_in_the_script_is_returned_as_is():
    output = ToolOutput(({"line": "raw"},), size_bytes=3)
    assert ScriptedTool("logs", [output]).invoke(call()) is output


def test_a_callable_in_the_script_is_called_with_the_tool_input():
    tool = ScriptedTool("logs", [lambda req: ToolOutput(({"line": req.scope["service"]},))])
    assert lines(tool.invoke(call({"service": "payments"}))) == ["payments"]


def test_by_scope_matches_a_scope_whatever_its_key_order():
    tool = ScriptedTool("logs", by_scope=[({"service": "a", "since": "1h"},
                                           Evidence([{"line": "match"}]))])
    assert lines(tool.invoke(call({"since": "1h", "service": "a"}))) == ["match"]


def test_by_scope_may_be_keyed_by_scope_json_text_in_any_key_order():
    tool = ScriptedTool("logs", by_scope={'{"since": "1h", "service": "a"}':
                                          Evidence([{"line": "match"}])})
    assert lines(tool.invoke(call({"service": "a", "since": "1h"}))) == ["match"]


def test_a_by_scope_key_that_is_not_a_json_object_is_refused():
    with pytest.raises(ValueError):
        ScriptedTool("logs", by_scope={'["service"]': NoEvidence()})


def test_a_single_by_scope_behaviour_serves_its_scope_forever():
    tool = ScriptedTool("logs", by_scope=[({"service": "a"}, Evidence([{"line": "a"}]))])
    outputs = [tool.invoke(call({"service": "a"}, n)) for n in (1, 2, 3)]
    assert [lines(o) for o in outputs] == [["a"], ["a"], ["a"]]


def test_a_by_scope_sequence_is_consumed_then_the_lookup_falls_through_to_the_script():
    tool = ScriptedTool("logs", [Evidence([{"line": "script"}])],
                        by_scope=[({"service": "a"}, [Evidence([{"line": "first"}]),
                                                      Evidence([{"line": "second"}])])])
    outputs = [tool.invoke(call({"service": "a"}, n)) for n in (1, 2, 3)]
    assert [lines(o) for o in outputs] == [["first"], ["second"], ["script"]]


def test_an_unmatched_scope_takes_the_next_script_step():
    tool = ScriptedTool("logs", [Evidence([{"line": "script"}])],
                        by_scope=[({"service": "a"}, NoEvidence())])
    assert lines(tool.invoke(call({"service": "b"}))) == ["script"]


def test_the_default_serves_every_call_after_the_script_runs_out():
    tool = ScriptedTool("logs", [Evidence([{"line": "script"}])],
                        default=Evidence([{"line": "default"}]))
    outputs = [tool.invoke(call(n=n)) for n in (1, 2, 3)]
    assert [lines(o) for o in outputs] == [["script"], ["default"], ["default"]]


def test_by_scope_listing_one_scope_twice_is_refused():
    with pytest.raises(ValueError):
        ScriptedTool("logs", by_scope=[({"service": "a", "since": "1h"}, NoEvidence()),
                                       ({"since": "1h", "service": "a"}, NoEvidence())])


def test_scope_key_is_compact_sorted_json():
    assert scope_key({"since": "1h", "service": "a"}) == '{"service":"a","since":"1h"}'


def test_a_rewound_tool_plays_its_script_and_scope_sequences_from_the_start():
    tool = ScriptedTool("logs", [Evidence([{"line": "one"}]), Evidence([{"line": "two"}])],
                        by_scope=[({"service": "a"}, [Evidence([{"line": "a1"}])])])
    assert lines(tool.invoke(call({"service": "a"}))) == ["a1"]
    assert lines(tool.invoke(call({"service": "a"}))) == ["one"]
    tool.rewind()
    assert tool.requests == []
    assert lines(tool.invoke(call({"service": "a"}))) == ["a1"]
    assert lines(tool.invoke(call({"service": "b"}))) == ["one"]
