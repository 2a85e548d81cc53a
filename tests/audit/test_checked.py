"""One run's audit: an invariant that raises on a record no rule foresaw is that run's row,
not the end of the audit."""

from __future__ import annotations

import pytest

from harness_lab import invariants
from harness_lab.audit.checked import audited
from harness_lab.fakes import draft
from tests.conftest import build


def test_an_invariant_that_raises_makes_its_run_unreadable_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    record = build([draft(missing_info=["which service"])]).run("it is slow")

    def broken(_record: object) -> list[str]:
        raise TypeError("unorderable trace times")

    monkeypatch.setitem(invariants.INVARIANTS, "broken_rule", broken)
    run = audited(record.run_id, record, None)
    assert (run.run_id, run.state) == (record.run_id, "unreadable")
    assert run.note == "checking broken_rule failed: TypeError: unorderable trace times"


def test_a_record_every_invariant_holds_on_is_checked_clean() -> None:
    record = build([draft(missing_info=["which service"])]).run("it is slow")
    run = audited(record.run_id, record, None)
    assert (run.state, run.violations, run.note) == ("checked", (), None)
