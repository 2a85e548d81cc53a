"""The matching language: each form passing and failing, with the exact message."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.scenarios.match import check_pattern, match, render

TRACE: list[dict[str, Any]] = [
    {"type": "RUN_STARTED", "status": "OK", "detail": {}},
    {"type": "TOOL_PROGRESS", "status": "OK", "detail": {"tool": "logs"}},
    {"type": "TOOL_PROGRESS", "status": "OK", "detail": {"tool": "metrics"}},
    {"type": "RELEASE_DECISION", "status": "OK", "detail": {"outcome": "SUCCESS"}},
    {"type": "RUN_FINISHED", "status": "OK", "detail": {"outcome": "SUCCESS"}},
]


def messages(pattern: Any, observed: Any = None, path: str = "trace",
             key: str | None = "type") -> list[str]:
    return [str(m) for m in match(pattern, TRACE if observed is None else observed, path,
                                  key)]


def test_a_scalar_matches_an_equal_value() -> None:
    assert messages("SUCCESS", "SUCCESS", "row.status", None) == []


def test_a_scalar_that_differs_names_the_path() -> None:
    assert messages("FAILED", "SUCCESS", "row.status", None) == [
        "row.status: expected FAILED, got SUCCESS"]


def test_true_never_matches_one() -> None:
    assert messages(True, 1, "x", None) == ["x: expected true, got 1"]


def test_a_list_of_key_values_matches_the_whole_sequence() -> None:
    kinds = ["RUN_STARTED", "TOOL_PROGRESS", "TOOL_PROGRESS", "RELEASE_DECISION",
             "RUN_FINISHED"]
    assert messages(kinds) == []


def test_a_list_that_differs_names_the_first_differing_position() -> None:
    kinds = ["RUN_STARTED", "TOOL_PROGRESS", "RELEASE_DECISION", "RUN_FINISHED"]
    assert messages(kinds) == ["trace[2]: expected RELEASE_DECISION, got TOOL_PROGRESS",
                               "trace: expected 4 items, got 5"]


def test_a_list_shorter_than_expected_says_where_it_ended() -> None:
    assert messages(["a", "b", "c"], ["a", "b"], "statuses", None) == [
        "statuses[2]: expected c, got end of list", "statuses: expected 3 items, got 2"]


def test_a_mapping_compares_only_the_keys_it_names() -> None:
    assert messages({"status": "OK"}, {"status": "OK", "extra": 1}, "row", None) == []


def test_a_mapping_names_a_key_the_observation_lacks() -> None:
    assert messages({"outcom": "FALLBACK"}, {"outcome": "SUCCESS"}, "row", None) == [
        "row.outcom: expected FALLBACK, got no such key"]


def test_in_order_passes_with_items_between() -> None:
    assert messages({"$in_order": ["RUN_STARTED", "RELEASE_DECISION"]}) == []


def test_in_order_names_the_item_by_its_key_when_a_detail_differs() -> None:
    pattern = {"$in_order": [{"type": "RELEASE_DECISION", "detail": {"outcome": "FALLBACK"}}]}
    assert messages(pattern) == [
        "trace[RELEASE_DECISION].detail.outcome: expected FALLBACK, got SUCCESS"]


def test_in_order_numbers_a_repeated_key() -> None:
    pattern = {"$in_order": [{"type": "TOOL_PROGRESS", "detail": {"tool": "logs"}},
                             {"type": "TOOL_PROGRESS", "detail": {"tool": "traces"}}]}
    assert messages(pattern) == [
        "trace[TOOL_PROGRESS#2].detail.tool: expected traces, got metrics"]


def test_in_order_says_when_an_item_only_occurs_earlier() -> None:
    assert messages({"$in_order": ["RUN_FINISHED", "RELEASE_DECISION"]}) == [
        "trace: expected RELEASE_DECISION after trace[RUN_FINISHED], got only before it, "
        "at trace[RELEASE_DECISION]"]


def test_in_order_says_when_an_item_never_occurs() -> None:
    assert messages({"$in_order": ["COLLECTION_STOP"]}) == [
        "trace: expected COLLECTION_STOP, got none"]


def test_adjacent_passes_for_items_one_right_after_another() -> None:
    assert messages({"$adjacent": ["RELEASE_DECISION", "RUN_FINISHED"]}) == []


def test_adjacent_fails_when_an_item_comes_between() -> None:
    assert messages({"$adjacent": ["RUN_STARTED", "RELEASE_DECISION"]}) == [
        "trace: expected RELEASE_DECISION right after trace[RUN_STARTED], "
        "got TOOL_PROGRESS"]


def test_absent_passes_when_no_item_matches() -> None:
    assert messages({"$absent": ["COLLECTION_STOP"]}) == []


def test_absent_names_each_item_that_matches() -> None:
    assert messages({"$absent": ["TOOL_PROGRESS"]}) == [
        "trace[TOOL_PROGRESS#1]: expected absent, got TOOL_PROGRESS",
        "trace[TOOL_PROGRESS#2]: expected absent, got TOOL_PROGRESS"]


def test_absent_in_a_mapping_names_a_key_that_is_there() -> None:
    sse = [{"kind": "content", "data": {"contentType": "fallback", "conclusion": "pool"}}]
    pattern = {"$in_order": [{"kind": "content", "data": {"$absent": ["conclusion"]}}]}
    assert messages(pattern, sse, "sse", "kind") == [
        "sse[content].data.conclusion: expected absent, got pool"]


def test_absent_in_a_mapping_names_each_item_that_is_not_a_key_name() -> None:
    row = {"status": "SUCCESS", "conclusion": None}
    assert messages({"$absent": [["conclusion"], {"a": 1}, 5, "answer"]}, row, "row", None) == [
        "row.$absent.0: expected a key name, got a list of 1: [conclusion]",
        "row.$absent.1: expected a key name, got a mapping: {a: 1}",
        "row.$absent.2: expected a key name, got 5"]


def test_equals_refuses_keys_a_subset_would_ignore() -> None:
    assert messages({"$equals": {"a": 1}}, {"a": 1, "b": 2}, "row", None) == [
        "row: expected {a: 1}, got {a: 1, b: 2}"]


def test_equals_passes_for_the_same_value() -> None:
    assert messages({"$equals": {"a": [1, 2]}}, {"a": [1, 2]}, "row", None) == []


def test_operators_combine() -> None:
    pattern = {"$in_order": ["RUN_STARTED"], "$absent": ["RUN_FINISHED"]}
    assert messages(pattern) == ["trace[RUN_FINISHED]: expected absent, got RUN_FINISHED"]


def test_a_mapping_pattern_against_a_list_says_what_it_got() -> None:
    assert messages({"status": "OK"}, ["a"], "statuses", None) == [
        "statuses: expected a mapping, got a list of 1: [a]"]


def test_an_unknown_operator_is_refused_with_a_suggestion() -> None:
    with pytest.raises(ValueError, match=r"\$in_ordr: unknown operator.*did you mean "
                                         r"'\$in_order'"):
        check_pattern({"$in_ordr": []})


def test_a_list_operator_given_a_scalar_is_refused() -> None:
    with pytest.raises(ValueError, match=r"row\.\$absent: \$absent takes a list, got x"):
        check_pattern({"$absent": "x"}, "row")


def test_render_quotes_only_what_yaml_would_misread() -> None:
    assert render(["plain", "10:00", "yes", None, 1.5]) == '[plain, "10:00", "yes", null, 1.5]'


# -- counts, order-free lists, $any, $where ---------------------------------------------------


def test_a_count_of_one_item_holds_when_exactly_that_many_match() -> None:
    assert messages({"$count": {"TOOL_PROGRESS": 2}}) == []
    assert messages({"$count": {"TOOL_PROGRESS": 1}}) == [
        "trace: expected 1 item matching TOOL_PROGRESS, got 2 (trace[TOOL_PROGRESS#1], "
        "trace[TOOL_PROGRESS#2])"]


def test_a_count_may_be_a_comparison_and_may_count_every_item() -> None:
    assert messages({"$count": {"TOOL_PROGRESS": ">= 2", "RUN_CANCELLED": 0}}) == []
    assert messages({"$count": 4}) == ["trace: expected 4 items, got 5"]
    assert messages({"$count": {"RELEASE_DECISION": "> 1"}}) == [
        "trace: expected > 1 items matching RELEASE_DECISION, got 1 (trace[RELEASE_DECISION])"]


def test_a_count_of_a_pattern_counts_the_items_it_matches() -> None:
    rule = {"$count": [{"of": {"type": "TOOL_PROGRESS", "detail": {"tool": "logs"}}, "n": 1}]}
    assert messages(rule) == []
    rule["$count"][0]["n"] = 2
    assert messages(rule) == ["trace: expected 2 items matching {type: TOOL_PROGRESS, detail: "
                              "{tool: logs}}, got 1 (trace[TOOL_PROGRESS#1])"]


def test_any_order_holds_for_the_same_items_in_another_order() -> None:
    order = ["RUN_FINISHED", "TOOL_PROGRESS", "RUN_STARTED", "RELEASE_DECISION",
             "TOOL_PROGRESS"]
    assert messages({"$any_order": order}) == []


def test_any_order_fails_on_a_missing_item_or_one_left_over() -> None:
    assert messages({"$any_order": ["RUN_FINISHED", "RUN_STARTED"]}) == [
        "trace: expected 2 items in any order, got 5"]
    assert messages({"$any_order": ["done", "metadata"]}, ["metadata", "done", "status"],
                    "statuses", None) == [
        "statuses: expected 2 items in any order, got 3"]
    assert messages({"$any_order": ["a", "b", "b"]}, ["b", "a", "a"], "x", None) == [
        "x: expected b ($any_order: an item of its own), got only x[0], which other patterns "
        "take"]


def test_contains_needs_an_item_of_its_own_for_each_pattern() -> None:
    assert messages({"$contains": ["RUN_FINISHED", "TOOL_PROGRESS", "TOOL_PROGRESS"]}) == []
    assert messages({"$contains": ["RUN_CANCELLED"]}) == ["trace: expected RUN_CANCELLED, "
                                                          "got none"]


def test_any_matches_whatever_is_there_but_not_a_missing_key() -> None:
    assert messages({"$in_order": [{"type": "RELEASE_DECISION", "detail": "$any"}]}) == []
    assert messages(["$any", "$any", "TOOL_PROGRESS", "$any", "RUN_FINISHED"]) == []
    assert messages({"outcome": "$any", "reason": "$any"}, {"outcome": None}, "d", None) == [
        "d.reason: expected any value, got no such key"]


def test_the_literal_text_any_is_written_with_equals() -> None:
    assert messages({"$equals": "$any"}, "$any", "x", None) == []
    assert messages({"$equals": "$any"}, "SUCCESS", "x", None) == [
        'x: expected "$any", got SUCCESS']


def test_a_where_relation_is_read_from_the_matched_value() -> None:
    item = {"type": "RUN_FINISHED", "t": 2.0, "detail": {"at": 3.0, "lost_to_at": 1.0}}
    assert messages({"$where": "detail.lost_to_at < detail.at"}, item, "e", None) == []
    assert messages({"$where": ["t >= detail.at"]}, item, "e", None) == [
        "e: expected t >= detail.at, got 2.0 and 3.0"]


@pytest.mark.parametrize(("pattern", "message"), [
    ({"$count": "many"}, "$count: a count is a number or a comparison like '>= 2', got many"),
    ({"$count": True}, "$count: $count takes a number of items"),
    ({"$count": [{"of": "X"}]}, "$count.0: each rule of a $count list is {of: PATTERN, n: "
                                "NUMBER}, got {of: X}"),
    ({"$any_order": "X"}, "$any_order: $any_order takes a list, got X"),
    ({"$contains": {"a": 1}}, "$contains: $contains takes a list, got {a: 1}"),
    ({"data": "$anything"}, "data: unknown value '$anything'; $any matches any value"),
    ({"$where": "t <"}, "$where: 't <': a side of the relation is empty"),
    ({"$where": ["t < 1", 3]}, "$where.1: a relation is text like"),
])
def test_a_malformed_new_operator_is_refused_naming_its_place(pattern: Any, message: str
                                                              ) -> None:
    with pytest.raises(ValueError) as err:
        check_pattern(pattern)
    assert str(err.value).startswith(message)


def test_any_order_over_plain_values_shows_the_list_a_value_is_missing_from() -> None:
    assert messages({"$any_order": ["inv-1"]}, ["inv-2"], "citable", None) == [
        "citable: expected inv-1 among the items ($any_order), got a list of 1: [inv-2]"]
