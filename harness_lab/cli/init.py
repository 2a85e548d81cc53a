"""``harness-lab init [DIR]``: write the starter scenario directory of
:mod:`harness_lab.scaffold`; nothing that exists is overwritten."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness_lab.cli.common import EXIT_USAGE, exit_codes
from harness_lab.scaffold import scaffold

__all__ = ["register"]


def _cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.directory)
    if target.exists() and not target.is_dir():
        print(f"harness-lab init: {target} is a file; give a directory", file=sys.stderr)
        return EXIT_USAGE
    try:
        written = scaffold(target)
    except FileExistsError as exc:
        print(f"harness-lab init: would overwrite {exc}; nothing written", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"harness-lab init: cannot write {target}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {len(written)} files to {target}; next: harness-lab run {target}")
    return 0


def register(sub: Any) -> None:
    """Add ``harness-lab init``."""
    p = sub.add_parser("init", help="create a starter scenario directory to copy from",
                       epilog=exit_codes("init"))
    p.add_argument("directory", nargs="?", default="scenarios",
                   help="the directory to create or fill (default: scenarios)")
    p.set_defaults(func=_cmd_init)
