"""The range of integers the run store keeps: SQLite's signed 64-bit integers.

Scenario files, fakes and harness arguments refuse integers outside it where they are given.
"""

from __future__ import annotations

__all__ = ["INT_MAX", "INT_MIN"]

INT_MIN = -(1 << 63)
"""The smallest integer the store keeps."""

INT_MAX = (1 << 63) - 1
"""The largest integer the store keeps."""
