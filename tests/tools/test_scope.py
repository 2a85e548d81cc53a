"""A scope's canonical text is exactly the JSON text json.dumps gives, whatever the scope."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness_lab.tools.scope import normalize_scope


def _dumps(scope: Any) -> str:
    return json.dumps(scope, sort_keys=True, separators=(",", ":"), default=str)


@given(st.dictionaries(st.text(), st.text()))
def test_a_flat_object_of_strings_gives_the_json_text(scope: dict[str, str]) -> None:
    assert normalize_scope(scope) == _dumps(scope)


@given(st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.floats(allow_nan=False),
                                              st.none(), st.booleans(),
                                              st.lists(st.text(), max_size=3))))
def test_any_json_scope_gives_the_json_text(scope: dict[str, Any]) -> None:
    assert normalize_scope(scope) == _dumps(scope)


def test_keys_are_sorted_and_non_ascii_text_is_escaped() -> None:
    assert normalize_scope({"z": "é", "a": "x\"y"}) == '{"a":"x\\"y","z":"\\u00e9"}'


def test_a_value_json_cannot_encode_is_written_as_its_string() -> None:
    scope = {"path": PurePosixPath("/var/log"), "n": 3}
    assert normalize_scope(scope) == '{"n":3,"path":"/var/log"}'
