"""A mapping of another harness's trace names: what it may name, refused naming its part."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.audit.otlp_names import OtlpNames, check_otlp_mapping
from harness_lab.audit.sources import SourceError


@pytest.mark.parametrize(("mapping", "problem"), [
    ({"spans": {}}, "mapping: unknown key 'spans'"),
    ({"run_span": 3}, "mapping.run_span: the name of the run's span"),
    ({"events": {"RUN_DONE": "x"}}, "mapping.events: unknown name 'RUN_DONE'"),
    ({"attributes": {"harness_lab.run": "x"}}, "mapping.attributes: unknown name"),
    ({"attributes": {"harness_lab.run_id": 1}}, "mapping.attributes: an object of names"),
])
def test_a_wrong_mapping_is_refused_naming_its_part(mapping: dict[str, Any],
                                                     problem: str) -> None:
    with pytest.raises(SourceError, match=f"^{problem}"):
        check_otlp_mapping(mapping)


def test_a_mapping_turns_their_names_into_ours() -> None:
    names = OtlpNames.of({"run_span": "diagnosis.request",
                          "events": {"RUN_FINISHED": "run.finished"},
                          "attributes": {"harness_lab.run_id": "diagnosis.run.id",
                                         "harness_lab.detail.": "diagnosis.event."}})
    assert (names.run_span, names.events, names.ours) == (
        "diagnosis.request", {"run.finished": "RUN_FINISHED"}, False)
    assert [names.attribute(k) for k in ("diagnosis.run.id", "diagnosis.event.tool",
                                         "gen_ai.tool.name")] == [
        "harness_lab.run_id", "harness_lab.detail.tool", "gen_ai.tool.name"]
    assert OtlpNames.of(None).ours
