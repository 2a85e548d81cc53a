"""Run logs: every run's whole observation kept as JSON Lines, read back as records.

``harness-lab run`` writes one log per invocation to ``./harness_logs/`` (see
:func:`log_directory`); :func:`read_log` reads one back into the same scenario results,
RunRecords and DataFrames a live run gives. The format is described in ``docs/logs.md`` and
by :func:`log_schema`. Names are imported on first use, so the command line's option
helpers (:mod:`harness_lab.logs.options`) load nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
    from harness_lab.logs.options import DEFAULT_LOG_DIR, LOG_DIR_ENV, log_directory
    from harness_lab.logs.reader import Log, LogEntry, LogError, read_log
    from harness_lab.logs.schema import log_schema
    from harness_lab.logs.version import FORMAT_VERSION
    from harness_lab.logs.writer import LogWriter

_EXPORTS = {
    "DEFAULT_LOG_DIR": "harness_lab.logs.options", "FORMAT_VERSION": "harness_lab.logs.version",
    "LOG_DIR_ENV": "harness_lab.logs.options", "Log": "harness_lab.logs.reader",
    "LogEntry": "harness_lab.logs.reader", "LogError": "harness_lab.logs.reader",
    "LogWriter": "harness_lab.logs.writer", "log_directory": "harness_lab.logs.options",
    "log_schema": "harness_lab.logs.schema", "read_log": "harness_lab.logs.reader",
}

__all__ = ["DEFAULT_LOG_DIR", "FORMAT_VERSION", "LOG_DIR_ENV", "Log", "LogEntry", "LogError",
           "LogWriter", "log_directory", "log_schema", "read_log"]


__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)
