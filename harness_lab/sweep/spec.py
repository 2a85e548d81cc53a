"""The ``sweep:`` block of a scenario file: distributions, stochastic faults, grids, load.

docs/sweeps.md ("The ``sweep:`` block") shows one with every field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Distribution", "LoadSpec", "StochasticFaults", "SweepBlock", "TimedFault"]

_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every float finite
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Capacity = dict[str, Annotated[int, Field(ge=1)]]
_CALLS = frozenset({"router", "model", "guard", "repair", "responder", "retriever", "tool"})
_PROVIDER_CALLS = _CALLS - {"tool"}


def _known(what: str, kinds: Iterable[str], allowed: frozenset[str], more: str = "") -> None:
    """Raise ValueError naming the call kinds among ``kinds`` that ``allowed`` lacks."""
    unknown = set(kinds) - allowed
    if unknown:
        raise ValueError(f"{what}: unknown call kind(s) {sorted(unknown)}{more}")


class LogNormal(BaseModel):
    """A lognormal latency: ``median`` seconds and the log-space ``sigma``."""

    model_config = _STRICT
    median: float = Field(gt=0)
    sigma: float = Field(ge=0)


class Distribution(BaseModel):
    """One of: ``fixed: x``, ``uniform: [a, b]``, ``lognormal: {median, sigma}``,
    ``empirical: [x1, x2, ...]`` (each value equally likely)."""

    model_config = _STRICT
    fixed: float | None = Field(None, ge=0)
    uniform: tuple[float, float] | None = None
    lognormal: LogNormal | None = None
    empirical: list[Annotated[float, Field(ge=0)]] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one(self) -> Distribution:
        given = [k for k in ("fixed", "uniform", "lognormal", "empirical")
                 if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a distribution is exactly one of fixed, uniform, lognormal, "
                             f"empirical; got {given or 'none'}")
        if self.uniform is not None and not 0 <= self.uniform[0] <= self.uniform[1]:
            raise ValueError("uniform needs 0 <= low <= high")
        return self


class TimedFault(BaseModel):
    """A fault that happens with probability ``p`` at a time drawn from ``at_s``."""

    model_config = _STRICT
    p: Probability
    at_s: Distribution


class StochasticFaults(BaseModel):
    """Per-call and per-run fault probabilities."""

    model_config = _STRICT
    tool_error_p: Probability = 0.0
    provider_error_p: dict[str, Probability] = {}
    no_gain_p: Probability = 0.0
    disconnect: TimedFault | None = None
    cancel: TimedFault | None = None

    @model_validator(mode="after")
    def _kinds(self) -> StochasticFaults:
        _known("provider_error_p", self.provider_error_p, _PROVIDER_CALLS,
               f"; allowed: {sorted(_PROVIDER_CALLS)}")
        return self


class LoadSpec(BaseModel):
    """Many sessions in one environment, arriving by a Poisson process, sharing providers."""

    model_config = _STRICT
    arrival_rate: list[Annotated[float, Field(gt=0)]] = Field(min_length=1)
    # one concurrency limit per call kind, or a list of them to compare
    capacity: Capacity | list[Capacity] = {}
    duration_s: float = Field(300.0, gt=0)

    def capacities(self) -> list[dict[str, int]]:
        """Every capacity setting to run."""
        return list(self.capacity) if isinstance(self.capacity, list) else [self.capacity]

    @model_validator(mode="after")
    def _kinds(self) -> LoadSpec:
        _known("capacity", (k for c in self.capacities() for k in c), _CALLS)
        return self


class SweepBlock(BaseModel):
    """What a sweep varies around the scenario it belongs to."""

    model_config = _STRICT
    latency: dict[str, Distribution] = {}
    faults: StochasticFaults = StochasticFaults()
    grid: dict[str, list[Any]] = {}
    load: LoadSpec | None = None

    @model_validator(mode="after")
    def _kinds(self) -> SweepBlock:
        _known("latency", self.latency, _CALLS)
        for key, values in self.grid.items():
            if not values:
                raise ValueError(f"grid.{key} needs at least one value")
        return self
