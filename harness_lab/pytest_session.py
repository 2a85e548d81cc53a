"""Which process of a pytest session does what under pytest-xdist: the workers run the
scenario items, the controller gathers what they hand over when each worker ends."""

from __future__ import annotations

from typing import Any

__all__ = ["distributing", "handed_over"]


def distributing(config: Any) -> bool:
    """True in the controller of a pytest-xdist session: its workers run the items."""
    if hasattr(config, "workerinput") or config.getoption("collectonly", False):
        return False
    return config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))


def handed_over(config: Any) -> dict[str, Any] | None:
    """What a pytest-xdist worker hands its controller when it ends (None: not a worker)."""
    return getattr(config, "workeroutput", None)
