"""A draft's data, read field by field, is pydantic's own JSON dump of it."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_lab.diagnosis.data import draft_data, evidence_data, fact_data
from harness_lab.diagnosis.schema import DiagnosisDraft, EvidenceRef, Fact

_text = st.text(min_size=1, max_size=12).filter(str.strip)
_facts = st.lists(st.fixed_dictionaries({"statement": _text,
                                         "citations": st.lists(_text, max_size=3)}),
                  max_size=3)
_drafts = st.fixed_dictionaries({}, optional={
    "conclusion": st.none() | _text,
    "evidence": st.lists(st.fixed_dictionaries({"invocation_id": _text, "claim": _text}),
                         max_size=4),
    "findings": _facts,
    "missing_info": st.lists(_text, max_size=3),
    "recommendations": st.lists(_text, max_size=3),
})


def _valid(raw: dict[str, Any]) -> DiagnosisDraft:
    try:
        return DiagnosisDraft.model_validate(raw)
    except ValidationError:
        assume(False)
        raise


@settings(max_examples=300, deadline=None)
@given(_drafts)
def test_a_drafts_data_is_its_json_dump(raw: dict[str, Any]) -> None:
    draft = _valid(raw)
    data = draft_data(draft)
    assert data == draft.model_dump(mode="json")
    assert list(data) == list(draft.model_dump(mode="json"))
    assert draft.public() == data


@settings(max_examples=100, deadline=None)
@given(_drafts)
def test_the_facts_and_evidence_of_a_draft_dump_alike(raw: dict[str, Any]) -> None:
    draft = _valid(raw)
    assert [fact_data(f) for f in draft.findings] == [f.model_dump(mode="json")
                                                      for f in draft.findings]
    assert [evidence_data(e) for e in draft.evidence] == [e.model_dump(mode="json")
                                                          for e in draft.evidence]


def test_the_written_data_names_every_field_of_each_schema() -> None:
    fact = Fact(statement="the pool is full", citations=("inv-1",))
    ref = EvidenceRef(invocation_id="inv-1", claim="timeouts")
    draft = DiagnosisDraft(conclusion="the pool", evidence=(ref,), findings=(fact,))
    assert list(fact_data(fact)) == list(Fact.model_fields)
    assert list(evidence_data(ref)) == list(EvidenceRef.model_fields)
    assert list(draft_data(draft)) == list(DiagnosisDraft.model_fields)


def test_arrays_come_out_as_lists_of_plain_data() -> None:
    draft = DiagnosisDraft(conclusion=" the pool ", recommendations=("raise it",),
                           findings=(Fact(statement="full", citations=("inv-1", "inv-2")),))
    assert draft_data(draft) == {
        "conclusion": "the pool", "evidence": [],
        "findings": [{"statement": "full", "citations": ["inv-1", "inv-2"]}],
        "missing_info": [], "recommendations": ["raise it"]}
