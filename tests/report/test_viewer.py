"""The report viewer page: what it holds, read from the HTML (the browser tests drive it)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness_lab.report.palette import VERDICT_COLORS, outcome_color
from harness_lab.report.viewer import ReportContext, git_commit, viewer_html
from harness_lab.runner import run_paths
from tests.scenarios import missing_context

DEADLINE_RUN = """\
latency: {router: 0.2, model: 1.0, tool: 2.0}
config: {deadline_s: 4.0}
tools: {logs: {}}
model:
  - tool: logs
    scope: {service: checkout}
  - draft:
      findings: [{statement: "never accepted", citations: [inv-1]}]
    progress: {assessment: GAINED}
"""
"""A run whose 4 s deadline passes during its second model step."""

# A small library with known verdicts: two ok, three FAILED (on purpose), one ERROR.
SCENARIOS: dict[str, str] = {
    "fallbacks/missing-context.yaml": missing_context(
        "missing-context-ok",
        "a missing-context fallback that ends as its outcome-table row says",
        header="tags: [fallback, demo]\ncase: missing_context\n"),
    "fallbacks/wrong-case.yaml": missing_context(
        "wrong-case-fails",
        "claims the semantic_unsupported row but ends MISSING_REQUIRED_CONTEXT",
        header="tags: [fallback]\ncase: semantic_unsupported\n"),
    "timeouts/deadline.yaml": """\
name: deadline-timeout-ok
description: the deadline passes during the second model step
tags: [timeout, demo]
case: timeout_no_content
""" + DEADLINE_RUN,
    "timeouts/wrong-counts.yaml": """\
name: wrong-counts-fails
description: expects five tool calls where the run makes one
tags: [timeout]
""" + DEADLINE_RUN + """\
expect: {tool_calls: 5, run_state: TIMED_OUT}
""",
    "timeouts/notice.yaml": """\
name: cancel-notice
description: a user cancel, in two variants of the notice policy
tags: [matrix]
latency: {router: 0.2, model: 2.0}
model:
  - draft: {missing_info: [never used]}
faults:
  - {kind: user_cancel, at_s: 1.0}
expect: {run_state: CANCELLED}
matrix:
  - name: failure
    set: {config.policy.user_cancel_notice: failure}
    expect: {sse: [metadata, status, status, failure]}
  - name: silent
    set: {config.policy.user_cancel_notice: silent}
    expect: {sse: [metadata, status, status, done]}
""",
    "broken/unknown-key.yaml": "name: broken-file\ndescription: y\nfoo: 1\n",
}
"""Scenario files by path; the verdicts below are known without running the code."""

VERDICTS: dict[str, str] = {
    "missing-context-ok": "ok", "wrong-case-fails": "FAILED", "deadline-timeout-ok": "ok",
    "wrong-counts-fails": "FAILED", "cancel-notice[failure]": "ok",
    "cancel-notice[silent]": "FAILED", "unknown-key": "ERROR",
}
"""Each scenario's verdict (a file that does not load is named by its stem)."""


def write_library(root: Path) -> Path:
    """Write :data:`SCENARIOS` under ``root`` and return it."""
    for name, text in SCENARIOS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = write_library(tmp_path_factory.mktemp("library"))
    context = ReportContext(command="harness-lab report lib --out r.html", paths=("lib",),
                            elapsed_s=1.25, commit="abc1234")
    return viewer_html(run_paths([root]), title="demo <report>", context=context)


