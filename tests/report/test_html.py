"""The self-contained HTML report, and the optional progress bar."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from harness_lab.report import html_report, progress_bar, write_html_report
from tests.report.test_frames import LABELS, four_runs

CASES = ["conclusion_guards_pass", "missing_context", "timeout_no_content",
         "client_disconnect"]


def report() -> str:
    return html_report(four_runs()[1], labels=LABELS, cases=CASES, title="four <runs>")


def test_the_report_embeds_the_outcome_bars_and_the_timeline_as_png_data() -> None:
    assert report().count('<img src="data:image/png;base64,iVBORw0KGgo') == 2


def test_the_report_names_every_run_and_escapes_the_title() -> None:
    text = report()
    for run_id in ("run-000001", "run-000002", "run-000003", "run-000004"):
        assert run_id in text
    assert "<title>four &lt;runs&gt;</title>" in text


def test_the_report_references_no_external_resource() -> None:
    text = report()
    assert "http://" not in text
    assert "https://" not in text
    assert "<link" not in text and "<script" not in text
    references = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert len(references) == 2
    assert all(ref.startswith("data:image/png;base64,") for ref in references)


def test_the_report_shows_the_mapping_table_only_when_cases_are_given() -> None:
    assert "expected_release_outcome" in report()
    assert "expected_release_outcome" not in html_report(four_runs()[1], labels=LABELS)


def test_the_report_holds_both_state_crosstabs() -> None:
    text = report()
    assert "run_state x release_outcome" in text
    assert "release_outcome x fallback_type" in text
    assert "BUDGET_EXHAUSTED" in text  # an empty RunState row is still listed


def test_cases_of_another_length_than_the_records_are_refused() -> None:
    with pytest.raises(ValueError, match="1 cases for 4 records"):
        html_report(four_runs()[1], cases=CASES[:1])


def test_a_report_of_no_runs_is_a_document_without_plots() -> None:
    text = html_report([])
    assert text.startswith("<!DOCTYPE html>")
    assert "<img" not in text
    assert "<p>0 run(s)</p>" in text


def test_write_html_report_writes_the_same_document(tmp_path: Path) -> None:
    path = write_html_report(tmp_path / "report.html", four_runs()[1], labels=LABELS,
                             cases=CASES, title="four <runs>")
    assert path == tmp_path / "report.html"
    assert path.read_text(encoding="utf-8") == report()


def test_without_tqdm_the_progress_bar_passes_the_iterable_through(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    items = [1, 2, 3]
    assert progress_bar(items, total=3, desc="runs") is items


def test_with_tqdm_the_progress_bar_is_tqdm_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any, Any]] = []

    def fake_tqdm(iterable: Any, total: Any = None, desc: Any = None) -> list[str]:
        calls.append((iterable, total, desc))
        return ["wrapped"]

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = fake_tqdm  # type: ignore[attr-defined]
    package = types.ModuleType("tqdm")
    package.auto = auto  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", package)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    assert progress_bar(range(2), total=2, desc="runs") == ["wrapped"]
    assert calls == [(range(2), 2, "runs")]
