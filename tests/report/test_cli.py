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
