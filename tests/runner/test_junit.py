"""JUnit XML of a run's results, checked against the JUnit schema of Jenkins's xUnit plugin
and by counting. ``junit-10.xsd`` beside this file is the plugin's own, byte for byte
(github.com/jenkinsci/xunit-plugin, ``src/main/resources/org/jenkinsci/plugins/xunit/types/
model/xsd/junit-10.xsd``, last changed in December 2018; MIT licence, kept in its header)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from lxml import etree

from harness_lab.runner import ScenarioResult, run_paths
from harness_lab.runner.junit import junit_xml
from tests.scenarios import missing_context

SCHEMA = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("junit-10.xsd"))))

GOOD = missing_context("good", rest="expect:\n  release_outcome: FALLBACK\n"
                                    "  fallback_type: MISSING_REQUIRED_CONTEXT\n")
WRONG = (GOOD.replace("name: good", "name: wrong")
         .replace("release_outcome: FALLBACK", "release_outcome: SUCCESS")
         + "  tool_calls: 2\n")
MATRIX = GOOD.replace("name: good", "name: pair") + """\
matrix:
  - name: holds
  - name: breaks
    expect: {db_status: FAILED}
"""
BROKEN = "name: broken\ndescription: x\nmodle: []\n"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A directory of four files: one that passes, one that fails two expectations, a matrix
    of a passing and a failing variant, and one that does not load."""
    for name, text in {"good": GOOD, "wrong": WRONG, "pair": MATRIX,
                       "broken": BROKEN}.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def report(library: Path) -> tuple[str, ET.Element]:
    """The JUnit text of running ``library``, and its parsed root."""
    results = run_paths([library])
    text = junit_xml(results, wall_times=[0.25] * len(results),
                     timestamp=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                     hostname="ci-runner")
    return text, ET.fromstring(text)


def suites(root: ET.Element) -> dict[str, ET.Element]:
    return {Path(s.attrib["file"]).name: s for s in root.iter("testsuite")}


def test_the_report_is_valid_junit_by_the_jenkins_schema(library: Path) -> None:
    text, _ = report(library)
    document = etree.fromstring(text.encode("utf-8"))
    assert SCHEMA.validate(document), SCHEMA.error_log


def test_the_counts_add_up_per_file_and_for_the_whole_run(library: Path) -> None:
    _, root = report(library)
    counts = {name: tuple(s.attrib[k] for k in ("tests", "failures", "errors", "skipped"))
              for name, s in suites(root).items()}
    assert counts == {"good.yaml": ("1", "0", "0", "0"), "wrong.yaml": ("1", "1", "0", "0"),
                      "pair.yaml": ("2", "1", "0", "0"), "broken.yaml": ("1", "0", "1", "0")}
    assert (root.attrib["tests"], root.attrib["failures"], root.attrib["errors"]) == (
        "5", "2", "1")
    assert len(root.findall(".//testcase")) == 5


def test_each_variant_is_a_testcase_named_by_it_under_its_files_dotted_path(
        library: Path) -> None:
    _, root = report(library)
    cases = suites(root)["pair.yaml"].findall("testcase")
    assert [c.attrib["name"] for c in cases] == ["pair[holds]", "pair[breaks]"]
    dotted = ".".join(library.relative_to(library.anchor).parts)
    assert {c.attrib["classname"] for c in cases} == {f"{dotted}.pair"}
    assert [c.find("failure") is None for c in cases] == [True, False]


def test_a_failure_lists_every_mismatch_at_its_file_and_line(library: Path) -> None:
    _, root = report(library)
    [case] = suites(root)["wrong.yaml"].findall("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.attrib["message"] == ("release_outcome: expected SUCCESS, got FALLBACK "
                                         "(and 1 more)")
    path = library / "wrong.yaml"
    assert (failure.text or "").splitlines() == [
        f"{path}:7: release_outcome: expected SUCCESS, got FALLBACK",
        f"{path}:9: tool_calls: expected 2, got 0"]


def test_a_file_that_does_not_load_is_an_error_at_its_line(library: Path) -> None:
    _, root = report(library)
    [case] = suites(root)["broken.yaml"].findall("testcase")
    error = case.find("error")
    assert error is not None and case.find("failure") is None
    assert (error.text or "") == (f"{library / 'broken.yaml'}:3: modle: unknown key; "
                                  f"did you mean 'model'?")
    assert case.find("system-out") is None  # it never ran: no states to report


def test_the_observed_states_are_suite_properties_and_each_cases_output(
        library: Path) -> None:
    _, root = report(library)
    good = suites(root)["good.yaml"]
    properties = {p.attrib["name"]: p.attrib["value"] for p in good.iter("property")}
    assert properties == {"good.run_state": "SUCCESS", "good.release_outcome": "FALLBACK",
                          "good.fallback_type": "MISSING_REQUIRED_CONTEXT",
                          "good.db_status": "SUCCESS"}
    out = good.findtext("testcase/system-out") or ""
    assert out.splitlines()[:4] == ["run_state: SUCCESS", "release_outcome: FALLBACK",
                                    "fallback_type: MISSING_REQUIRED_CONTEXT",
                                    "db_status: SUCCESS"]


def test_times_timestamp_and_host_are_those_given(library: Path) -> None:
    _, root = report(library)
    pair = suites(root)["pair.yaml"]
    assert [c.attrib["time"] for c in pair.iter("testcase")] == ["0.250", "0.250"]
    assert pair.attrib["time"] == "0.500"
    assert root.attrib["time"] == "1.250"
    assert (pair.attrib["timestamp"], pair.attrib["hostname"]) == ("2026-01-02T03:04:05+00:00",
                                                                   "ci-runner")


def test_characters_xml_cannot_carry_are_replaced_and_the_report_stays_valid() -> None:
    result = ScenarioResult("esc", "x.yaml", error="ValueError: \x1b[31mred\x1b[0m\x00")
    text = junit_xml([result])
    assert SCHEMA.validate(etree.fromstring(text.encode("utf-8")))
    error = ET.fromstring(text).find(".//error")
    assert error is not None
    assert error.attrib["type"] == "ValueError"
    assert error.attrib["message"] == "ValueError: \ufffd[31mred\ufffd[0m\ufffd"
