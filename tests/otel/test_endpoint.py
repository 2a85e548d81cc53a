"""The ``--otlp`` URL: what is refused before any run, and the traces path it gets."""

from __future__ import annotations

import pytest

from harness_lab.otel import endpoint_problem, traces_url
from harness_lab.otel.endpoint import checked_endpoint


@pytest.mark.parametrize("url", ["http://127.0.0.1:4318/v1/traces", "https://otel.example"])
def test_an_http_or_https_url_with_a_host_is_an_endpoint(url: str) -> None:
    assert endpoint_problem(url) is None


@pytest.mark.parametrize(("url", "problem"), [
    ("grpc://127.0.0.1:4317", "'grpc://127.0.0.1:4317' is not an http:// or https:// URL"),
    ("127.0.0.1:4318", "'127.0.0.1:4318' is not an http:// or https:// URL"),
    ("http:///v1/traces", "'http:///v1/traces' names no host"),
    ("http://127.0.0.1:port/v1/traces", "'http://127.0.0.1:port/v1/traces' is not a URL"),
])
def test_a_url_that_cannot_be_an_otlp_http_endpoint_is_named(url: str, problem: str) -> None:
    said = endpoint_problem(url)
    assert said is not None and said.startswith(problem)


def test_a_url_without_a_path_gets_the_traces_path_and_one_with_a_path_keeps_it() -> None:
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://127.0.0.1:4318/") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://collector/otlp/v1/traces") == "http://collector/otlp/v1/traces"


def test_a_checked_endpoint_is_its_traces_url_and_a_bad_one_raises_naming_the_problem() -> None:
    assert checked_endpoint("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert checked_endpoint("https://otel.example/x/traces") == "https://otel.example/x/traces"
    with pytest.raises(ValueError, match="^'ftp://h' is not an http:// or https:// URL"):
        checked_endpoint("ftp://h")
