"""What a live run's sources take from a scenario file."""

from __future__ import annotations

from pathlib import Path

from harness_lab.live.sources import http_terms
from harness_lab.scenarios import load_file

GUARDS_PASS = (Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"
               / "conclusion-guards-pass.yaml")


def _scenario(**update: object):  # type: ignore[no-untyped-def]
    [loaded] = load_file(GUARDS_PASS)
    return loaded.scenario.model_copy(update=update)


def test_scenarios_that_differ_in_their_scripted_replies_have_the_same_http_terms() -> None:
    plain = _scenario()
    other_replies = _scenario(model=[], name="another", query="something else")
    assert http_terms(plain) == http_terms(other_replies)


def test_a_configuration_or_a_tool_flag_changes_the_http_terms() -> None:
    plain = _scenario()
    later = _scenario(config=plain.config.model_copy(update={"deadline_s": 50.0}))
    logs = plain.tools["logs"].model_copy(update={"read_only": False})
    writable = _scenario(tools={**plain.tools, "logs": logs})
    assert len({http_terms(plain), http_terms(later), http_terms(writable)}) == 3
