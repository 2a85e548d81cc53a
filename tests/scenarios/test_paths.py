"""Observed paths: each form found, and each kind of path that names nothing explained."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.scenarios.paths import PathError, parse_path, resolve

OBSERVED: dict[str, Any] = {
    "trace": [{"type": "RUN_STARTED", "t": 0.0},
              {"type": "TOOL_PROGRESS", "t": 1.0},
              {"type": "TOOL_PROGRESS", "t": 2.0},
              {"type": "RUN_FINISHED", "t": 3.0, "detail": {"outcome": "SUCCESS"}}],
    "statuses": ["ROUTING", "DIAGNOSIS_RUNNING"],
    "row": {"status": "SUCCESS"},
    "turns": [{"row": {"status": "RUNNING"}}],
}


def found(text: str) -> Any:
    return resolve(parse_path(text), OBSERVED)


def test_an_item_is_named_by_its_key_value_and_its_fields_by_name() -> None:
    assert found("trace[RUN_FINISHED].detail.outcome") == "SUCCESS"


def test_a_repeated_key_value_is_named_by_its_occurrence() -> None:
    assert found("trace[TOOL_PROGRESS#2].t") == 2.0


def test_an_item_is_named_by_its_index_from_either_end() -> None:
    assert found("statuses[0]") == "ROUTING"
    assert found("trace[-1].t") == 3.0


def test_an_earlier_turn_is_reached_through_turns() -> None:
    assert found("turns[0].row.status") == "RUNNING"


@pytest.mark.parametrize(("text", "message"), [
    ("trace[RUN_FINISHED].tt", "trace[RUN_FINISHED].tt: no such key; the keys are type, t, "
                               "detail; did you mean 't'?"),
    ("trace[TOOL_PROGRESS].t", "trace[TOOL_PROGRESS]: 2 items have type TOOL_PROGRESS; name one "
                               "as [TOOL_PROGRESS#1] ... [TOOL_PROGRESS#2]"),
    ("trace[TOOL_PROGRESS#3]", "trace[TOOL_PROGRESS#3]: no such item; trace has 2 "
                               "TOOL_PROGRESS"),
    ("trace[RUN_CANCELLED]", "trace[RUN_CANCELLED]: no such item; the type values are "
                             "RUN_STARTED, TOOL_PROGRESS, RUN_FINISHED"),
    ("statuses[5]", "statuses[5]: no such item; statuses has 2"),
    ("statuses[ROUTING]", "statuses[ROUTING]: statuses has no key field; name its item by "
                          "index"),
    ("row[0]", "row[0]: row is not a list"),
    ("row.status.code", "row.status.code: row.status is not a mapping"),
])
def test_a_path_that_names_nothing_says_where_and_what_was_there(text: str, message: str
                                                                 ) -> None:
    with pytest.raises(PathError) as err:
        found(text)
    assert str(err.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("trce.t", "'trce.t': unknown part 'trce'"),
    ("trace[RUN_STARTED", "is not a path like trace[RUN_FINISHED].t"),
    ("[0].t", "is not a path like trace[RUN_FINISHED].t"),
    ("", "an empty path"),
])
def test_a_malformed_path_is_refused_when_it_is_read(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_path(text)
    assert message in str(err.value)
