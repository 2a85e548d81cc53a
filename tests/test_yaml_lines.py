"""YamlLines: the line of a field of a composed YAML document, by its path."""

from __future__ import annotations

import yaml

from harness_lab.yaml_lines import YamlLines

DOCUMENT = """\
name: x
expect:
  run_state: SUCCESS
matrix:
  - name: slow
    set:
      latency: 2
  - {name: fast}
"""


def lines() -> YamlLines:
    return YamlLines(yaml.compose(DOCUMENT, Loader=yaml.SafeLoader))


def test_a_field_is_on_its_keys_line_even_when_its_value_starts_below() -> None:
    assert lines().key_line(("expect",)) == 2
    assert lines().key_line(("expect", "run_state")) == 3


def test_a_sequence_item_is_on_its_own_line_by_an_int_or_a_string_of_digits() -> None:
    assert lines().key_line(("matrix", 1)) == 8
    assert lines().key_line(("matrix", "0", "set", "latency")) == 7


def test_a_missing_field_has_no_line_of_its_own_but_the_nearest_one_found() -> None:
    assert lines().key_line(("matrix", 0, "expect")) is None
    assert lines().line(("matrix", 0, "expect")) == 5
    assert lines().line(("nowhere",)) == 1


def test_the_node_of_a_field_is_its_value() -> None:
    node = lines().node(("matrix", 1, "name"))
    assert isinstance(node, yaml.ScalarNode) and node.value == "fast"
    assert lines().node(("matrix", 2)) is None


def test_an_empty_document_has_no_lines() -> None:
    empty = YamlLines(None)
    assert (empty.line(("a",)), empty.key_line(()), empty.node(())) == (None, None, None)
