"""The fault explorer and the property search.

:func:`explore` runs a base scenario once, enumerates every boundary, SSE event and virtual
time gap it passed, injects every applicable fault there (one variant each), and judges each
variant against the outcome table of SPEC §4 (:mod:`harness_lab.explore.oracle`) and the
lifecycle invariants. :func:`search` generates whole scenarios with hypothesis and shrinks
one that breaks an invariant or ends outside the table to a minimal reproducer.

Names are imported lazily, so the command line does not load pandas, matplotlib or
hypothesis (a test extra) before a subcommand needs them.
"""

from __future__ import annotations

from harness_lab.lazy import on_first_use

_EXPORTS = {
    "BaseRun": "boundaries", "BoundaryState": "boundaries", "ExplorationError": "boundaries",
    "Gap": "boundaries", "SseSend": "boundaries", "record_base": "boundaries",
    "Variant": "variants", "enumerate_variants": "variants",
    "Observed": "oracle", "Prescription": "oracle", "judge": "oracle",
    "legal_rows": "oracle", "prescribe": "oracle",
    "FRAME_COLUMNS": "explorer", "ExplorationResult": "explorer", "Finding": "explorer",
    "explore": "explorer",
    "SearchResult": "property_search", "property_failures": "property_search",
    "search": "property_search",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = on_first_use(
    __name__, globals(), {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()})
