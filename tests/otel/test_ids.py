"""Ids a run's record determines: the same record, the same ids; any difference, others."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import islice

from harness_lab.codec import from_data
from harness_lab.otel.ids import run_seed, span_ids, trace_id
from harness_lab.record import RunRecord
from tests.otel.conftest import export, played


def test_a_record_reopened_from_its_json_exports_the_same_ids() -> None:
    pairs = played("outcomes/conclusion-guards-pass.yaml", "faults/tool-error-projection.yaml")
    reopened = [(name, from_data(RunRecord, json.loads(json.dumps(record.to_dict()))))
                for name, record in pairs]
    ids = [sorted((s.context.trace_id, s.context.span_id) for s in export(p))
           for p in (pairs, reopened)]
    assert ids[0] == ids[1]


def test_a_scenario_name_an_epoch_or_any_field_changes_the_seed() -> None:
    ((name, record),) = played("outcomes/conclusion-guards-pass.yaml")
    seeds = {run_seed(record, 0, name), run_seed(record, 0, "another"),
             run_seed(record, 1, name), run_seed(replace(record, agent_steps=4), 0, name)}
    assert len(seeds) == 4
    assert run_seed(record, 0, name) == run_seed(record, 0, name)


def test_trace_and_span_ids_are_never_zero_and_span_ids_do_not_repeat() -> None:
    seed = bytes(32)
    ids = list(islice(span_ids(seed), 10_000))
    assert trace_id(seed) != 0 and 0 not in ids
    assert len(set(ids)) == len(ids)
