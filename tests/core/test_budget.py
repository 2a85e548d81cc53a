import pytest

from harness_lab.core import BudgetLimits, RunBudget
from harness_lab.errors import BudgetExceeded


def test_a_model_call_past_the_limit_raises_with_kind_value_and_limit():
    b = RunBudget(BudgetLimits(model_calls=1))
    b.reserve_model_call()
    with pytest.raises(BudgetExceeded) as e:
        b.reserve_model_call()
    assert (e.value.kind, e.value.value, e.value.limit) == ("model_calls", 2, 1)


def test_headroom_is_readable_at_any_moment_and_none_where_unlimited():
    b = RunBudget(BudgetLimits(tool_calls=3, bytes=100))
    b.reserve_tool_call()
    b.charge_bytes(40)
    assert b.headroom() == {"model_calls": None, "tool_calls": 2, "tokens": None, "bytes": 60}


def test_bytes_past_the_limit_raise():
    b = RunBudget(BudgetLimits(bytes=10))
    with pytest.raises(BudgetExceeded):
        b.charge_bytes(11)


def test_tokens_are_counted_for_every_call_and_checked_on_request():
    b = RunBudget(BudgetLimits(tokens=10))
    b.add_tokens(6, 6)
    assert b.usage().tokens == 12
    with pytest.raises(BudgetExceeded):
        b.check_tokens()


def test_a_refunded_tool_call_frees_its_place_under_the_limit():
    b = RunBudget(BudgetLimits(tool_calls=1))
    b.reserve_tool_call()
    b.refund_tool_call()
    assert b.headroom()["tool_calls"] == 1
    b.reserve_tool_call()
    with pytest.raises(BudgetExceeded):
        b.reserve_tool_call()


def test_a_refund_without_a_reserved_tool_call_is_refused():
    with pytest.raises(ValueError, match="no reserved tool call"):
        RunBudget(BudgetLimits()).refund_tool_call()


def test_a_usage_is_always_whole_so_a_decoded_one_without_a_count_is_refused_by_name():
    from harness_lab.codec import DecodeError, from_data, json_schema
    from harness_lab.core import Usage

    whole = {"model_calls": 2, "tool_calls": 1, "tokens": 30, "bytes": 90, "input_tokens": 10,
             "output_tokens": 20}
    assert from_data(Usage, whole) == Usage(2, 1, 30, 90, 10, 20)
    with pytest.raises(DecodeError, match="bytes: required field is missing"):
        from_data(Usage, {k: v for k, v in whole.items() if k != "bytes"}, "usage")
    assert json_schema(Usage)["$defs"]["Usage"]["required"] == list(whole)
