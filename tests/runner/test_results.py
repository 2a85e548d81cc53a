"""ResultSet: rows, frames and notebook HTML of many scenario results."""

from __future__ import annotations

from pathlib import Path

from harness_lab.report.frames import runs_frame
from harness_lab.report.mapping import mapping_table
from harness_lab.report.notebook import results_html
from harness_lab.runner import run_paths
from tests.scenarios import missing_context

GOOD = missing_context("rs-good", header="case: missing_context\n")


def test_a_result_set_shows_as_an_html_table_counting_ok_runs(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(GOOD.replace("rs-good", "rs-wrong")
                                     .replace("missing_context", "semantic_unsupported"),
                                     encoding="utf-8")
    results = run_paths([tmp_path])
    html = results_html(results)
    assert ">1 ok<" in html and ">1 FAILED<" in html
    assert [r.scenario for r in results.failures()] == ["rs-wrong"]


def test_a_result_set_gives_the_mapping_table_against_the_document(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    mapping = mapping_table(run_paths([tmp_path]))
    assert list(mapping["scenario"]) == ["rs-good"]
    assert list(mapping["matched"]) == [True]
    assert str(mapping["expected_fallback_type"].iloc[0]) == "MISSING_REQUIRED_CONTEXT"


def test_a_result_set_frame_has_one_categorical_row_per_run(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    frame = runs_frame(run_paths([tmp_path]))
    assert list(frame["scenario"]) == ["rs-good"]
    assert frame["release_outcome"].dtype.name == "category"
