"""An output is written whole or not at all: a failed write leaves the file as it was."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness_lab.atomic import replacing, write_atomically
from tests.report.test_html import current_umask

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def test_a_write_replaces_the_whole_file_keeps_its_mode_and_leaves_no_temporary(
        tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old", encoding="utf-8")
    path.chmod(0o640)
    write_atomically(path, "new content")
    assert path.read_text(encoding="utf-8") == "new content"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path: Path) -> None:
    write_atomically(tmp_path / "plot.png", b"\x89PNG")
    assert (tmp_path / "plot.png").read_bytes() == b"\x89PNG"
    assert (tmp_path / "plot.png").stat().st_mode & 0o777 == 0o666 & ~current_umask()


def test_a_block_that_raises_leaves_the_old_file_byte_identical_and_no_temporary(
        tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text('{"kept": [1]}', encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        with replacing(path) as handle:
            handle.write('{"kept": [1, 2')
            raise KeyboardInterrupt
    assert path.read_text(encoding="utf-8") == '{"kept": [1]}'
    assert [p.name for p in tmp_path.iterdir()] == ["records.json"]


def test_a_write_through_a_symbolic_link_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink() and link.resolve() == real
    assert real.read_bytes() == b"new"


def test_a_directory_in_the_way_is_an_error_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomically(tmp_path / "out", "text")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_missing_directory_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "out.csv", "a,b\n")
    assert list(tmp_path.iterdir()) == []


def _small_files() -> None:
    """In the child: files may grow to 4 KiB, and a write past it fails (EFBIG) rather than
    killing the process, as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["run", str(SCENARIOS), "--format", "json", "--out", "{out}", "--no-log"],
    ["sweep", str(Path(__file__).resolve().parent.parent / "benchmarks" / "canonical.yaml"),
     "--samples", "300", "--keep-every", "1", "--records-out", "{out}", "--no-log"],
], ids=["run --out", "sweep --records-out"])
def test_an_output_that_cannot_be_written_whole_is_said_and_the_old_one_is_kept(
        command: list[str], tmp_path: Path) -> None:
    out = tmp_path / "previous.json"
    out.write_text('{"previous": true}', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "harness_lab",
                           *[part.format(out=out) for part in command]],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          preexec_fn=_small_files)
    assert done.returncode != 0
    assert "File too large" in done.stderr and str(out) in done.stderr
    assert out.read_text(encoding="utf-8") == '{"previous": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["previous.json"]
