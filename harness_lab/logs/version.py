"""The run log format's version, kept apart so writing a log never builds the schema models."""

from __future__ import annotations

__all__ = ["FORMAT_VERSION"]

FORMAT_VERSION = 1
"""The version of the log format this toolkit writes (and the highest it reads)."""
