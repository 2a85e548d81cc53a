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
