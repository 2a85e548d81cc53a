"""``harness-lab run`` writes a run log by default; --log-dir, the environment, --no-log."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.logs import read_log
from harness_lab.logs.options import LOG_DIR_ENV, log_dir_problem

OUTCOMES = str(Path(__file__).resolve().parents[2] / "scenarios" / "outcomes")


def test_run_writes_one_log_into_harness_logs_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    assert main(["run", OUTCOMES, "--format", "csv"]) == 0
    logs = list((tmp_path / "harness_logs").glob("*_run_*.jsonl"))
    assert len(logs) == 1
    assert f"log: harness_logs/{logs[0].name}" in capsys.readouterr().err
    log = read_log(logs[0])
    assert log.complete and len(log.entries) == 13
    assert log.header["command"] == ["harness-lab", "run", OUTCOMES, "--format", "csv"]
    assert log.footer is not None and log.footer["verdicts"] == {"ok": 13}


def test_log_dir_and_the_environment_choose_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "from-env"))
    assert main(["run", f"{OUTCOMES}/missing-context.yaml", "-q", "--format", "csv"]) == 0
    assert main(["run", f"{OUTCOMES}/missing-context.yaml", "-q", "--format", "csv",
                 "--log-dir", "given/nested"]) == 0
    assert len(list((tmp_path / "from-env").glob("*.jsonl"))) == 1
    assert len(list((tmp_path / "given" / "nested").glob("*.jsonl"))) == 1


def test_no_log_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    assert main(["run", f"{OUTCOMES}/missing-context.yaml", "-q", "--format", "csv",
                 "--no-log"]) == 0
    assert not (tmp_path / "harness_logs").exists()


def test_a_log_dir_that_is_a_file_is_a_usage_error_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    assert main(["run", OUTCOMES, "--log-dir", "taken/logs"]) == 2
    err = capsys.readouterr().err
    assert "harness-lab run: --log-dir taken/logs: taken is not a directory" in err
    assert "scenario run(s)" not in err


def test_a_selection_that_runs_nothing_leaves_no_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", OUTCOMES, "--tag", "no-such-tag", "--log-dir", "logs"]) == 5
    assert not (tmp_path / "logs").exists()


def test_a_dangling_log_directory_link_is_a_usage_error_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    (tmp_path / "harness_logs").symlink_to(tmp_path / "gone" / "logs")
    assert main(["run", OUTCOMES]) == 2
    err = capsys.readouterr().err
    assert (f"--log-dir harness_logs is a link to {tmp_path / 'gone' / 'logs'}, which does "
            "not exist") in err
    assert not (tmp_path / "gone").exists()


def test_a_log_directory_the_kernel_refuses_is_found_by_trying(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(LOG_DIR_ENV, "/proc/harness-lab-logs")
    assert main(["run", OUTCOMES]) == 2
    assert "--log-dir /proc/harness-lab-logs: cannot write in /proc" in capsys.readouterr().err


def test_checking_a_log_directory_leaves_nothing_behind(tmp_path: Path) -> None:
    assert log_dir_problem(tmp_path / "new" / "deeper") is None
    assert log_dir_problem(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_log_dir_problem_names_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert log_dir_problem(tmp_path / "file") == f"--log-dir {tmp_path / 'file'} is not a " \
                                                 "directory"
    assert log_dir_problem(tmp_path / "new" / "deeper") is None


def test_a_log_that_cannot_be_written_is_said_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.logs.options import RunLog
    from harness_lab.runner.run import run_paths

    results = run_paths([f"{OUTCOMES}/missing-context.yaml"])
    log = RunLog(tmp_path / "logs", "run", ["harness-lab", "run"])
    (tmp_path / "logs").write_text("a file took the directory's place", encoding="utf-8")
    log.add(results[0])
    log.add(results[0])
    assert log.close() is None
    assert log.failed is not None and log.failed.startswith(str(tmp_path / "logs"))
    err = capsys.readouterr().err
    assert err.count("harness-lab run: cannot write the run log") == 1
    assert "the runs go on without it" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_writer_on_a_full_disk_raises_rather_than_claiming_a_log() -> None:
    from harness_lab.logs.writer import LogWriter

    full = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 (closed below)
    try:
        with pytest.raises(OSError) as caught:
            LogWriter(Path("/dev/full"), full, ["harness-lab", "run"])
    finally:
        with contextlib.suppress(OSError):  # the unwritten header is flushed again
            full.close()
    assert caught.value.strerror == "No space left on device"


def _file_size_limited_to(limit: int) -> None:
    """In the child: files it writes stop growing at ``limit`` bytes, as on a full disk (a
    write past it fails with EFBIG instead of killing the process)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_run_whose_log_stopped_being_writable_exits_1_though_every_run_passed(
        tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "harness_lab", "run", f"{OUTCOMES}/missing-context.yaml",
         "--format", "csv", "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
        preexec_fn=lambda: _file_size_limited_to(600))
    assert done.stdout.splitlines()[1].startswith("missing-context,")
    assert "cannot write the run log" in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"log: not written ({tmp_path}/")
    assert done.stderr.splitlines()[-1].endswith(": File too large)")
    assert done.returncode == 1, done.stderr
