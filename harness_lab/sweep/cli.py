"""The ``sweep`` subcommand (registered by harness_lab.cli)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add this module's subcommands to ``sub``."""
