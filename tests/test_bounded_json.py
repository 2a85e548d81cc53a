"""JSON from users is read within bounds: every refusal names the source and line."""

from __future__ import annotations

import pytest

from harness_lab.bounded_json import JsonInputError, depth_of, parse_json


def test_ordinary_json_is_read_as_json() -> None:
    text = '{"seq": 3, "t": 1.5, "kind": "run", "data": [1, {"a": null}], "s": "[{"}'
    assert parse_json(text, source="log.jsonl", line=2) == {
        "seq": 3, "t": 1.5, "kind": "run", "data": [1, {"a": None}], "s": "[{"}


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100_000 + "]" * 100_000, r"^log\.jsonl:7: nested 100000 levels deep, more than the 64"),
    ('{"seq": ' + "9" * 5000 + "}", r"^log\.jsonl:7: an integer of 5000 digits"),
    ('{"seq": 9223372036854775808}', r"^log\.jsonl:7: the integer 9223372036854775808 is outside"),
    ('{"t": NaN}', r"^log\.jsonl:7: NaN is not a number JSON allows"),
    ('{"t": -Infinity}', r"^log\.jsonl:7: -Infinity is not a number JSON allows"),
    ('{"tokens": 9e999}', r"^log\.jsonl:7: the number 9e999 is too large"),
    ('{"seq": 1', r"^log\.jsonl:7: not JSON: Expecting ',' delimiter at column 10"),
])
def test_hostile_json_is_refused_naming_source_and_line(text: str, message: str) -> None:
    with pytest.raises(JsonInputError, match=message):
        parse_json(text, source="log.jsonl", line=7)


def test_a_document_larger_than_the_limit_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(JsonInputError, match=r"^m\.json: 2,002 characters of JSON, more than"):
        parse_json("[" + "1," * 1000 + "]", source="m.json", max_bytes=2_000)


def test_a_whole_document_names_the_line_of_its_syntax_error() -> None:
    with pytest.raises(JsonInputError, match=r"^m\.json:3: not JSON"):
        parse_json('{\n "a": 1,\n "b" 2}', source="m.json")


def test_the_depth_scan_ignores_brackets_inside_strings() -> None:
    assert depth_of('{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert depth_of('"\\"[[[" ') == 0
    assert depth_of("12") == 0


def test_the_depth_scan_of_a_long_string_takes_memory_of_its_own_size_not_per_character(
        ) -> None:
    import tracemalloc

    text = '{"description": "' + "x" * (1 << 20) + '", "tags": ["a", "b\\"c"]}'
    tracemalloc.start()
    try:
        assert depth_of(text) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_the_depth_scan_stops_at_a_string_never_closed_past_which_nothing_is_json() -> None:
    assert depth_of('[[["never closed [[[[ {{') == 3
    assert depth_of('["' + '\\"' * 1000 + "[]") == 1
    with pytest.raises(JsonInputError, match=r"^log\.jsonl:2: not JSON: Unterminated string"):
        parse_json('[["' + '\\"' * 1000, source="log.jsonl", line=2)


def test_the_largest_and_smallest_64_bit_integers_are_kept() -> None:
    assert parse_json("[9223372036854775807, -9223372036854775808]", source="x") == [
        9223372036854775807, -9223372036854775808]
