"""LogWriter: appends one JSON line per scenario run to a run log, then a footer of totals.

The header is written when the log is opened, each run as soon as it is judged (one
``write`` and a flush per line), the footer on :meth:`LogWriter.close`. A process killed
midway leaves a log without a footer, which :func:`harness_lab.read_log` still reads.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import secrets
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from harness_lab.logs.codec import result_to_data
from harness_lab.logs.options import log_directory
from harness_lab.logs.version import FORMAT_VERSION
from harness_lab.redact import shown_words
from harness_lab.runner.run import ScenarioResult
from harness_lab.version import __version__

__all__ = ["LogWriter", "git_commit", "sha256_of"]


def sha256_of(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of a scenario file's bytes (hex), or None when it cannot be read.

    The file is read as the loader reads it (:func:`~harness_lab.scenarios.safe_yaml.
    read_source`): a FIFO or a device named like a scenario never hangs or floods the log
    writer, and a file the loader refuses has no hash."""
    from harness_lab.scenarios.safe_yaml import SourceError, read_source

    try:
        text = read_source(Path(path))
    except SourceError:
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git_commit(where: str | os.PathLike[str] = ".", *, short: bool = False) -> str | None:
    """The commit checked out at ``where`` (its short hash with ``short``), or None outside
    a git work tree."""
    import subprocess

    try:
        command = ["git", "-C", str(where), "rev-parse", *(["--short"] if short else []), "HEAD"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def _now(ago_s: float = 0.0) -> str:
    """The UTC time ``ago_s`` seconds before now, as the log writes times."""
    when = datetime.now(UTC) - timedelta(seconds=ago_s)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class LogWriter:
    """One run log being written. Use :meth:`open`, :meth:`add` each result, :meth:`close`."""

    def __init__(self, path: Path, stream: IO[str], command: list[str],
                 began: float | None = None) -> None:
        self.path = path
        self._stream = stream
        self._sha256 = functools.cache(sha256_of)  # each scenario file hashed once
        self._verdicts: Counter[str] = Counter()
        self._virtual = 0.0
        self._runs = 0
        self._began = self._last = time.perf_counter() if began is None else began
        self._write({"kind": "header", "format_version": FORMAT_VERSION,
                     "toolkit_version": __version__, "command": command,
                     "cwd": os.getcwd(), "git_commit": git_commit(Path.cwd()),
                     "python": platform.python_version(), "platform": sys.platform,
                     "started_at": _now(time.perf_counter() - self._began)})

    @classmethod
    def open(cls, directory: str | os.PathLike[str] | None, command: str,
             argv: list[str] | None = None, *, began: float | None = None,
             suffix: str | None = None) -> LogWriter:
        """Create a new log file in ``directory`` (see :func:`log_directory`), named by the
        wall-clock time and ``command`` (``2026-12-04T05-01-02_run_3fa2c1.jsonl``).

        ``argv`` is recorded with the password of each URL in it hidden
        (:func:`~harness_lab.redact.shown_url`). The directory is created when missing;
        raise OSError when it cannot be (a file of that name, no permission), before any
        scenario runs. ``began`` (a :func:`time.perf_counter` value) is when the command
        began, from which the footer's wall time counts (default: now). ``suffix`` ends the
        file's name in place of six random hex digits.
        """
        folder = log_directory(directory)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        path = folder / f"{stamp}_{command}_{suffix or secrets.token_hex(3)}.jsonl"
        stream = open(path, "x", encoding="utf-8")  # noqa: SIM115 (closed by close())
        return cls(path, stream, ["harness-lab", command] if argv is None else shown_words(argv),
                   began)

    def _write(self, line: dict[str, Any]) -> None:
        self._stream.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._stream.flush()

    def add(self, result: ScenarioResult, wall_s: float | None = None) -> None:
        """Append one scenario result; its wall time is ``wall_s`` when the caller measured
        it, else the time since the previous one (or since the log was opened)."""
        now = time.perf_counter()
        wall, self._last = (now - self._last if wall_s is None else wall_s), now
        r = result.record
        self.add_entry({**result_to_data(result),
                        "sha256": None if result.path is None else self._sha256(result.path),
                        "wall_s": wall,
                        "virtual_s": None if r is None else r.finished_at - r.started_at})

    def add_entry(self, entry: dict[str, Any]) -> None:
        """Append one run entry as a log holds it (from another log: a pytest-xdist worker's),
        numbered as this log's next run."""
        line: dict[str, Any] = {"kind": "run", "seq": self._runs}
        line.update((key, value) for key, value in entry.items() if key not in line)
        self._write(line)
        self._runs += 1
        self._verdicts[entry["verdict"]] += 1
        self._virtual += entry.get("virtual_s") or 0.0

    def close(self) -> Path:
        """Write the footer and close the file; return its path."""
        if not self._stream.closed:
            self._write({"kind": "footer", "finished_at": _now(), "runs": self._runs,
                         "verdicts": dict(self._verdicts),
                         "ok": not (self._verdicts["FAILED"] or self._verdicts["ERROR"]),
                         "wall_s": time.perf_counter() - self._began,
                         "virtual_s": self._virtual})
            self._stream.close()
        return self.path

    def abandon(self) -> None:
        """Close the file without a footer (a write failed); errors closing it are dropped."""
        try:
            self._stream.close()
        except OSError:
            pass

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:  # interrupted: the log stays without a footer, as a killed process leaves it
            self.abandon()
