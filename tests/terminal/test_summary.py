"""The short summary after the table."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness_lab.runner import run_paths
from harness_lab.terminal.summary import print_summary, summary_lines

GOOD = """\
name: good
description: a missing-context fallback
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}
"""


def test_one_line_per_failure_with_file_line_and_first_difference(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    wrong = GOOD.replace("name: good", "name: wrong").replace(
        "expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}",
        "expect: {release_outcome: SUCCESS, db_status: FAILED}")
    (tmp_path / "wrong.yaml").write_text(wrong, encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("name: broken\ndescription: x\nmodle: []\n",
                                          encoding="utf-8")
    lines = summary_lines(run_paths([tmp_path]))
    assert lines[0][0] == "ERROR"
    assert lines[0][1].startswith(f"broken ({tmp_path / 'broken.yaml'}:3): modle: unknown key")
    assert lines[1] == ("FAILED", f"wrong ({tmp_path / 'wrong.yaml'}:6): release_outcome: "
                                  "expected SUCCESS, got FALLBACK (and 1 more)")
    assert len(lines) == 2


def test_summary_lines_are_cut_to_the_width(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    (tmp_path / "broken.yaml").write_text("name: broken\ndescription: x\nmodle: []\n",
                                          encoding="utf-8")
    out = io.StringIO()
    print_summary(run_paths([tmp_path]), out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "short summary"
    assert len(lines[1]) == 40 and lines[1].endswith("…")
    assert lines[2] == "1 scenario run(s), 0 ok, 1 error"
