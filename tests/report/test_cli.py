"""``harness-lab report`` writes one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

from harness_lab.cli import main

GOOD = """\
name: good-report
description: a missing-context fallback
case: missing_context
tools: {logs: {}}
model:
  - draft: {missing_info: [which service]}
"""


def test_the_report_command_writes_html_with_tables_and_embedded_plots(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count('<img src="data:image/png;base64,') >= 2
    assert "good-report" in text and "MISSING_REQUIRED_CONTEXT" in text
    assert "http://" not in text and "https://" not in text


def test_the_report_command_exits_one_when_a_scenario_fails(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(GOOD.replace("missing_context", "semantic_unsupported"),
                                       encoding="utf-8")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 1


def test_the_report_shows_each_scenarios_expectations_and_the_files_that_did_not_load(
        tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    wrong = GOOD.replace("good-report", "wrong-report") + "expect: {tool_calls: 5}\n"
    (tmp_path / "wrong.yaml").write_text(wrong, encoding="utf-8")
    (tmp_path / "multi.yaml").write_text("name: multi\ndescription: y\nfoo: 1\nbar: 2\n",
                                         encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path), "--out", str(out)]) == 1
    text = out.read_text(encoding="utf-8")
    assert "3 scenario(s): 1 ok, 1 FAILED, 1 ERROR" in text
    assert "<td>tool_calls: expected 5, got 0</td>" in text
    assert "<h2>Files that could not be loaded or run</h2>" in text
    assert "multi.yaml:3: foo: unknown key\n" in text
    assert "<th>case_matched</th>" in text and "<th>matched</th>" not in text
