"""A child harness-lab process ends with the process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness_lab.parent_watch import PARENT_ENV, watch_parent_named_in, watched_by_this_process

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "outcomes" / "conclusion-guards-pass.yaml"

_PARENT = """
import sys, time
from pathlib import Path
from harness_lab.live.conform_suite import ServeProcess
from harness_lab.scenarios import load_file
[loaded] = load_file(sys.argv[1])
serve = ServeProcess(loaded.scenario, "http://127.0.0.1:9", f"sqlite:///{sys.argv[2]}/runs.db",
                     time_scale=1.0, workdir=Path(sys.argv[2]))
serve.start()
print(serve.process.pid, flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (an unreaped zombie counts as exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.live
@pytest.mark.slow
def test_a_serve_started_by_conform_ends_when_conform_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(SCENARIO), str(tmp_path)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    serve_pid = None
    try:
        assert parent.stdout is not None
        serve_pid = int(parent.stdout.readline())
        assert not _gone(serve_pid)
        parent.send_signal(signal.SIGKILL)  # no finally block of the parent runs
        parent.wait(10)
        deadline = time.monotonic() + 10
        while not _gone(serve_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(serve_pid), "the serve outlived the process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if parent.stdout is not None:
            parent.stdout.close()
        if serve_pid is not None and not _gone(serve_pid):  # the failure above: clean up
            os.kill(serve_pid, signal.SIGKILL)


def test_the_variable_names_this_process_and_whether_it_started_from_its_main_thread() -> None:
    assert watched_by_this_process() == {PARENT_ENV: f"{os.getpid()}:main"}
    seen: list[dict[str, str]] = []
    worker = threading.Thread(target=lambda: seen.append(watched_by_this_process()))
    worker.start()
    worker.join()
    assert seen == [{PARENT_ENV: str(os.getpid())}]


def test_without_a_parent_named_nothing_is_watched() -> None:
    assert watch_parent_named_in({}) is False
    assert watch_parent_named_in({PARENT_ENV: "not-a-pid"}) is False
