"""Relations between observed values: each operator holding and not, literals, bad text."""

from __future__ import annotations

from typing import Any

import pytest

from harness_lab.scenarios.relations import parse_relation

OBSERVED: dict[str, Any] = {
    "sse": [{"kind": "content", "t": 3.0}, {"kind": "done", "t": 3.0}],
    "trace": [{"type": "RUN_FINISHED", "t": 3.0, "status": "OK"}],
    "row": {"status": "SUCCESS", "published": True, "tokens": 0},
}


def unheld(text: str) -> Any:
    found = parse_relation(text).holds(OBSERVED)
    return None if found is None else (found.values, found.note)


@pytest.mark.parametrize("text", [
    "sse[content].t == trace[RUN_FINISHED].t", "sse[done].t <= trace[RUN_FINISHED].t",
    "sse[done].t >= 3", "sse[done].t > 2.5", "sse[done].t < 3.5", "row.status != 'FAILED'",
    'row.status == "SUCCESS"', "row.published == true", "trace[RUN_FINISHED].status != null",
])
def test_a_relation_that_holds_reports_nothing(text: str) -> None:
    assert unheld(text) is None


def test_a_relation_that_does_not_hold_gives_the_two_values() -> None:
    assert unheld("sse[done].t < trace[RUN_FINISHED].t") == ((3.0, 3.0), "")
    assert unheld("row.status == 'FAILED'") == (("SUCCESS", "FAILED"), "")


def test_true_never_equals_one() -> None:
    assert unheld("row.published == 1") == ((True, 1), "")
    assert unheld("row.tokens == false") == ((0, False), "")


def test_order_compares_numbers_only() -> None:
    assert unheld("row.status < 3") == (("SUCCESS", 3), "< compares numbers only")


def test_a_path_that_names_nothing_is_why_the_relation_does_not_hold() -> None:
    assert unheld("sse[failure].t < 3") == ((), "sse[failure]: no such item; the kind values "
                                                "are content, done")


def test_a_relative_relation_reads_names_that_are_not_parts() -> None:
    relation = parse_relation("detail.at > lost_to_at", absolute=False)
    assert relation.holds({"detail": {"at": 2.0}, "lost_to_at": 1.0}) is None
    assert str(relation) == "detail.at > lost_to_at"


@pytest.mark.parametrize(("text", "message"), [
    ("sse[done].t", "is not one relation LEFT OP RIGHT"),
    ("a < b < c", "is not one relation LEFT OP RIGHT"),
    ("1 < 2", "compares two literals"),
    ("row.status == 'SUCCESS", "the string 'SUCCESS is not closed"),
    ("row.status == SUCCESS", "unknown part 'SUCCESS'"),
    ("rows.status == 'SUCCESS'", "unknown part 'rows'; the parts are"),
])
def test_a_malformed_relation_is_refused_naming_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_relation(text)
    assert message in str(err.value)
