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
