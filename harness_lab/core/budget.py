"""RunBudget: hard limits on model calls, tool calls, tokens and bytes (doc §3, §8.3)."""

from __future__ import annotations

from dataclasses import dataclass

from harness_lab.errors import BudgetExceeded
from harness_lab.frozen import value_class

__all__ = ["BUDGET_KINDS", "BudgetLimits", "RunBudget", "Usage"]

BUDGET_KINDS = ("model_calls", "tool_calls", "tokens", "bytes")


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Hard limits of one run; ``None`` means unlimited."""

    model_calls: int | None = None
    tool_calls: int | None = None
    tokens: int | None = None
    bytes: int | None = None


value_class(BudgetLimits)  # see frozen.py


@dataclass(frozen=True, slots=True, init=False)
class Usage:
    """What a run consumed, by budget kind, plus the token split.

    Every field is always given: a snapshot of a whole budget (:meth:`RunBudget.usage`) or a
    record rebuilt from a stored row passes all six, and every log, served record and record
    file has carried all six since the first, so no field has a default for a reader to fill.
    """

    model_calls: int
    tool_calls: int
    tokens: int
    bytes: int
    input_tokens: int
    output_tokens: int

    def __init__(self, model_calls: int, tool_calls: int, tokens: int, bytes: int,
                 input_tokens: int, output_tokens: int) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "model_calls", model_calls)
        object.__setattr__(self, "tool_calls", tool_calls)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "bytes", bytes)
        object.__setattr__(self, "input_tokens", input_tokens)
        object.__setattr__(self, "output_tokens", output_tokens)


value_class(Usage)  # see frozen.py


class RunBudget:
    """Counts a run's consumption against its limits; headroom is readable at any moment.

    ``reserve_*`` is called before a call starts and raises :class:`BudgetExceeded` when the
    call would pass a limit; ``check_*`` is called after and raises when the call's actual
    cost took the run past one. Limits are enforced at the diagnosis runtime's agent and tool
    boundaries; tokens of every call kind are counted.
    """

    __slots__ = ("limits", "model_calls", "tool_calls", "tokens", "bytes", "input_tokens",
                 "output_tokens")

    def __init__(self, limits: BudgetLimits) -> None:
        self.limits = limits
        self.model_calls = 0
        self.tool_calls = 0
        self.tokens = 0
        self.bytes = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def reserve_model_call(self) -> None:
        """Count one model call; raise if it passes the call limit or tokens are spent."""
        lim = self.limits
        if lim.model_calls is not None and self.model_calls + 1 > lim.model_calls:
            raise BudgetExceeded("model_calls", self.model_calls + 1, lim.model_calls)
        if lim.tokens is not None and self.tokens >= lim.tokens:
            raise BudgetExceeded("tokens", self.tokens, lim.tokens)
        self.model_calls += 1

    def add_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Add a finished call's tokens (any call kind); never raises."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.tokens += input_tokens + output_tokens

    def check_tokens(self) -> None:
        """Raise if the token total has passed the token limit."""
        lim = self.limits.tokens
        if lim is not None and self.tokens > lim:
            raise BudgetExceeded("tokens", self.tokens, lim)

    def reserve_tool_call(self) -> None:
        """Count one tool call; raise if it passes the tool-call limit."""
        lim = self.limits.tool_calls
        if lim is not None and self.tool_calls + 1 > lim:
            raise BudgetExceeded("tool_calls", self.tool_calls + 1, lim)
        self.tool_calls += 1

    def refund_tool_call(self) -> None:
        """Give back the tool call last reserved: it was refused before it ran."""
        if self.tool_calls <= 0:
            raise ValueError("RunBudget: no reserved tool call to refund")
        self.tool_calls -= 1

    def charge_bytes(self, n: int) -> None:
        """Add a tool result's bytes; raise if the total passed the byte limit."""
        self.bytes += n
        lim = self.limits.bytes
        if lim is not None and self.bytes > lim:
            raise BudgetExceeded("bytes", self.bytes, lim)

    def usage(self) -> Usage:
        """A frozen snapshot of consumption so far."""
        return Usage(self.model_calls, self.tool_calls, self.tokens, self.bytes,
                     self.input_tokens, self.output_tokens)

    def headroom(self) -> dict[str, int | None]:
        """Remaining allowance per kind (never negative); ``None`` where unlimited."""
        lim = self.limits
        return {
            "model_calls": _left(lim.model_calls, self.model_calls),
            "tool_calls": _left(lim.tool_calls, self.tool_calls),
            "tokens": _left(lim.tokens, self.tokens),
            "bytes": _left(lim.bytes, self.bytes),
        }


def _left(limit: int | None, used: int) -> int | None:
    return None if limit is None else max(limit - used, 0)
