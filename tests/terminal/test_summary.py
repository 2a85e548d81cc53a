"""The short summary after the table."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness_lab.runner import run_paths
from harness_lab.terminal.summary import print_summary, summary_lines
from tests.scenarios import MISSING_CONTEXT as GOOD
from tests.scenarios import TWO_TOOL_DIAGNOSIS


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


def test_summary_lines_wrap_at_the_width_keeping_file_and_line_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.yaml").write_text("name: broken\ndescription: x\nmodle: []\n",
                                          encoding="utf-8")
    out = io.StringIO()
    print_summary(run_paths([Path(".")]), out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "short summary"
    assert all(len(line) <= 40 for line in lines)
    assert "…" not in out.getvalue()
    assert any("broken.yaml:3" in line for line in lines[1:-1])
    wrapped = " ".join(line.strip() for line in lines[1:-1])
    assert wrapped.startswith("ERROR broken (")
    assert "modle" in wrapped
    assert lines[-1] == "1 scenario run(s), 0 ok, 1 error"


def test_verbose_lists_every_mismatch_under_its_failure(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    text = TWO_TOOL_DIAGNOSIS + "expect: {run_state: FAILED, release_outcome: FALLBACK}\n"
    (tmp_path / "two.yaml").write_text(text, encoding="utf-8")
    out = io.StringIO()
    print_summary(run_paths([tmp_path]), out, verbose=True)
    lines = out.getvalue().splitlines()
    assert "    run_state: expected FAILED, got SUCCESS" in lines
    assert "    release_outcome: expected FALLBACK, got SUCCESS" in lines
