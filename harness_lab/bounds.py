"""The range of integers the run store keeps (SQLite's signed 64-bit integers), how long a
database server may take to accept a connection, and how often a process that holds a
database (a ``serve``, a persisting sweep) says it is alive, and how long unheard it counts
as gone.

Scenario files, fakes and harness arguments refuse integers outside the range where they are
given.
"""

from __future__ import annotations

__all__ = ["CONNECT_TIMEOUT_S", "HEARTBEAT_S", "INT_MAX", "INT_MIN", "STALE_S"]

INT_MIN = -(1 << 63)
"""The smallest integer the store keeps."""

INT_MAX = (1 << 63) - 1
"""The largest integer the store keeps."""

CONNECT_TIMEOUT_S = 10
"""Seconds a database server may take to accept a connection, for every store and audit
source (unless a PostgreSQL URL sets its own ``connect_timeout``)."""

HEARTBEAT_S = 5.0
"""Seconds between two heartbeats of a process that holds a database: a running ``serve``
(each beat also looks for orphans) and a persisting sweep."""

STALE_S = 30.0
"""A process not heard from for this long is gone: a ``serve``'s RUNNING runs are orphans,
a sweep may be resumed from another host."""
