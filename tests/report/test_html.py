"""The self-contained HTML report, and the optional progress bar."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness_lab.report import html_report, write_html_report
from harness_lab.report.html import results_of_records
from harness_lab.report.viewer import ReportContext
from tests.report.test_frames import LABELS, four_runs

CASES = ["conclusion_guards_pass", "missing_context", "timeout_no_content",
         "client_disconnect"]
WHEN = ReportContext(generated_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def report(cases: list[str | None] | None = None) -> str:
    return html_report(four_runs()[1], labels=LABELS, cases=cases or CASES,
                       title="four <runs>", context=WHEN)


def run_rows(text: str) -> list[str]:
    """The scenario name of each main-table row, in order."""
    return re.findall(r'<tr class="run"[^>]*data-k-name="([^"]*)"', text)


def test_the_report_has_a_row_per_record_named_by_its_label() -> None:
    assert sorted(run_rows(report())) == sorted(LABELS)


def test_the_report_names_every_run_and_escapes_the_title() -> None:
    text = report()
    for run_id in ("run-000001", "run-000002", "run-000003", "run-000004"):
        assert run_id in text
    assert "<title>four &lt;runs&gt;</title>" in text


def test_records_are_judged_by_their_outcome_table_case() -> None:
    wrong = ["conclusion_guards_pass", "semantic_unsupported", "timeout_no_content", None]
    results = results_of_records(four_runs()[1], labels=LABELS, cases=wrong)
    assert [r.verdict for r in results] == ["ok", "FAILED", "ok", "ok"]
    assert [str(m) for m in results[1].mismatches] == [
        "fallback_type: expected SEMANTIC_UNSUPPORTED, got MISSING_REQUIRED_CONTEXT"]
    assert run_rows(report(wrong))[0] == "missing context"  # the failure comes first


def test_a_record_without_a_label_is_named_by_its_run_id() -> None:
    results = results_of_records(four_runs()[1][:1])
    assert results[0].scenario == "run-000001"
    assert results[0].case is None


def test_the_report_references_no_external_resource() -> None:
    text = report()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text
    assert "<link" not in text
    references = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert references and all(ref.startswith("#") for ref in references)


def test_the_report_shows_the_outcome_table_rows_each_case_reproduces() -> None:
    text = report()
    section = text[text.index('<section id="outcome-table">'):]
    assert "✓</span> timeout</a>" in section
    no_cases = html_report(four_runs()[1], labels=LABELS)
    assert '<section id="outcome-table">' not in no_cases


def test_the_report_counts_run_states_against_release_outcomes() -> None:
    text = report()
    section = text[text.index('<section id="crosstab">'):]
    assert "<tr><th>BUDGET_EXHAUSTED</th>" in section  # an empty RunState row is still listed
    timed_out = section[section.index("<tr><th>TIMED_OUT</th>"):]
    timed_out = timed_out[:timed_out.index("</tr>")]
    assert re.findall(r"<td[^>]*>(\d+)</td>", timed_out) == ["0", "0", "1", "0"]


def test_cases_of_another_length_than_the_records_are_refused() -> None:
    with pytest.raises(ValueError, match="1 cases for 4 records"):
        html_report(four_runs()[1], cases=CASES[:1])


def test_labels_with_scenario_results_are_refused() -> None:
    results = results_of_records(four_runs()[1])
    with pytest.raises(TypeError, match="labels and cases apply to run records only"):
        html_report(results, labels=LABELS)


def test_a_report_of_no_runs_is_a_document_without_rows() -> None:
    text = html_report([])
    assert text.startswith("<!DOCTYPE html>")
    assert run_rows(text) == []
    assert "0 scenario(s), 0 run(s)" in text


def test_write_html_report_writes_the_same_document(tmp_path: Path) -> None:
    path = write_html_report(tmp_path / "report.html", four_runs()[1], labels=LABELS,
                             cases=CASES, title="four <runs>", context=WHEN)
    assert path == tmp_path / "report.html"
    assert path.read_text(encoding="utf-8") == report()


def test_a_failed_write_raises_and_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "report.html"
    with pytest.raises(OSError):
        write_html_report(target, four_runs()[1])
    assert not target.exists()


def test_writing_over_an_existing_report_replaces_it_whole_with_ordinary_permissions(
        tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old", encoding="utf-8")
    write_html_report(target, four_runs()[1], labels=LABELS, context=WHEN)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left
    assert target.stat().st_mode & 0o777 == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_report_of_bare_records_counts_their_outcomes_without_directories() -> None:
    text = report()
    section = text[text.index('<section id="distribution">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Outcomes</h2>" in section
    assert re.findall(r'<span class="dist-dir">([^<]*)<', section) == ["all runs "]
