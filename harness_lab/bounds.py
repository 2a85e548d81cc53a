"""The range of integers the run store keeps (SQLite's signed 64-bit integers), and how long a
database server may take to accept a connection.

Scenario files, fakes and harness arguments refuse integers outside the range where they are
given.
"""

from __future__ import annotations

__all__ = ["CONNECT_TIMEOUT_S", "INT_MAX", "INT_MIN"]

INT_MIN = -(1 << 63)
"""The smallest integer the store keeps."""

INT_MAX = (1 << 63) - 1
"""The largest integer the store keeps."""

CONNECT_TIMEOUT_S = 10
"""Seconds a database server may take to accept a connection, for every store and audit
source (unless a PostgreSQL URL sets its own ``connect_timeout``)."""
