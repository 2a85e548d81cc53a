"""Records and results to JSON data and back: every field of every record survives."""

from __future__ import annotations

import dataclasses
import json

from harness_lab.logs.codec import (
    record_from_data,
    record_result,
    record_to_data,
    result_from_data,
    result_to_data,
    variant_of,
)
from harness_lab.record import RunRecord
from harness_lab.runner.results import ResultSet
from harness_lab.states import ReleaseOutcome, RunState


def _records(results: ResultSet) -> list[RunRecord]:
    out: list[RunRecord] = []
    for r in results:
        out += list(r.turns) + ([r.record] if r.record is not None else [])
    return out


RECORD_FIELDS = [f.name for f in dataclasses.fields(RunRecord)]


def test_a_record_is_written_with_every_field_of_its_declaration(library: ResultSet) -> None:
    live = next(r.record for r in library if r.record is not None)
    assert list(record_to_data(live)) == RECORD_FIELDS
    assert live.to_dict() == record_to_data(live)


def test_every_record_of_the_library_comes_back_equal_field_by_field(library: ResultSet
                                                                      ) -> None:
    records = _records(library)
    assert len(records) > 100
    for live in records:
        text = json.dumps(record_to_data(live), allow_nan=False)
        back = record_from_data(json.loads(text))
        for name in RECORD_FIELDS:
            assert getattr(back, name) == getattr(live, name), (live.run_id, name)
            # a float field comes back a float even where the pure-Python core held the
            # simpy clock's integer 0 (the compiled core converts it as it is stored)
            kinds = (type(getattr(back, name)), type(getattr(live, name)))
            assert kinds[0] is kinds[1] or kinds == (float, int), (live.run_id, name)
        assert back == live


def test_enum_fields_come_back_as_their_enum_members(library: ResultSet) -> None:
    live = next(r.record for r in library if r.record is not None)
    back = record_from_data(json.loads(json.dumps(record_to_data(live))))
    assert isinstance(back.run_state, RunState)
    assert isinstance(back.release_outcome, ReleaseOutcome)
    assert all(type(e.kind) is type(live.sse_events[0].kind) for e in back.sse_events)


def test_a_result_keeps_its_verdict_mismatches_violations_and_crash(library: ResultSet
                                                                    ) -> None:
    for live in library:
        back = result_from_data(json.loads(json.dumps(result_to_data(live))))
        assert (back.scenario, back.path, back.verdict, back.case, back.tags) == (
            live.scenario, live.path, live.verdict, live.case, live.tags)
        assert back.violations == live.violations
        assert [str(m) for m in back.mismatches] == [
            f"{m.field}: expected {getattr(m.expected, 'value', m.expected)}, got "
            f"{getattr(m.observed, 'value', m.observed)}" for m in live.mismatches]
        assert (back.crashed, back.stored_row, back.partial_sse, back.partial_trace) == (
            live.crashed, live.stored_row, live.partial_sse, live.partial_trace)


def test_a_matrix_variant_is_read_from_the_scenario_name() -> None:
    assert variant_of("deadline-sweep[config.deadline_s=6.5]") == "config.deadline_s=6.5"
    assert variant_of("plain-name") is None


def test_a_bare_record_is_judged_by_the_invariants_alone(library: ResultSet) -> None:
    record = next(r.record for r in library if r.record is not None and r.ok)
    end = record.sse_events[-1].t  # the second time at the end, in order
    sent_twice = dataclasses.replace(record, sse_events=record.sse_events + tuple(
        dataclasses.replace(e, t=end) for e in record.sse_events))
    result = record_result("bare", None, sent_twice, case="x")
    assert result.record is sent_twice and result.case == "x" and result.path is None
    assert result.unexpected == ("sse_protocol",) and not result.ok
    assert record_result("bare", None, record).ok
