"""The ``sweep:`` block of a scenario file: distributions, stochastic faults, grids, load.

.. code-block:: yaml

    sweep:
      latency:
        model: {lognormal: {median: 1.0, sigma: 0.5}}
        tool: {uniform: [0.5, 3.0]}
        guard: {fixed: 0.5}
        router: {empirical: [0.1, 0.2, 0.4]}
      faults:
        tool_error_p: 0.05
        provider_error_p: {model: 0.01, guard: 0.02}
        no_gain_p: 0.1
        disconnect: {p: 0.1, at_s: {uniform: [0, 10]}}
      grid:
        config.deadline_s: [5, 10, 30]
      load:
        arrival_rate: [0.5, 1.0, 2.0]
        capacity: {model: 4, tool: 8}
        duration_s: 300
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Distribution", "LoadSpec", "StochasticFaults", "SweepBlock", "TimedFault"]

_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every float finite
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Capacity = dict[str, Annotated[int, Field(ge=1)]]


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
        allowed = {"router", "model", "guard", "repair", "responder", "retriever"}
        unknown = set(self.provider_error_p) - allowed
        if unknown:
            raise ValueError(f"provider_error_p: unknown call kind(s) {sorted(unknown)}; "
                             f"allowed: {sorted(allowed)}")
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
        allowed = {"router", "model", "guard", "repair", "responder", "retriever", "tool"}
        unknown = {k for c in self.capacities() for k in c} - allowed
        if unknown:
            raise ValueError(f"capacity: unknown call kind(s) {sorted(unknown)}")
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
        allowed = {"router", "model", "guard", "repair", "responder", "retriever", "tool"}
        unknown = set(self.latency) - allowed
        if unknown:
            raise ValueError(f"latency: unknown call kind(s) {sorted(unknown)}")
        for key, values in self.grid.items():
            if not values:
                raise ValueError(f"grid.{key} needs at least one value")
        return self
