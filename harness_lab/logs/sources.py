"""Run logs where a command takes scenario paths: ``harness-lab report LOG`` shows a log."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness_lab.bounded_json import parse_json

if TYPE_CHECKING:
    from harness_lab.logs.reader import Log
    from harness_lab.runner.results import ResultSet

__all__ = ["is_log_file", "read_logs", "read_noted"]

_FIRST_LINE_LIMIT = 64 * 1024
"""Bytes of a file's first line read to tell a run log (its header line) from anything else."""


def is_log_file(path: str | Path) -> bool:
    """True when ``path`` is a file whose first line is a run log's header: a JSON object of
    kind ``header`` with a ``format_version`` (however the JSON is spaced)."""
    try:
        with open(path, "rb") as f:
            first = f.read(_FIRST_LINE_LIMIT).split(b"\n", 1)[0]
    except OSError:
        return False
    if not first.lstrip().startswith(b"{"):
        return False
    try:
        header = parse_json(first.decode("utf-8"), source=str(path), line=1, wide_ints=True)
    except ValueError:  # not UTF-8, not JSON, or beyond the bounded reader's limits
        return False
    return (isinstance(header, dict) and header.get("kind") == "header"
            and "format_version" in header)


def read_noted(path: str | Path) -> Log:
    """The run log at ``path`` (:func:`~harness_lab.logs.reader.read_log`), each of its notes
    (a line cut short, a missing footer) said on standard error."""
    from harness_lab.logs.reader import read_log

    log = read_log(path)
    for note in log.notes:
        print(f"{path}: {note}", file=sys.stderr)
    return log


def read_logs(command: str, paths: Sequence[str], tags: Sequence[str] = ()
              ) -> tuple[ResultSet, list[Log]] | int | None:
    """The results kept in ``paths`` when every one is a run log (those with one of ``tags``,
    when given), in order, and the logs read; 2 (a usage error, printed) for a log that
    cannot be read; None when the paths are not all logs (they are scenarios to run)."""
    if not paths or not all(is_log_file(p) for p in paths):
        return None
    from harness_lab.logs.reader import LogError
    from harness_lab.runner.results import ResultSet

    results = ResultSet()
    logs = []
    for path in paths:
        try:
            log = read_noted(path)
        except LogError as exc:
            print(f"harness-lab {command}: {exc}", file=sys.stderr)
            return 2
        logs.append(log)
        results.extend(r for r in log.results if not tags or set(tags) & set(r.tags))
    return results, logs
