"""The ``harness-lab`` command line: its parser, the table of its commands and :func:`main`.

Each command lives in a module of this package with a ``register(subparsers)``; a command's
module is imported only when that command is named, so ``harness-lab --help`` and
``harness-lab validate`` load no heavy module.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from harness_lab.cli import run
from harness_lab.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    SUMMARIES,
    HelpFormatter,
    fail,
)
from harness_lab.terminal.console import tolerant_streams

__all__ = ["COMMAND_MODULES", "OPTIONAL_MODULES", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """Every parser of the command line: help formatted by :class:`HelpFormatter`; words no
    option takes are reported by the command's own parser (its usage, its name), naming the
    option each misspelt one looks like."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)
        self.commands: Mapping[str, argparse.ArgumentParser] = {}

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: None = None) -> argparse.Namespace:
        known, extra = self.parse_known_args(args, namespace)
        if extra:
            parser = self.commands.get(getattr(known, "command", None) or "", self)
            parser.error(_unrecognized(parser, extra))
        return known


def _unrecognized(parser: argparse.ArgumentParser, words: Sequence[str]) -> str:
    """The error for ``words`` that no option of ``parser`` takes, with the option each
    ``--word`` among them is probably a misspelling of."""
    import difflib

    options = [option for action in parser._actions for option in action.option_strings
               if option.startswith("--")]
    hints = [close for word in words if word.startswith("--")
             for close in difflib.get_close_matches(word.split("=", 1)[0], options, n=1)]
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    return f"unrecognized arguments: {' '.join(words)}{hint}"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand.

    With ``only``, the subcommands of other modules are listed by name and help but not
    imported (``harness-lab --help`` and ``harness-lab validate`` then load no heavy module).
    """
    from harness_lab import __version__

    parser = _Parser(prog="harness-lab",
                     description="Run, check and explore diagnosis-harness scenarios.",
                     epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"harness-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    run.register(sub)
    for name, module in COMMAND_MODULES.items():
        if only is None or only == name:
            register: Callable[[Any], None] = importlib.import_module(module).register
            register(sub)
        else:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)
    parser.commands = sub.choices
    return parser


COMMAND_MODULES = {name: f"harness_lab.cli.{name}" for name in SUMMARIES
                   if name not in run.COMMANDS}
"""The commands :mod:`harness_lab.cli.run` does not add, each with its module (whose
``register(subparsers)`` adds it); ``harness-lab --help`` lists them without importing it."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``harness-lab``."""
    tolerant_streams()
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in words if not word.startswith("-")), None)
    if command is not None and command not in SUMMARIES:
        import difflib

        close = difflib.get_close_matches(command, list(SUMMARIES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        print(f"harness-lab: unknown command {command!r}{hint} (harness-lab --help lists "
              "the commands)", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(only=command or "")
    if not words:  # a bare `harness-lab`: the commands there are, rather than a usage error
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(words)
    args.argv = words  # the command line as typed, which a run log records
    try:
        with _sigterm_as_ctrl_c():
            code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # Ctrl-C where the command does not end on it by itself
        print(f"harness-lab {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        extra = OPTIONAL_MODULES.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        return fail(args.command, f"this needs the optional package {exc.name!r}; install it "
                                  f"with: pip install 'harness_lab[{extra}]'")
    return code


OPTIONAL_MODULES = {"distributed": "dask", "dask": "dask", "nbclient": "notebook",
                    "nbformat": "notebook", "ipykernel": "notebook", "jupyterlab": "notebook",
                    "tqdm": "notebook", "hypothesis": "test", "starlette": "live",
                    "uvicorn": "live", "psycopg": "live", "opentelemetry": "otel"}
"""The optional packages a command may need, and the extra of ``pyproject.toml`` that
installs each: a command missing one ends in one line naming the extra (exit 2)."""


@contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (a supervisor, ``timeout``, a cancelled CI job) stops the command as Ctrl-C
    does, with Python's own Ctrl-C handler: what it has done is said and kept (a sweep's
    summary and how to resume it, its workers stopped), where SIGTERM's own action ends the
    process without a word. A handler installed by a program the command runs inside is
    left alone."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _drop_stdout() -> None:
    """Point standard output at the null device, so the final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # an in-process stream without a file descriptor: nothing is flushed to a pipe
    finally:
        os.close(devnull)
