"""The line that states a failed expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.scenarios.locate import expectation_line

TEXT = """\
name: located
description: lines of expectations
case: success
turns:
  - query: first
    expect:
      run_state: SUCCESS
expect:
  release_outcome: SUCCESS
matrix:
  - name: plain
  - name: own
    expect:
      db_status: FAILED
"""


def test_each_expectation_is_found_where_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "located.yaml"
    path.write_text(TEXT, encoding="utf-8")
    where = str(path)
    assert expectation_line(where, "located[plain]", "release_outcome") == 9
    assert expectation_line(where, "located[own]", "db_status") == 14
    assert expectation_line(where, "located[plain]", "turns.0.run_state") == 7
    assert expectation_line(where, "located[plain]", "fallback_type") == 3  # from its case
    assert expectation_line(where, "located[own]") == 12
    assert expectation_line(where, "located[plain]") == 11


def test_a_file_without_matrix_or_expectation_points_at_its_name(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text("description: x\nname: plain\n", encoding="utf-8")
    assert expectation_line(str(path), "plain", "run_state") == 2
    assert expectation_line(str(tmp_path / "missing.yaml"), "plain") is None
    assert expectation_line(None, "plain") is None


@pytest.mark.parametrize("family", ["symlink to /dev/zero", "FIFO named x.yaml",
                                    "block nesting (3,000 levels)",
                                    "block nesting (800 levels, under the size limit)"])
def test_a_hostile_file_has_no_expectation_line_and_is_read_within_the_limits(
        family: str, tmp_path: Path) -> None:
    from tests.scenarios.hostile import write

    assert expectation_line(str(write(family, tmp_path)), "hostile") is None
