"""What the command-line tests share: a one-scenario library, and running ``harness-lab`` in a
process of its own (in a pipe or on a pseudo-terminal)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenarios import MISSING_CONTEXT, WRONG_EXPECTATION

ROOT = Path(__file__).resolve().parents[2]

GOOD, WRONG = MISSING_CONTEXT, WRONG_EXPECTATION


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A directory holding one scenario file, ``good.yaml``, that passes."""
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    return tmp_path


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
            ) -> subprocess.CompletedProcess[str]:
    """``harness-lab ARGS`` run to its end with its output in pipes, no terminal width or
    colour setting inherited unless ``env`` sets one."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "harness_lab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**base, "HARNESS_LAB_PURE": "1", **(env or {})})


def on_a_terminal(*args: str) -> str:
    """Run the command with standard error on a pseudo-terminal; return what it drew."""
    import pty

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "harness_lab.cli", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=follower,
                            env={**env, "HARNESS_LAB_PURE": "1", "COLUMNS": "100"})
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    proc.wait(timeout=300)
    os.close(leader)
    return drawn.decode(errors="replace")


def subparsers() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, by name, each fully built."""
    from harness_lab.cli.dispatch import build_parser

    [action] = [a for a in build_parser()._actions
                if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)
