"""Variants: the base scenario plus one fault, runnable as scenario files."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from harness_lab.explore.boundaries import record_base
from harness_lab.explore.variants import enumerate_variants
from harness_lab.scenarios.loader import load_file, load_text
from tests.explore.helpers import REPORT


@pytest.fixture(scope="module")
def variants() -> list:
    return enumerate_variants(record_base(load_file(REPORT)[0]))


def test_the_report_scenario_has_189_variants(variants: list) -> None:
    assert len(variants) == 189


def test_every_variant_is_named_base_at_point_slash_fault(variants: list) -> None:
    names = [v.name for v in variants]
    assert len(set(names)) == 189
    assert "report-released@before tool:logs#1/client_disconnect" in names
    assert "report-released@sse#5:content/client_disconnect" in names
    assert "report-released@t+2.2s/deadline" in names
    assert "report-released@start/budget_exhausted:tokens" in names
    assert "report-released@guard#1/semantic_guard:UNAVAILABLE" in names


def test_variants_per_fault_kind_cover_every_applicable_kind(variants: list) -> None:
    kinds = Counter(v.kind for v in variants)
    assert kinds == {"client_disconnect": 27, "user_cancel": 21, "deadline": 21, "crash": 14,
                     "budget_exhausted": 60, "provider_error": 5, "router_unavailable": 1,
                     "latency_spike": 7, "tool_error": 8, "tool_rejection": 6,
                     "no_gain_streak": 2, "semantic_guard": 2, "invalid_draft": 9,
                     "protocol_violation": 6}


def test_a_variant_drops_the_base_expectations_and_adds_exactly_one_fault(
        variants: list) -> None:
    v = next(x for x in variants if x.name.endswith("@after model#2/deadline"))
    assert "expect" not in v.data and "case" not in v.data
    assert v.data["faults"] == [{"kind": "deadline",
                                 "at": {"when": "after", "call": "model", "n": 2}}]


def test_a_variant_written_as_yaml_loads_back_as_the_same_scenario(variants: list) -> None:
    v = variants[40]
    loaded = load_text(v.to_yaml(case="client_disconnect"))[0]
    assert loaded.scenario.name == v.name
    assert loaded.scenario.case == "client_disconnect"
    assert yaml.safe_load(v.to_yaml())["faults"] == v.data["faults"]


def test_the_latency_spike_outlives_the_deadline(variants: list) -> None:
    v = next(x for x in variants if x.name.endswith("@guard#1/latency_spike"))
    assert v.fault == {"kind": "latency_spike", "call": "guard", "n": 1, "latency_s": 54.8}


def test_restricting_fault_kinds_keeps_only_those(variants: list) -> None:
    base = record_base(load_file(REPORT)[0])
    only = enumerate_variants(base, {"crash", "deadline"})
    assert {v.kind for v in only} == {"crash", "deadline"}
    assert len(only) == 35


def test_an_unknown_fault_kind_is_refused() -> None:
    base = record_base(load_file(REPORT)[0])
    with pytest.raises(ValueError, match="unknown fault kind"):
        enumerate_variants(base, {"meteor"})
