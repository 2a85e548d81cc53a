"""``harness-lab init [DIR]``: write the starter scenario directory of
:mod:`harness_lab.scaffold`; nothing that exists is overwritten."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness_lab.cli.common import add_command, fail, filled
from harness_lab.scaffold import scaffold
from harness_lab.terminal.console import width_of

__all__ = ["register"]


def _cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.directory)
    if target.exists() and not target.is_dir():
        return fail("init", f"{target} is a file; give a directory")
    try:
        written = scaffold(target)
    except FileExistsError as exc:
        return fail("init", f"would overwrite {exc}; nothing written")
    except OSError as exc:
        return fail("init", f"cannot write {target}: {exc.strerror or exc}")
    print(f"wrote {len(written)} files to {target}; next: harness-lab run {target}")
    if "scenarios" not in target.resolve().parts:
        print(filled(f"note: pytest collects scenario files below a directory named "
                     f"scenarios, so `pytest {target}` collects none of these; name them "
                     f"(pytest {target}/*.yaml) or call the directory scenarios",
                     min(width_of(sys.stdout), 100), "  "))
    return 0


def register(sub: Any) -> None:
    """Add ``harness-lab init``."""
    p = add_command(sub, "init", func=_cmd_init)
    p.add_argument("directory", nargs="?", default="scenarios",
                   help="the directory to create or fill (default: scenarios)")
