"""Per-sample randomness: latency distributions and sampled faults, from one seeded stream.

Each sample owns a ``random.Random`` seeded from ``(seed, grid point, sample index)``, so a
sample's draws do not depend on which worker runs it or in which order. Seeding a Mersenne
Twister costs more than many whole runs' draws, so a :class:`SampleStream` seeds its
generator on the first draw: a sample that draws nothing (fixed latencies, no sampled
faults) never pays for it, and one that draws gets the very same stream.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from harness_lab.errors import ProviderError, ToolExecutionError
from harness_lab.ports import CallKind, ToolOutput
from harness_lab.sweep.spec import Distribution, StochasticFaults
from harness_lab.tools.records import CanonicalInvocation

__all__ = ["Draws", "SampleLatency", "SampleStream", "SampledFaults", "compile_distribution",
           "sample_rng", "sampled_faults"]


class Draws(Protocol):
    """What a distribution draws from: a ``random.Random`` or a :class:`SampleStream`."""

    def random(self) -> float:
        """The next float in [0, 1)."""
        ...

    def uniform(self, a: float, b: float) -> float:
        """A float between ``a`` and ``b``."""
        ...

    def lognormvariate(self, mu: float, sigma: float) -> float:
        """A log-normal draw."""
        ...


Sampler = Callable[[Draws], float]


def sample_rng(seed: int, grid_index: int, sample_index: int) -> random.Random:
    """The independent random stream of one sample (string seeding is stable across runs)."""
    return random.Random(f"harness_lab/{seed}/{grid_index}/{sample_index}")


class SampleStream:
    """One sample's random stream, its generator made on the first draw.

    ``SampleStream(seed, grid, sample)`` gives :func:`sample_rng`'s stream of that sample
    (and :meth:`restart` another sample's); :meth:`wrapping` adopts a generator that already
    exists (the load model shares one).
    """

    __slots__ = ("_seed", "_grid", "_sample", "_rng")

    def __init__(self, seed: int, grid_index: int, sample_index: int) -> None:
        self._seed = seed
        self._grid = grid_index
        self._sample = sample_index
        self._rng: random.Random | None = None

    def restart(self, sample_index: int) -> None:
        """Become the stream of sample ``sample_index`` (the same seed and grid point), from
        its first draw: what ``SampleStream(seed, grid_index, sample_index)`` gives."""
        self._sample = sample_index
        self._rng = None

    @classmethod
    def wrapping(cls, rng: random.Random) -> SampleStream:
        """A stream that draws from ``rng``."""
        stream = cls(0, 0, 0)
        stream._rng = rng
        return stream

    def rng(self) -> random.Random:
        """The generator, seeded now if nothing has drawn from it yet."""
        rng = self._rng
        if rng is None:
            rng = self._rng = sample_rng(self._seed, self._grid, self._sample)
        return rng

    @property
    def seeded(self) -> bool:
        """True once the generator exists (something drew from the stream)."""
        return self._rng is not None

    def random(self) -> float:
        """The next float in [0, 1)."""
        return self.rng().random()

    def uniform(self, a: float, b: float) -> float:
        """A float uniformly drawn between ``a`` and ``b``."""
        return self.rng().uniform(a, b)

    def lognormvariate(self, mu: float, sigma: float) -> float:
        """A log-normal draw (``mu`` and ``sigma`` of the underlying normal)."""
        return self.rng().lognormvariate(mu, sigma)


def compile_distribution(d: Distribution) -> Sampler:
    """A function drawing one value of ``d`` from a stream."""
    if d.fixed is not None:
        value = d.fixed
        return lambda rng: value
    if d.uniform is not None:
        low, high = d.uniform
        return lambda rng: rng.uniform(low, high)
    if d.lognormal is not None:
        mu, sigma = math.log(d.lognormal.median), d.lognormal.sigma
        return lambda rng: rng.lognormvariate(mu, sigma)
    assert d.empirical is not None
    values = tuple(d.empirical)
    return lambda rng: values[int(rng.random() * len(values))]


class SampleLatency:
    """LatencyModel: draws from the sweep's distribution of a call kind, else the defaults."""

    __slots__ = ("stream", "samplers", "defaults")

    def __init__(self, stream: SampleStream, samplers: Mapping[CallKind, Sampler],
                 defaults: Mapping[CallKind, float]) -> None:
        self.stream = stream
        # kept as dicts: a dict's lookup is a direct call in the compiled core, a Mapping's a
        # method call
        self.samplers: dict[CallKind, Sampler] = (samplers if type(samplers) is dict
                                                  else dict(samplers))
        self.defaults: dict[CallKind, float] = (defaults if type(defaults) is dict
                                                else dict(defaults))

    def latency(self, kind: CallKind, name: str, reply_latency: float | None) -> float:
        """One call's virtual latency."""
        sampler = self.samplers.get(kind)
        if sampler is not None:
            return sampler(self.stream)  # a fixed value draws nothing
        if reply_latency is not None:
            return reply_latency
        return self.defaults.get(kind, 0.0)


class SampledFaults:
    """Interceptor: provider errors, tool errors and empty tool results drawn per call.

    A provider call fails with its kind's probability, a tool call with ``tool_error_p``,
    and a tool result comes back empty with ``no_gain_p``; a kind whose probability is 0
    draws nothing. Built by :func:`sampled_faults`.
    """

    __slots__ = ("rng", "provider_p", "tool_error_p", "no_gain_p")

    def __init__(self, rng: SampleStream, provider_p: Mapping[str, float], tool_error_p: float,
                 no_gain_p: float) -> None:
        self.rng = rng
        self.provider_p: dict[str, float] = {k: p for k, p in provider_p.items() if p > 0}
        self.tool_error_p = tool_error_p
        self.no_gain_p = no_gain_p

    def call(self, kind: CallKind, name: str, request: Any, proceed: Callable[[Any], Any]
             ) -> Any:
        """The call, or a sampled provider or tool error; a tool's result may come back empty."""
        if kind is CallKind.TOOL:
            if self.tool_error_p and self.rng.random() < self.tool_error_p:
                raise ToolExecutionError("tool backend error (sampled)")
            output: ToolOutput = proceed(request)
            if self.no_gain_p and self.rng.random() < self.no_gain_p:
                output = dataclasses.replace(output, items=(), size_bytes=0)
            return output
        p = self.provider_p.get(kind.value)
        if p is not None and self.rng.random() < p:
            raise ProviderError(f"{kind.value} provider error (sampled)")
        return proceed(request)

    def validate(self, tool: str, scope: Mapping[str, Any],
                 proceed: Callable[[Mapping[str, Any]], str | None]) -> str | None:
        """The tool's own check."""
        return proceed(scope)

    def read_only(self, tool: str, read_only: bool) -> bool:
        """The tool's own flag."""
        return read_only

    def keep(self, stage: str, record: CanonicalInvocation,
             proceed: Callable[[CanonicalInvocation], bool]) -> bool:
        """The ledger's own answer."""
        return proceed(record)

    def persist(self, operation: str, proceed: Callable[[], Any]) -> Any:
        """The store's own answer."""
        return proceed()


def sampled_faults(faults: StochasticFaults, rng: SampleStream) -> SampledFaults | None:
    """The interceptor drawing ``faults``' per-call faults from ``rng`` (None when every
    probability is 0: nothing to intercept)."""
    if not (faults.tool_error_p > 0 or faults.no_gain_p > 0
            or any(p > 0 for p in faults.provider_error_p.values())):
        return None
    return SampledFaults(rng, faults.provider_error_p, faults.tool_error_p, faults.no_gain_p)
