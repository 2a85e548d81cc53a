"""The limits a scenario file is held to: what no meaningful scenario comes near.

Every file the loader reads is checked against these numbers before it can cost much time or
memory: a file beyond them is refused with a problem naming the file, line and field, never a
traceback or a hung process. ``docs/scenarios.md`` (section "Limits") lists them for users.
"""

from __future__ import annotations

from harness_lab.bounds import INT_MAX, INT_MIN

__all__ = ["INT_MAX", "INT_MIN", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "MAX_PROBLEMS",
           "MAX_VARIANT_NODES", "MAX_VARIANTS"]

MAX_FILE_BYTES = 1 << 20
"""A scenario file holds at most 1 MiB (the shipped ones hold under 2 KiB)."""

MAX_DEPTH = 40
"""Mappings and lists nest at most 40 levels deep, aliases expanded (the shipped ones: 9)."""

MAX_NODES = 100_000
"""A document holds at most 100,000 values (keys, scalars, lists, mappings), counting each use
of an alias and each merge (``<<``) in full: an alias "bomb" is refused before it expands."""

MAX_VARIANTS = 1_000
"""A ``matrix`` expands to at most 1,000 variants (the product of its axes' lengths)."""

MAX_VARIANT_NODES = 2_000_000
"""Variants times document values at most: each variant is a validated copy of the file."""

MAX_PROBLEMS = 100
"""At most 100 problems of one file are listed; a last line says how many more there are."""
