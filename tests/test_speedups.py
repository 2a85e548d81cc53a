"""The run core's shortcuts give what the plain ways they replace give."""

from __future__ import annotations

import enum

from harness_lab import states
from harness_lab.speedups import read_value_in_c


def test_every_state_enum_members_value_is_its_plain_enum_value() -> None:
    axes = [cls for cls in vars(states).values()
            if isinstance(cls, type) and issubclass(cls, enum.Enum) and cls is not states._Axis
            and issubclass(cls, states._Axis)]
    assert len(axes) > 15
    for axis in axes:
        for member in axis:
            assert member.value == vars(enum.Enum)["value"].__get__(member, axis), member


def test_the_getter_is_set_on_the_base_alone_and_reads_each_members_own_value() -> None:
    class Base(enum.StrEnum):
        pass

    read_value_in_c(Base)

    class Colour(Base):
        RED = "red"
        GREEN = "green"

    assert (Colour.RED.value, Colour.GREEN.value) == ("red", "green")
    assert "value" not in vars(Colour)
    assert "value" not in vars(enum.StrEnum)  # other enums keep enum's own
