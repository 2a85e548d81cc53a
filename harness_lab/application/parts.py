"""RunParts: everything one run is given, bound to the run when it is submitted.

A harness's runs share its environment, store and provider capacity; everything else a run
reads while it executes (components, configuration, ledger, latency model, boundary probe,
SSE send hook, interceptor) is the run's own, so runs with different parts may overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from harness_lab.application.components import Components
from harness_lab.application.intercept import Interceptor, intercepted, intercepted_ledger
from harness_lab.config import HarnessConfig
from harness_lab.core.context import BoundaryProbe, LatencyModel
from harness_lab.frozen import value_class
from harness_lab.sse import SendHook
from harness_lab.tools.ledger import Ledger

__all__ = ["RunParts"]


@dataclass(frozen=True, slots=True, init=False)
class RunParts:
    """The parts of one run: what it calls, is configured with and is watched by.

    ``interceptor`` sees every port call of the run (see
    :mod:`harness_lab.application.intercept`); :meth:`bound` puts its adapters in front of
    the components and the ledger once, when the run is submitted.
    """

    components: Components
    config: HarnessConfig
    ledger: Ledger
    latency: LatencyModel | None = None
    probe: BoundaryProbe | None = None
    before_send: SendHook | None = None
    interceptor: Interceptor | None = None

    def __init__(self, components: Components, config: HarnessConfig, ledger: Ledger,
                 latency: LatencyModel | None = None, probe: BoundaryProbe | None = None,
                 before_send: SendHook | None = None,
                 interceptor: Interceptor | None = None) -> None:
        """Set every field (a native setter each, once compiled)."""
        object.__setattr__(self, "components", components)
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "ledger", ledger)
        object.__setattr__(self, "latency", latency)
        object.__setattr__(self, "probe", probe)
        object.__setattr__(self, "before_send", before_send)
        object.__setattr__(self, "interceptor", interceptor)

    def with_(self, **changes: Any) -> RunParts:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def bound(self) -> RunParts:
        """The parts as the run calls them: with an interceptor, the components and ledger
        behind its adapters (and no interceptor left to apply); else these parts."""
        via = self.interceptor
        if via is None:
            return self
        return RunParts(intercepted(self.components, via), self.config,
                        intercepted_ledger(self.ledger, via), self.latency, self.probe,
                        self.before_send)


value_class(RunParts)  # see frozen.py
