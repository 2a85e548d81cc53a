"""Each kind of expectation fails a scenario that breaks it, with a message naming the path."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.runner import run_scenario
from harness_lab.scenarios import load_text
from harness_lab.scenarios.loader import ScenarioError
from tests.scenarios import TWO_TOOL_DIAGNOSIS as BASE
from tests.scenarios import TWO_TOOL_MODEL

FALLBACK = """\
name: fallback
description: a missing-context fallback after no tool
model:
  - draft: {missing_info: [which service]}
"""


def mismatches(text: str) -> list[str]:
    [loaded] = load_text(text, "s.yaml")
    result = run_scenario(loaded)
    assert result.error is None, result.error
    return [str(m) for m in result.mismatches]


def after_a_turn(turn: str) -> str:
    """BASE after one earlier turn, ``turn`` being the lines of its ``turns:`` item."""
    return BASE.replace("name: base\n", "name: base\nturns:\n" + turn)


SYSTEM_CHAT_TURN = "  - query: hello\n    router: SYSTEM_CHAT\n"
"""An earlier turn the router sends to the system chat."""

DIAGNOSIS_TURN = ("  - query: why slow?\n    model:\n      - tool: logs\n"
                  "        scope: {service: checkout}\n      - draft:\n"
                  "          conclusion: db timeouts\n"
                  "          evidence: [{invocation_id: inv-1, claim: timeouts}]\n"
                  "        progress: {assessment: GAINED}\n")
"""An earlier turn that concludes ``db timeouts`` from one logs call."""


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(BASE + "expect:\n  statuses: [ROUTING, DIAGNOSIS_RUNNING, SAFETY_VALIDATING]\n",
                 [],
                 id="statuses-as-the-document-lists-them"),
    pytest.param(BASE + "expect:\n  statuses: [ROUTING, SYSTEM_RESPONDING]\n",
                 ["statuses[1]: expected SYSTEM_RESPONDING, got DIAGNOSIS_RUNNING",
                  "statuses: expected 2 items, got 3"],
                 id="wrong-status-sequence-names-the-position"),
    pytest.param(BASE + ("expect:\n  trace: {$in_order: [{type: RELEASE_DECISION, "
                         "detail: {outcome: FALLBACK}}]}\n"),
                 ["trace[RELEASE_DECISION].detail.outcome: expected FALLBACK, got SUCCESS"],
                 id="trace-detail-names-the-event"),
    pytest.param(BASE + ("expect:\n  trace: {$in_order: [{type: RUN_FINISHED, phase: RELEASE, "
                         "status: OK}]}\n"),
                 ["trace[RUN_FINISHED].phase: expected RELEASE, got RUN"],
                 id="trace-status-and-phase"),
    pytest.param(BASE + ("expect:\n  sse: {$in_order: [{kind: metadata, data: {sessionId: s-9, "
                         "runId: run-000001}}, {kind: content, data: {sessionId: s-9, "
                         "runId: run-000002}}]}\nsession_id: s-9\n"),
                 ["sse[content].data.runId: expected run-000002, got run-000001"],
                 id="sse-payload-by-the-keys-it-names"),
    pytest.param(BASE + ("expect:\n  sse: {$in_order: [{kind: content, "
                         "data: {$absent: [conclusion]}}]}\n"),
                 ["sse[content].data.conclusion: expected absent, got pool exhausted"],
                 id="content-carrying-a-conclusion-key"),
    pytest.param(BASE + "expect: {done_outcome: FALLBACK, failure_code: CANCELLED}\n",
                 ["failure_code: expected CANCELLED, got none",
                  "done_outcome: expected FALLBACK, got SUCCESS"],
                 id="done-outcome-and-failure-code"),
    pytest.param(FALLBACK + ("expect:\n  row: {status: SUCCESS, release_outcome: FALLBACK, "
                             "conclusion: null, answer_json: {contentType: diagnosis_report}, "
                             "published_result: null, agent_steps: 1, tool_calls: 0}\n"),
                 ["row.answer_json.contentType: expected diagnosis_report, got fallback"],
                 id="stored-column-names-the-column"),
    pytest.param(BASE + "expect:\n  row: {termination_state: TIMED_OUT}\n",
                 ["row.termination_state: expected TIMED_OUT, got SUCCESS"],
                 id="termination-columns-of-the-row"),
    pytest.param(BASE + ("expect:\n  invocations: [{tool: logs, status: READY}, {tool: metrics, "
                         "evidence_status: NO_EVIDENCE}]\n"),
                 ["invocations[metrics].evidence_status: expected NO_EVIDENCE, "
                  "got EVIDENCE_FOUND"],
                 id="invocation-state-names-the-tool"),
    pytest.param(BASE + ("expect:\n  progress: {facts: [{statement: latency, "
                         "citations: [inv-1]}]}\n"),
                 ["progress.facts[0].statement: expected latency, got timeouts"],
                 id="progress-snapshot-facts"),
    pytest.param(BASE + "expect: {stop_required_deliveries: 1}\n",
                 ["stop_required_deliveries: expected 1, got 0"],
                 id="stop-required-deliveries-counted"),
    pytest.param(after_a_turn(SYSTEM_CHAT_TURN)
                 + ("expect:\n  routing: [{history: [{run_id: run-000001, intent: DIAGNOSIS}], "
                    "previous_turn: null}]\n"),
                 ["routing[0].history[0].intent: expected DIAGNOSIS, got SYSTEM_CHAT"],
                 id="routing-history-each-router-call-received"),
    pytest.param(after_a_turn(DIAGNOSIS_TURN)
                 + ("expect:\n  agent_requests: {$in_order: [{step: 3, previous_turn: "
                    "{run_id: run-000001, conclusion: pool exhausted}}]}\n"),
                 ["agent_requests[2].previous_turn.conclusion: expected pool exhausted, "
                  "got db timeouts"],
                 id="previous-turn-each-model-call-received"),
    pytest.param(after_a_turn(SYSTEM_CHAT_TURN
                              + "    expect: {statuses: [ROUTING, DIAGNOSIS_RUNNING]}\n"),
                 ["turns.0.statuses[1]: expected DIAGNOSIS_RUNNING, got SYSTEM_RESPONDING"],
                 id="earlier-turn-prefixed-with-its-turn"),
    pytest.param(BASE + ("expect:\n  gains: [GAINED]\n  usage: {model_calls: 2}\n"
                         "  terminations: [{state: SUCCESS, reason: completed, t: 0.0}]\n"),
                 ["gains[1]: expected end of list, got GAINED",
                  "gains: expected 1 items, got 2",
                  "usage.model_calls: expected 2, got 3",
                  "terminations[0].t: expected 0.0, got 3.0"],  # 2 s + 1 s
                 id="gains-usage-and-terminations-are-patterns"),
    pytest.param(BASE + ("faults: [{kind: client_disconnect, sse_event: 5}]\n"
                         "expect:\n  sse_refused: [content, done]\n"),
                 ["sse_refused[1]: expected done, got end of list",
                  "sse_refused: expected 2 items, got 1"],
                 id="refused-sse-sends-are-a-pattern-of-kinds"),
    pytest.param(BASE + ("config: {budget: {tool_calls: 3, tokens: 10, model_calls: null}}\n"
                         "expect:\n  headroom: {tool_calls: 2, tokens: 10, model_calls: 5}\n"),
                 ["headroom.tool_calls: expected 2, got 1",  # 3 - 2 calls
                  "headroom.model_calls: expected 5, got null"],
                 id="budget-headroom-with-null-for-an-unlimited-kind"),
    pytest.param(BASE + "expect: {sse: [metadata, status, content, done]}\n",
                 ["sse[2]: expected content, got status", "sse: expected 4 items, got 6"],
                 id="legacy-kind-list-compares-the-whole-sequence"),
    pytest.param(BASE + "expect:\n  sse: {$in_order: [METADATA, {kind: Done}]}\n",
                 [],
                 id="key-values-in-any-case"),
])
def test_an_expectation_names_the_path_of_each_value_the_run_breaks(
        text: str, expected: list[str]) -> None:
    assert mismatches(text) == expected


def test_the_records_error_and_a_missing_stored_row_are_checked() -> None:
    assert mismatches(FALLBACK + "expect: {error: none, db_status: SUCCESS}\n") == []
    assert mismatches(FALLBACK + "expect: {error: 'StoreError: x', db_status: none}\n") == [
        "db_status: expected none, got SUCCESS", 'error: expected "StoreError: x", got none']
    refused = FALLBACK + "faults: [{kind: store_failure, operation: complete}]\n"
    assert mismatches(refused + "expect: {error: 'StoreError: store unavailable (injected)', "
                                "db_status: none}\n") == []
    assert mismatches(refused + "expect: {error: none, db_status: SUCCESS}\n") == [
        "db_status: expected SUCCESS, got none",
        'error: expected none, got "StoreError: store unavailable (injected)"']


def test_a_rejection_detail_that_differs_fails() -> None:
    text = BASE.replace("logs: {latency_s: 2.0}", "logs: {latency_s: 2.0, required: [host]}")
    text = text.replace(TWO_TOOL_MODEL, """\
