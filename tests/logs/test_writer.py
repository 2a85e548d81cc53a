"""LogWriter: one line per result as it comes, the caller's wall time when it measured one."""

from __future__ import annotations

from pathlib import Path

from harness_lab.logs import read_log
from harness_lab.logs.writer import LogWriter, sha256_of
from harness_lab.runner.results import ResultSet


def test_each_result_is_on_disk_as_soon_as_it_is_added(library: ResultSet,
                                                        tmp_path: Path) -> None:
    writer = LogWriter.open(tmp_path, "run", ["harness-lab", "run"])
    writer.add(library[0], wall_s=1.5)
    writer.add(library[1])
    interrupted = read_log(writer.path)  # before the footer: what a kill would leave
    assert [e.scenario for e in interrupted.entries] == [library[0].scenario,
                                                         library[1].scenario]
    assert interrupted.entries[0].wall_s == 1.5
    assert not interrupted.complete
    writer.close()
    done = read_log(writer.path)
    assert done.complete and done.footer is not None and done.footer["runs"] == 2


def test_the_file_hash_is_the_sha256_of_its_bytes(library: ResultSet, tmp_path: Path) -> None:
    import hashlib

    path = library[0].path
    assert path is not None
    assert sha256_of(path) == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    assert sha256_of(tmp_path / "missing") is None


def test_a_log_opened_at_the_first_result_counts_its_times_from_when_the_command_began(
        library: ResultSet, tmp_path: Path) -> None:
    import time
    from datetime import UTC, datetime, timedelta

    writer = LogWriter.open(tmp_path, "run", ["harness-lab", "run"],
                            began=time.perf_counter() - 30.0)
    writer.add(library[0])
    writer.close()
    log = read_log(writer.path)
    started = datetime.fromisoformat(log.header["started_at"].replace("Z", "+00:00"))
    assert timedelta(seconds=29) < datetime.now(UTC) - started < timedelta(seconds=60)
    assert log.entries[0].wall_s >= 30.0
    assert log.footer is not None and 30.0 <= log.footer["wall_s"] < 60.0


def test_an_entry_copied_from_another_log_is_renumbered_and_counted(
        library: ResultSet, tmp_path: Path) -> None:
    first = LogWriter.open(tmp_path / "a", "pytest")
    first.add(library[0], wall_s=0.5)
    first.add(library[1], wall_s=0.25)
    first.close()
    import json

    entries = [json.loads(line) for line in first.path.read_text(encoding="utf-8").splitlines()
               if '"kind":"run"' in line]
    second = LogWriter.open(tmp_path / "b", "pytest")
    second.add(library[2], wall_s=1.0)
    for entry in entries:
        second.add_entry(entry)
    second.close()
    log = read_log(second.path)
    assert [(e.seq, e.scenario, e.wall_s) for e in log.entries] == [
        (0, library[2].scenario, 1.0), (1, library[0].scenario, 0.5),
        (2, library[1].scenario, 0.25)]
    assert log.footer is not None and log.footer["runs"] == 3
    assert sum(log.footer["verdicts"].values()) == 3
