"""One codec, derived from the value classes' declarations: data, schema and back."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

import jsonschema
import pytest

from harness_lab.codec import DecodeError, data, from_data, json_schema, to_data
from harness_lab.record import RunRecord
from harness_lab.runner.results import ResultSet
from harness_lab.sse import SseEvent
from harness_lab.tools.records import CanonicalInvocation, ToolRejection
from harness_lab.trace import TraceEvent


class Colour(Enum):
    RED = "RED"
    BLUE = "BLUE"


@dataclasses.dataclass(frozen=True)
class Leaf:
    """A leaf value."""

    name: str
    colour: Colour | None
    weight: float


@dataclasses.dataclass(frozen=True)
class Tree:
    """A value holding others."""

    leaves: tuple[Leaf, ...]
    pair: tuple[str, int]
    notes: Mapping[str, Any]
    count: int = 0
    tags: tuple[str, ...] = dataclasses.field(default=(), metadata={"doc": "free labels"})


TREE = Tree((Leaf("a", Colour.RED, 1.5), Leaf("b", None, 2.0)), ("x", 3),
            {"k": [1, {"n": None}]}, 7, ("t",))
TREE_DATA = {"leaves": [{"name": "a", "colour": "RED", "weight": 1.5},
                        {"name": "b", "colour": None, "weight": 2.0}],
             "pair": ["x", 3], "notes": {"k": [1, {"n": None}]}, "count": 7, "tags": ["t"]}


def test_a_value_is_written_field_by_field_as_json_data() -> None:
    assert to_data(TREE) == TREE_DATA


def test_data_written_comes_back_as_an_equal_value() -> None:
    assert from_data(Tree, json.loads(json.dumps(TREE_DATA))) == TREE


def test_a_missing_field_with_a_default_takes_it_and_one_without_is_named() -> None:
    short = {k: v for k, v in TREE_DATA.items() if k not in ("count", "tags")}
    assert from_data(Tree, short) == dataclasses.replace(TREE, count=0, tags=())
    with pytest.raises(DecodeError, match=r"^leaves\[1\]\.weight: required field is missing"):
        from_data(Tree, {**TREE_DATA, "leaves": [TREE_DATA["leaves"][0], {"name": "b",
                                                                          "colour": None}]})


@pytest.mark.parametrize(("change", "message"), [
    ({"count": "7"}, r"^count: expected an integer, got str"),
    ({"count": True}, r"^count: expected an integer, got bool"),
    ({"pair": ["x"]}, r"^pair: expected 2 items, got 1"),
    ({"pair": ["x", 3.5]}, r"^pair\[1\]: expected an integer, got float"),
    ({"leaves": [{"name": "a", "colour": "GREEN", "weight": 1}]},
     r"^leaves\[0\]\.colour: 'GREEN' is not a Colour \(one of RED, BLUE\)"),
    ({"leaves": {"name": "a"}}, r"^leaves: expected an array, got dict"),
    ({"notes": [1]}, r"^notes: expected an object, got list"),
    ({"extra": 1}, r"^extra: unknown field of Tree"),
])
def test_a_value_that_does_not_fit_is_refused_naming_its_path(change: dict[str, Any],
                                                               message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        from_data(Tree, {**TREE_DATA, **change})


def test_the_path_of_a_refusal_starts_at_the_name_given() -> None:
    with pytest.raises(DecodeError, match=r"^turns\[2\]\.count: expected an integer"):
        from_data(Tree, {**TREE_DATA, "count": None}, "turns[2]")


def test_an_integer_is_a_number_where_a_float_is_declared() -> None:
    leaf = from_data(Leaf, {"name": "a", "colour": None, "weight": 2})
    assert leaf.weight == 2.0 and type(leaf.weight) is float


def test_the_schema_describes_the_data_and_refuses_what_decoding_refuses() -> None:
    schema = json_schema(Tree)
    assert schema["$ref"] == "#/$defs/Tree"
    assert schema["$defs"]["Colour"]["enum"] == ["RED", "BLUE"]
    assert schema["$defs"]["Tree"]["required"] == ["leaves", "pair", "notes"]
    assert schema["$defs"]["Tree"]["properties"]["tags"]["description"] == "free labels"
    assert schema["$defs"]["Leaf"]["description"] == "A leaf value."
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(TREE_DATA)) == []
    assert list(validator.iter_errors({**TREE_DATA, "count": "7"})) != []
    assert list(validator.iter_errors({**TREE_DATA, "extra": 1})) != []


def test_open_values_are_written_as_json_data_and_other_objects_as_text() -> None:
    assert data({"a": (Colour.BLUE, 1), 2: object}) == {"a": ["BLUE", 1], "2": str(object)}


def _records(results: ResultSet) -> list[RunRecord]:
    return [r for res in results for r in (*res.turns, res.record) if r is not None]


def test_every_library_record_validates_against_its_schema(library: ResultSet) -> None:
    validator = jsonschema.Draft202012Validator(json_schema(RunRecord))
    records = _records(library)
    assert len(records) > 100
    for record in records:
        errors = [e.message for e in validator.iter_errors(to_data(record))]
        assert errors == [], record.run_id


def test_the_hand_written_row_shapes_of_the_hot_path_equal_the_codecs(library: ResultSet
                                                                      ) -> None:
    """The stores write events and invocations with hand-written ``to_dict`` (they run
    inside every persisted run); each must stay the codec's encoding of its declaration."""
    seen = {SseEvent: 0, TraceEvent: 0, CanonicalInvocation: 0, ToolRejection: 0}
    for record in _records(library):
        for value in (*record.sse_events, *record.trace, *record.invocations,
                      *record.rejections):
            assert value.to_dict() == to_data(value)
            seen[type(value)] += 1
    assert all(seen.values()), seen