class _Rows(HTMLParser):
    """The main table's rows: their attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and "run" in (found.get("class") or "").split():
            self.rows.append(found)
        for key in ("src", "href"):
            if found.get(key) and tag in ("img", "script", "link", "a"):
                self.sources.append(str(found[key]))


def rows_of(page: str) -> list[dict[str, str | None]]:
    parser = _Rows()
    parser.feed(page)
    return parser.rows


def test_every_scenario_has_one_row_with_its_verdict(page: str) -> None:
    rows = rows_of(page)
    assert {r["data-k-name"]: r["data-verdict"] for r in rows} == VERDICTS


def test_failures_and_errors_come_before_the_scenarios_that_held(page: str) -> None:
    verdicts = [r["data-verdict"] for r in rows_of(page)]
    assert verdicts == ["FAILED"] * 3 + ["ERROR"] + ["ok"] * 3


def test_rows_carry_the_directory_tags_and_state_axes_the_filters_use(page: str) -> None:
    by_name = {r["data-k-name"]: r for r in rows_of(page)}
    row = by_name["deadline-timeout-ok"]
    assert row["data-dir"] == "timeouts"
    assert row["data-tags"] == "\u241ftimeout\u241fdemo\u241f"
    assert (row["data-run-state"], row["data-release"], row["data-fallback"]) == (
        "TIMED_OUT", "FAILED", "")
    fallback = by_name["missing-context-ok"]
    assert (fallback["data-outcome"], fallback["data-fallback"]) == (
        "FALLBACK:MISSING_REQUIRED_CONTEXT", "MISSING_REQUIRED_CONTEXT")


def test_the_header_names_the_command_the_commit_the_version_and_the_totals(page: str) -> None:
    head = page[page.index("<header"):page.index("</header>")]
    assert "harness-lab report lib --out r.html" in head
    assert "commit abc1234" in head and "harness_lab 0.1.0" in head
    assert "ran in 1.25 s" in head
    assert "7 scenario(s), 6 run(s)" in head
    assert ">3 ok<" in head and ">3 FAILED<" in head and ">1 ERROR<" in head
    assert f"background:{VERDICT_COLORS['FAILED']}" in head


def test_the_title_is_escaped(page: str) -> None:
    assert "<title>demo &lt;report&gt;</title>" in page


def test_a_matrix_variant_reads_as_its_base_name_and_its_parameters(page: str) -> None:
    assert ('<span class="hl-name">cancel-notice</span><span class="hl-param">silent</span>'
            in page)


def test_the_failures_say_what_did_not_hold(page: str) -> None:
    assert "tool_calls: expected 5, got 1" in page
    assert "fallback_type: expected SEMANTIC_UNSUPPORTED, got MISSING_REQUIRED_CONTEXT" in page
    assert "unknown-key.yaml:3: foo: unknown key" in page


def test_the_outcome_table_lists_only_the_scenarios_that_name_a_case(page: str) -> None:
    section = page[page.index('<section id="outcome-table">'):]
    section = section[:section.index("</section>")]
    reproducers = re.findall(r'class="repro"[^>]*>.*?</span> ([^<]+)</a>', section)
    assert sorted(reproducers) == ["deadline-timeout-ok", "missing-context-ok",
                                   "wrong-case-fails"]
    assert section.count("<tr><td>") == 13  # every row of the table, each once
    semantic = section[section.index("<b>semantic_unsupported</b>"):]
    semantic = semantic[:semantic.index("</tr>")]
    assert "✗</span> wrong-case-fails" in semantic


def test_the_page_references_nothing_outside_itself(page: str) -> None:
    parser = _Rows()
    parser.feed(page)
    assert all(src.startswith("#") for src in parser.sources)
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    assert "<link" not in page
    assert page.count("<script>") == 1  # the embedded one


def test_no_missing_value_reads_as_none_nan_or_na(page: str) -> None:
    visible = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    for literal in (">None<", "None ", "<NA>", "&lt;NA&gt;", ">nan<", " nan ", ">null<"):
        assert literal not in visible


def test_each_run_drill_down_holds_its_trace_sse_events_and_timeline(page: str) -> None:
    detail = page[page.index('data-for="'):]
    first_row_id = rows_of(page)[0]["id"]
    assert detail.startswith(f'data-for="{first_row_id}"')
    detail = detail[:detail.index('<tr class="run"')]
    for part in ("state axes", "SSE events", "trace", "stored diagnosis_run row",
                 '<svg class="timeline"', "RUN_FINISHED"):
        assert part in detail


def test_outcome_colours_come_from_the_palette(page: str) -> None:
    assert f"background:{outcome_color('FAILED', None, 'TIMED_OUT')}" in page


def test_git_commit_is_none_outside_a_work_tree(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None


def test_an_empty_result_set_is_a_page_without_rows() -> None:
    page = viewer_html([])
    assert page.startswith("<!DOCTYPE html>")
    assert rows_of(page) == []
    assert "0 scenario(s), 0 run(s)" in page


def test_the_drill_down_says_how_to_see_the_run_in_a_terminal(page: str) -> None:
    assert re.search(r"<code>harness-lab show [^<]*timeouts/notice\.yaml\[silent\]&#x27;?</code>",
                     page)
    assert re.search(r"<code>harness-lab validate [^<]*broken/unknown-key\.yaml</code>", page)


def test_the_drill_down_holds_the_scenario_file_collapsed(page: str) -> None:
    source = page[page.index('<summary>scenario file</summary><pre class="hl-source">'):]
    source = source[:source.index("</pre>")]
    assert source.count("\n") > 3  # the file's lines, not one of them
    assert "expect: {tool_calls: 5, run_state: TIMED_OUT}" in page  # only the file says it
    assert "faults:\n  - {kind: user_cancel, at_s: 1.0}" in page
    assert '<details class="hl-section"><summary>scenario file</summary>' in page  # closed


def test_a_result_whose_file_is_not_a_regular_file_shows_without_its_text(
        tmp_path: Path) -> None:
    import os

    from harness_lab.runner.run import ScenarioResult

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # reading it would block: the page must not try
    page = viewer_html([ScenarioResult("pipe", str(fifo), error=f"{fifo}: not a regular file")])
    assert "not a regular file" in page
    assert "<summary>scenario file</summary>" not in page
