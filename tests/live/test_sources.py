"""What a live run's sources take from a scenario file."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness_lab.errors import ProviderError
from harness_lab.live.sources import HttpRetriever, http_terms
from harness_lab.messages import RetrievalRequest
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


@pytest.mark.parametrize("body", [b'{"passages": "one"}', b"[1, 2]", b"<html>",
                                  b"[" * 100_000, b'{"passages": [1' + b"0" * 5000 + b"]}"],
                         ids=["not-a-list", "an-array", "html", "nested-100000-deep",
                              "a-5000-digit-number"])
def test_a_retriever_answer_without_a_list_of_passages_is_a_provider_error(
        body: bytes) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    with httpx.Client(transport=transport) as http:
        retriever = HttpRetriever("http://tools.test/retriever", http)
        with pytest.raises(ProviderError, match="the answer has no list of text passages"):
            retriever.retrieve(RetrievalRequest("why?"))
