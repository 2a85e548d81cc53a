"""``pytest --scenario-otlp URL``: each scenario item's runs reach a real receiver, one trace
each, and the terminal summary says so; a bad URL is a usage error before any test runs."""

from __future__ import annotations

import time

import pytest

from tests.otel.conftest import Receiver, string_attributes
from tests.scenarios import good_and_wrong

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each test runs a pytest session in a fresh interpreter


def test_each_scenario_item_s_run_is_sent_passed_or_failed(pytester: pytest.Pytester,
                                                            receiver: Receiver) -> None:
    good_and_wrong(pytester.path / "scenarios")
    before = time.time_ns()
    result = pytester.runpytest_subprocess("scenarios", "--no-scenario-log", "-p",
                                           "no:cacheprovider", "--scenario-otlp", receiver.url)
    after = time.time_ns()
    result.assert_outcomes(passed=1, failed=1)
    spans = [span for _, span in receiver.spans()]
    roots = [s for s in spans if not s.parent_span_id]
    assert sorted(string_attributes(r)["harness_lab.scenario"] for r in roots) == [
        "good", "wrong"]
    assert all(before <= r.start_time_unix_nano <= after for r in roots)  # when each ran
    result.stdout.fnmatch_lines([f"harness-lab otlp: {len(spans)} span(s) of 2 run(s) sent "
                                 f"to {receiver.url}/v1/traces"])


def test_under_xdist_each_worker_sends_its_items_and_the_summary_adds_them_up(
        pytester: pytest.Pytester, receiver: Receiver) -> None:
    good_and_wrong(pytester.path / "scenarios")
    result = pytester.runpytest_subprocess("scenarios", "--no-scenario-log", "-p",
                                           "no:cacheprovider", "-n", "2", "--dist", "load",
                                           "--scenario-otlp", receiver.url)
    result.assert_outcomes(passed=1, failed=1)
    spans = [span for _, span in receiver.spans()]
    assert len([s for s in spans if not s.parent_span_id]) == 2
    result.stdout.fnmatch_lines([f"harness-lab otlp: {len(spans)} span(s) of 2 run(s) sent "
                                 f"to {receiver.url}/v1/traces"])


def test_a_url_that_is_not_otlp_http_is_a_usage_error_before_any_test(
        pytester: pytest.Pytester) -> None:
    good_and_wrong(pytester.path / "scenarios")
    result = pytester.runpytest_subprocess("scenarios", "--no-scenario-log",
                                           "--scenario-otlp", "grpc://127.0.0.1:4317")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --scenario-otlp: 'grpc://127.0.0.1:4317' is not an "
                                 "http:// or https:// URL (OTLP over HTTP)"])
