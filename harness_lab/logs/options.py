"""The log options of the commands that run scenarios (``--log-dir``, ``--no-log``) and the
hook they call with each result. Light to import: the writer loads on the first result.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from harness_lab.logs.writer import LogWriter
    from harness_lab.runner.run import ScenarioResult

__all__ = ["DEFAULT_LOG_DIR", "LOG_DIR_ENV", "RunLog", "add_log_options", "log_dir_problem",
           "log_directory", "run_log"]

DEFAULT_LOG_DIR = "harness_logs"
"""Where logs go unless ``--log-dir`` or :data:`LOG_DIR_ENV` says otherwise."""

LOG_DIR_ENV = "HARNESS_LAB_LOG_DIR"
"""The environment variable naming the log directory."""


def log_directory(given: str | os.PathLike[str] | None = None) -> Path:
    """The log directory: ``given``, else ``$HARNESS_LAB_LOG_DIR``, else ``./harness_logs``."""
    return Path(given if given is not None else os.environ.get(LOG_DIR_ENV) or DEFAULT_LOG_DIR)


def add_log_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--log-dir DIR`` and ``--no-log`` to a command's parser."""
    parser.add_argument("--log-dir", metavar="DIR",
                        help=f"write the run log (JSON Lines, see docs/logs.md) into DIR "
                             f"(default: ${LOG_DIR_ENV}, else ./{DEFAULT_LOG_DIR}; created "
                             "when missing)")
    parser.add_argument("--no-log", action="store_true", help="write no run log")


def log_dir_problem(directory: Path) -> str | None:
    """Why a log cannot be written into ``directory`` (which may not exist yet), or None.

    Tried for real, leaving nothing behind: a file is made and removed in the directory, or,
    when it does not exist yet, a directory in its nearest existing parent (permissions alone
    say too little: root may write anywhere the kernel refuses, such as ``/proc``).
    """
    if directory.is_symlink() and not directory.exists():
        return f"--log-dir {directory} is a link to {os.readlink(directory)}, which does not exist"
    if directory.exists() and not directory.is_dir():
        return f"--log-dir {directory} is not a directory"
    existing = directory
    while not existing.exists():
        if existing.parent == existing or existing.is_symlink():
            break
        existing = existing.parent
    if existing.is_symlink() and not existing.exists():
        return f"--log-dir {directory}: {existing} is a link to a place that does not exist"
    if existing.exists() and not existing.is_dir():
        return f"--log-dir {directory}: {existing} is not a directory"
    try:
        if existing == directory:
            with tempfile.TemporaryFile(dir=directory, prefix=".harness-lab-probe-"):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".harness-lab-probe-"))
    except OSError as exc:
        return f"--log-dir {directory}: cannot write in {existing}: {exc.strerror or exc}"
    return None


class RunLog:
    """The log of one command: opened on the first result, so a command that runs nothing
    leaves no file; :meth:`close` writes the footer. A ``directory`` of None is decided then
    (see :func:`log_directory`).

    A log that cannot be written (the disk full, the directory gone) never stops the runs:
    the failure is said once on standard error, logging stops, :attr:`failed` holds the
    reason and :meth:`close` returns None (the partial file, if any, has no footer).
    """

    def __init__(self, directory: Path | None, command: str, argv: list[str],
                 part: str | None = None) -> None:
        self.directory = directory
        self.command = command
        self.argv = argv
        self.part = part  # names the file of one part of a log (a pytest-xdist worker's)
        self.writer: LogWriter | None = None
        self.failed: str | None = None
        self.began = time.perf_counter()  # the footer's wall time counts from here

    def add(self, result: ScenarioResult, wall_s: float | None = None) -> None:
        """Log one scenario result (``wall_s``: its wall time, when the caller measured it)."""
        self._append(lambda writer: writer.add(result, wall_s))

    def add_entry(self, entry: dict[str, Any]) -> None:
        """Log one run entry taken from another log (a pytest-xdist worker's)."""
        self._append(lambda writer: writer.add_entry(entry))

    def _append(self, write: Callable[[LogWriter], None]) -> None:
        if self.failed is not None:
            return
        try:
            if self.writer is None:
                from harness_lab.logs.writer import LogWriter

                self.writer = LogWriter.open(self.directory, self.command, self.argv,
                                             began=self.began, suffix=self.part)
            write(self.writer)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        where = self.writer.path if self.writer is not None else (
            self.directory or log_directory())
        self.failed = f"{where}: {exc.strerror or exc}"
        print(f"harness-lab {self.command}: cannot write the run log {self.failed}; "
              "the runs go on without it", file=sys.stderr)
        if self.writer is not None:
            self.writer.abandon()

    def close(self, stream: TextIO | None = None) -> Path | None:
        """Write the footer; say where the log is on ``stream``; its path (None: no runs, or
        the log could not be written)."""
        if self.writer is None or self.failed is not None:
            return None
        try:
            path = self.writer.close()
        except OSError as exc:
            self._fail(exc)
            return None
        if stream is not None:
            print(f"log: {path}", file=stream)
        return path


def run_log(command: str, args: argparse.Namespace) -> RunLog | int | None:
    """The log hook of ``harness-lab COMMAND`` given its parsed ``args``: None under
    ``--no-log``, or 2 (a usage error, printed) when the directory cannot be written.

    The log's header records ``args.argv``, the words ``main`` parsed.
    """
    if getattr(args, "no_log", False):
        return None
    directory = log_directory(getattr(args, "log_dir", None))
    problem = log_dir_problem(directory)
    if problem:
        print(f"harness-lab {command}: {problem} (or give --no-log)", file=sys.stderr)
        return 2
    return RunLog(directory, command, ["harness-lab", *getattr(args, "argv", sys.argv[1:])])