model:
  - tool: logs
    scope: {service: checkout}
  - draft: {missing_info: [host]}
""")
    text += "expect:\n  rejections: [{reason: REQUEST, tool: metrics}]\n"
    assert mismatches(text) == ["rejections[REQUEST].tool: expected metrics, got logs"]


def test_trace_contains_and_excludes_keep_their_meaning() -> None:
    text = BASE + ("expect: {trace_contains: [RUN_FINISHED, RUN_STARTED], "
                   "trace_excludes: [SEMANTIC_GUARD_DECISION]}\n")
    got = mismatches(text)
    assert got[0].startswith("trace: expected RUN_STARTED after trace[RUN_FINISHED], got "
                             "only before it")
    assert got[1] == ("trace[SEMANTIC_GUARD_DECISION]: expected absent, "
                      "got SEMANTIC_GUARD_DECISION")


def test_every_expect_field_is_documented_with_an_example() -> None:
    from pathlib import Path

    from harness_lab.scenarios.spec import Expect

    text = Path(__file__).parents[2].joinpath("docs", "scenarios.md").read_text()
    section = text[text.index("## expect\n"):text.index("### Matching")]
    rows = {line.split("|")[1].strip().strip("`"): [c.strip() for c in line.split("|")[2:4]]
            for line in section.splitlines() if line.startswith("| `")}
    assert set(rows) == set(Expect.model_fields)
    assert [name for name, (meaning, example) in rows.items()
            if not meaning or not example.startswith(f"`{name}:")] == []


DISCONNECTED = BASE + "faults: [{kind: client_disconnect, at_s: 2.5}]\n"
"""BASE with the client gone during the second tool call: CANCELLED, CLIENT_DISCONNECTED."""


@pytest.mark.parametrize(("text", "holds", "breaks", "message"), [
    (BASE, "trace: {$count: {TOOL_PROGRESS: 2}}", "trace: {$count: {TOOL_PROGRESS: 3}}",
     "trace: expected 3 items matching TOOL_PROGRESS, got 2 (trace[TOOL_PROGRESS#1], "
     "trace[TOOL_PROGRESS#2])"),
    (BASE, "sse: {$count: {status: '>= 3'}}", "sse: {$count: 5}",
     "sse: expected 5 items, got 6"),
    (BASE, "statuses: {$any_order: [SAFETY_VALIDATING, ROUTING, DIAGNOSIS_RUNNING]}",
     "statuses: {$any_order: [SAFETY_VALIDATING, ROUTING, SYSTEM_RESPONDING]}",
     "statuses: expected SYSTEM_RESPONDING among the items ($any_order), got a list of 3: "
     "[ROUTING, DIAGNOSIS_RUNNING, SAFETY_VALIDATING]"),
    (BASE, "trace: {$contains: [RUN_FINISHED, TOOL_PROGRESS, TOOL_PROGRESS]}",
     "trace: {$contains: [TOOL_PROGRESS, TOOL_PROGRESS, TOOL_PROGRESS]}",
     "trace: expected TOOL_PROGRESS ($contains: an item of its own), got only "
     "trace[TOOL_PROGRESS#1], trace[TOOL_PROGRESS#2], which other patterns take"),
    (BASE, "sse: {$in_order: [{kind: content, data: {conclusion: $any}}]}",
     "sse: {$in_order: [{kind: content, data: {missing_info: $any}}]}",
     "sse[content].data.missing_info: expected any value, got no such key"),
    (BASE, "relations: ['sse[content].t == trace[RUN_FINISHED].t']",
     "relations: ['sse[done].t < trace[RUN_FINISHED].t']",
     "relations[0]: expected sse[done].t < trace[RUN_FINISHED].t, got 3.0 and 3.0"),
    (BASE, "relations: ['trace[TOOL_PROGRESS#1].t < trace[TOOL_PROGRESS#2].t']",
     "relations: ['trace[TOOL_PROGRESS].t < 9']",
     "relations[0]: expected trace[TOOL_PROGRESS].t < 9, got trace[TOOL_PROGRESS]: 2 items "
     "have type TOOL_PROGRESS; name one as [TOOL_PROGRESS#1] ... [TOOL_PROGRESS#2]"),
    (BASE, "relations: ['row.status == \"SUCCESS\"']",
     "relations: ['trace[RUN_FINISHED].tt > 0']",
     "relations[0]: expected trace[RUN_FINISHED].tt > 0, got trace[RUN_FINISHED].tt: no such "
     "key; the keys are type, t, phase, status, detail; did you mean 't'?"),
    (BASE, "timeline: {$in_order: [RELEASE_DECISION, RUN_FINISHED, content, done]}",
     "timeline: {$in_order: [content, RUN_FINISHED]}",
     "timeline: expected RUN_FINISHED after timeline[content], got only before it, at "
     "timeline[RUN_FINISHED]"),
    (BASE, "sse_states: [NEW, OPEN, TERMINAL]", "sse_states: [new, open, disconnected]",
     "sse_states[2]: expected DISCONNECTED, got TERMINAL"),
    (DISCONNECTED, "sse_states: {$in_order: [{state: DISCONNECTED, t: 2.5}]}",
     "sse_states: {$absent: [DISCONNECTED]}",
     "sse_states[DISCONNECTED]: expected absent, got DISCONNECTED"),
    (BASE, "guard_requests: [{draft: {conclusion: pool exhausted}, "
           "evidence: [{invocation_id: inv-1, status: READY}]}]",
     "guard_requests: [{evidence: [{invocation_id: inv-2}]}]",
     "guard_requests[0].evidence[0].invocation_id: expected inv-2, got inv-1"),
    (BASE, "repair_requests: []", "repair_requests: {$count: 1}",
     "repair_requests: expected 1 item, got 0"),
    (DISCONNECTED, "terminations: [{state: cancelled, reason: client_disconnected}]",
     "terminations: [{state: CANCELLED, reason: USER_REQUESTED}]",
     "terminations[0].reason: expected USER_REQUESTED, got CLIENT_DISCONNECTED"),
    (BASE.replace("citations: [inv-1]", "citations: [inv-9]")
     .replace("invocation_id: inv-1", "invocation_id: inv-9"), "evidence_repaired: true",
     "evidence_repaired: false", "evidence_repaired: expected false, got true"),
    (DISCONNECTED, "evidence_repaired: false", "evidence_repaired: true",
     "evidence_repaired: expected true, got false"),
    (DISCONNECTED, "termination_reason: client_disconnected",
     "termination_reason: USER_REQUESTED",
     "termination_reason: expected USER_REQUESTED, got CLIENT_DISCONNECTED"),
])
def test_each_new_form_holds_on_a_run_that_keeps_it_and_fails_on_one_that_breaks_it(
        text: str, holds: str, breaks: str, message: str) -> None:
    assert mismatches(text + f"expect:\n  {holds}\n") == []
    assert mismatches(text + f"expect:\n  {breaks}\n") == [message]


@pytest.mark.parametrize(("expect", "message"), [
    ("trace: [RUN_STARTD]", "unknown TraceEventType 'RUN_STARTD'; did you mean 'RUN_STARTED'"),
    ("sse: {$in_ordr: [done]}", "unknown operator '$in_ordr'"),
    ("statuses: [routin]", "unknown ChatApplicationStatus 'routin'"),
    ("relations: ['trace[RUN_FINSHED].t < 3']",
     "unknown TraceEventType 'RUN_FINSHED'; did you mean 'RUN_FINISHED'?"),
    ("relations: ['trce[RUN_FINISHED].t < 3']", "unknown part 'trce'"),
    ("relations: ['trace[RUN_FINISHED].t <']", "a side of the relation is empty"),
    ("relations: ['SUCCESS == row.status']", "a string literal is written in quotes"),
    ("sse: {$in_order: [{kind: content, data: {conclusion: $anything}}]}",
     "unknown value '$anything'"),
    ("trace: {$count: {TOOL_PROGRES: 2}}", "unknown TraceEventType 'TOOL_PROGRES'"),
    ("trace: {$count: {TOOL_PROGRESS: many}}", "a count is a number or a comparison"),
    ("timeline: [RUN_STARTED, metadta]", "unknown TraceEventType or SseEventKind 'metadta'"),
    ("sse_states: [OPENED]", "unknown SseState 'OPENED'; did you mean 'OPEN'?"),
    ("terminations: [{reason: CLIENT_DISCONECTED}]",
     "unknown CancellationReason or completed 'CLIENT_DISCONECTED'"),
    ("termination_reason: deadline_exeeded", "termination_reason"),
    ("trace: {$in_order: [{type: RUN_STARTED, $where: 'detail.t <'}]}",
     "a side of the relation is empty"),
])
def test_a_malformed_pattern_is_refused_when_the_file_loads(expect: str, message: str
                                                            ) -> None:
    with pytest.raises(ScenarioError) as err:
        load_text(BASE + f"expect:\n  {expect}\n", "s.yaml")
    assert message in str(err.value)
    assert "s.yaml:" in str(err.value)


def test_a_failed_relation_is_reported_at_the_line_that_states_it(tmp_path: Any) -> None:
    from harness_lab.runner import run_paths
    from harness_lab.runner.results import first_difference, location

    path = tmp_path / "s.yaml"
    path.write_text(DISCONNECTED + "expect:\n  run_state: CANCELLED\n"
                    "  relations: ['terminations[0].t > sse_states[DISCONNECTED].t']\n")
    [result] = list(run_paths([path]))
    assert location(result) == (str(path), 19)
    assert first_difference(result) == ("relations[0]: expected terminations[0].t > "
                                        "sse_states[DISCONNECTED].t, got 2.5 and 2.5")


def test_a_where_relation_holds_within_each_item_it_is_tried_on() -> None:
    late = BASE + ("config: {policy: {deadline_detection: instant}}\n"
                   "faults: [{kind: deadline, at_s: 1.0}, {kind: client_disconnect, at_s: 1.5}]\n")
    rule = ("trace: {$count: [{of: {type: TERMINATION_REJECTED, "
            "$where: 'detail.lost_to_at %s detail.at'}, n: '>= 1'}]}")
    assert mismatches(late + "expect:\n  " + rule % "<=" + "\n") == []
    assert mismatches(late + "expect:\n  " + rule % ">" + "\n") == [
        "trace: expected >= 1 items matching {type: TERMINATION_REJECTED, $where: "
        '"detail.lost_to_at > detail.at"}, got 0']
